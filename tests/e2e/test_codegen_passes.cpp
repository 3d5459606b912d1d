// Code generation passes, checked on what they produce: broadcast stages built once per group
// (schedules/FoldBroadcasts), exact hazards between interleaved row tiles in HBM and column slices
// on chip (neff/Hazards), and the list scheduler's reordering and load order
// (neff/ScheduleInstructions). Their numerics are checked end to
// end by the e2e tests.

#include "TextCases.h"
#include "driver/CopyGroups.h"
#include "neff/Hazards.h"
#include "neff/ScheduleInstructions.h"
#include "support/SmallFloat.h"

#include <doctest/doctest.h>

#include <cmath>
#include <set>

using namespace nhc;
using codegen::SelectedInstr;
using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using test::compile_text;
using test::dmas_reading;
using test::load_text;
using test::random_inputs;

namespace {

AccessPattern hbm_rows(int64_t offset, int64_t row_stride, int rows, int64_t elems) {
    AccessPattern a;
    a.space = neff::MemSpace::HBM;
    a.dtype = neff::DType::BF16;
    a.var = 0;
    a.num_partitions = rows;
    a.partition_step = row_stride;
    a.offset = offset;
    a.dims = {{2, elems}};
    return a;
}

AccessPattern sbuf_tile(int64_t byte_offset) {
    AccessPattern a;
    a.space = neff::MemSpace::SBUF;
    a.dtype = neff::DType::F32;
    a.num_partitions = 128;
    a.offset = byte_offset;
    a.dims = {{1, 64}};
    return a;
}

Instr store(const AccessPattern &dst) {
    Instr i;
    i.op = neff::Opcode::Dma;
    i.dst = dst;
    i.src = sbuf_tile(0);
    return i;
}

SelectedInstr op_on(Engine e, int64_t src, int64_t dst) {
    Instr i;
    i.op = e == Engine::ACT ? neff::Opcode::Activation : neff::Opcode::TensorCopy;
    i.src = sbuf_tile(src);
    i.dst = sbuf_tile(dst);
    return {e, i};
}

} // namespace

TEST_CASE("a Gemm bias and LayerNorm's gamma and beta are loaded once per group, not per tile") {
    // 512 rows = four row tiles of 128 partitions.
    neff::Program p = compile_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[512, 64] x, float[64, 96] w, float[96] b, float[96] gamma, float[96] beta)
    => (float[512, 96] y) {
  m = Gemm(x, w, b)
  y = LayerNormalization <axis = -1> (m, gamma, beta)
}
)");
    CHECK(dmas_reading(p, "b") == 1);
    CHECK(dmas_reading(p, "gamma") == 1);
    CHECK(dmas_reading(p, "beta") == 1);
    CHECK(dmas_reading(p, "x") == 4); // the row tiles themselves still move tile by tile
}

TEST_CASE("interleaved row tiles of one HBM tensor do not depend on each other") {
    // Two column tiles of a [128, 768] bf16 tensor: their rows interleave in memory.
    codegen::HazardTracker h;
    CHECK(h.add(store(hbm_rows(0, 1536, 128, 384)), 0).empty());
    CHECK(h.add(store(hbm_rows(768, 1536, 128, 384)), 1).empty());
    // A store over columns 256..639 meets both.
    CHECK(h.add(store(hbm_rows(512, 1536, 128, 384)), 2) == std::vector<int>{0, 1});
    // Reads of row 5 depend on exactly the stores that wrote their bytes.
    Instr load;
    load.op = neff::Opcode::Dma;
    load.src = hbm_rows(1536 * 5 + 1400, 1536, 1, 8); // columns 700..707: the second tile only
    load.dst = sbuf_tile(4096);
    CHECK(h.add(load, 3) == std::vector<int>{1});
    load.src = hbm_rows(1536 * 5 + 1000, 1536, 1, 8); // columns 500..507: the second and third
    load.dst = sbuf_tile(8192);
    CHECK(h.add(load, 4) == std::vector<int>{1, 2});
}

TEST_CASE("interleaved column slices of one on-chip tile do not depend on each other") {
    // Four transposes' results copied as column slices: chunk c of each partition holds 256 fp32
    // elements; one copy writes elements [0, 64) of every chunk, another [64, 128). Their
    // bounding boxes overlap, their bytes do not.
    auto slices = [](int64_t first_elem) {
        AccessPattern a = sbuf_tile(first_elem * 4);
        a.dims = {{256, 4}, {1, 64}};
        return a;
    };
    Instr first, second, read;
    first.op = second.op = read.op = neff::Opcode::TensorCopy;
    first.src = sbuf_tile(65536);
    first.dst = slices(0);
    second.src = sbuf_tile(65536 + 1024);
    second.dst = slices(64);
    codegen::HazardTracker h;
    CHECK(h.add(first, 0).empty());
    CHECK(h.add(second, 1).empty());
    // A read of chunk 2's elements [64, 128) depends on the second copy only; one of elements
    // [32, 96) of chunk 0 on both.
    read.dst = sbuf_tile(131072);
    read.src = sbuf_tile((2 * 256 + 64) * 4);
    CHECK(h.add(read, 2) == std::vector<int>{1});
    read.dst = sbuf_tile(131072 + 1024);
    read.src = sbuf_tile(32 * 4);
    CHECK(h.add(read, 3) == std::vector<int>{0, 1});
}

TEST_CASE("loads that are ready together go out in the order of the first store that needs them") {
    // Program order: load X, load Y, then the store that needs Y and the store that needs X (an
    // A-resident matmul's root loop loads A's later row tiles before the first column tile's B).
    // Both loads are ready at once on one DMA queue; Y feeds the earlier store, so it goes first.
    auto load = [](int64_t src_offset, int64_t dst) {
        Instr i;
        i.op = neff::Opcode::Dma;
        i.src = hbm_rows(src_offset, 128, 128, 64);
        i.src.var = 1;
        i.dst = sbuf_tile(dst);
        i.queue = 0;
        return SelectedInstr{Engine::SP, i};
    };
    auto store_of = [](int64_t src, int64_t hbm_offset) {
        Instr i;
        i.op = neff::Opcode::Dma;
        i.src = sbuf_tile(src);
        i.dst = hbm_rows(hbm_offset, 128, 128, 64);
        i.queue = 4;
        return SelectedInstr{Engine::POOL, i};
    };
    std::vector<SelectedInstr> out = {load(0, 0), load(1 << 20, 4096), store_of(4096, 0),
                                      store_of(0, 1 << 20)};
    codegen::schedule_instructions(out, target::target_by_name("trn1"));
    auto position = [&](neff::MemSpace dst_space, int64_t offset) {
        for (size_t k = 0; k < out.size(); k++) {
            const AccessPattern &ap =
                out[k].instr.src.space == neff::MemSpace::HBM ? out[k].instr.src : out[k].instr.dst;
            if (out[k].instr.dst.space == dst_space && ap.offset == offset)
                return static_cast<int>(k);
        }
        return -1;
    };
    CHECK(position(neff::MemSpace::SBUF, 1 << 20) < position(neff::MemSpace::SBUF, 0));
    // Each store still follows its load.
    CHECK(position(neff::MemSpace::SBUF, 1 << 20) < position(neff::MemSpace::HBM, 0));
    CHECK(position(neff::MemSpace::SBUF, 0) < position(neff::MemSpace::HBM, 1 << 20));
}

TEST_CASE("at -O2 the instruction scheduler interleaves dependent chains to avoid their overhead") {
    // Two chains of two ACT instructions, each second one reading what the first wrote, in
    // program order.
    std::vector<SelectedInstr> in = {op_on(Engine::ACT, 0, 1024), op_on(Engine::ACT, 1024, 2048),
                                     op_on(Engine::ACT, 4096, 5120),
                                     op_on(Engine::ACT, 5120, 6144)};
    const target::TargetInfo &trn1 = target::target_by_name("trn1");
    double act = codegen::estimated_ns(trn1, Engine::ACT, in[0].instr);
    double overhead = trn1.dependent_overhead / trn1.clock_ghz(Engine::ACT);
    auto order = [](const std::vector<SelectedInstr> &out) {
        std::vector<int64_t> dst;
        for (const SelectedInstr &s : out)
            dst.push_back(s.instr.dst.offset);
        return dst;
    };
    // -O1's schedule: program order, and an estimate without the overhead.
    std::vector<SelectedInstr> o1 = in;
    double e1 = codegen::schedule_instructions(o1, trn1, false);
    CHECK(order(o1) == std::vector<int64_t>{1024, 2048, 5120, 6144});
    CHECK(e1 == doctest::Approx(4 * act));
    // -O2's: the second chain's first step goes between the first chain's two, so that no ACT
    // instruction reads what the one before it wrote, and none pays the overhead.
    std::vector<SelectedInstr> o2 = in;
    double e2 = codegen::schedule_instructions(o2, trn1, true);
    CHECK(order(o2) == std::vector<int64_t>{1024, 5120, 2048, 6144});
    CHECK(e2 == doctest::Approx(4 * act));
    // One chain alone cannot avoid it, and the estimate counts it (as the simulator charges it).
    std::vector<SelectedInstr> one = {in[0], in[1]};
    CHECK(codegen::schedule_instructions(one, trn1, true) == doctest::Approx(2 * act + overhead));
    // An ACT step that waits for DVE, ACT being idle, pays it too: ACT -> DVE -> ACT.
    std::vector<SelectedInstr> across = {op_on(Engine::ACT, 0, 1024),
                                         op_on(Engine::DVE, 1024, 2048),
                                         op_on(Engine::ACT, 2048, 3072)};
    double dve = codegen::estimated_ns(trn1, Engine::DVE, across[1].instr);
    double dve_overhead = trn1.dependent_overhead / trn1.clock_ghz(Engine::DVE);
    CHECK(codegen::schedule_instructions(across, trn1, true) ==
          doctest::Approx(2 * act + dve + dve_overhead + overhead));
}

TEST_CASE("the instruction scheduler overlaps independent chains and keeps every dependency") {
    // Two chains ACT -> DVE -> ACT on separate buffers, in program order.
    std::vector<SelectedInstr> in = {
        op_on(Engine::ACT, 0, 1024),    op_on(Engine::DVE, 1024, 2048),
        op_on(Engine::ACT, 2048, 3072), op_on(Engine::ACT, 4096, 5120),
        op_on(Engine::DVE, 5120, 6144), op_on(Engine::ACT, 6144, 7168)};
    std::vector<SelectedInstr> out = in;
    const target::TargetInfo &trn1 = target::target_by_name("trn1");
    double estimate = codegen::schedule_instructions(out, trn1);
    // The list schedule's estimate is its finish: no less than ACT's four steps one after
    // another, nor than one chain's three; less than all six in a row, since the chains overlap.
    double act = codegen::estimated_ns(trn1, Engine::ACT, in[0].instr),
           dve = codegen::estimated_ns(trn1, Engine::DVE, in[1].instr);
    CHECK(estimate >= 4 * act);
    CHECK(estimate >= 2 * act + dve);
    CHECK(estimate < 4 * act + 2 * dve);
    auto position = [&](int64_t dst_offset) {
        for (size_t k = 0; k < out.size(); k++)
            if (out[k].instr.dst.offset == dst_offset)
                return static_cast<int>(k);
        return -1;
    };
    // The second chain's first ACT step no longer waits behind the first chain's last one.
    CHECK(position(5120) < position(3072));
    // Dependencies hold: each chain's steps stay in order.
    CHECK(position(1024) < position(2048));
    CHECK(position(2048) < position(3072));
    CHECK(position(5120) < position(6144));
    CHECK(position(6144) < position(7168));
    CHECK(out.size() == in.size());
}

namespace {

/** A PE instruction `op` from an SBUF tile at `src` into the PSUM tile at `dst`. */
SelectedInstr pe_op(neff::Opcode op, int64_t src, int64_t dst, bool by_critical_path) {
    Instr i;
    i.op = op;
    i.src = sbuf_tile(src);
    if (op == neff::Opcode::Matmul)
        i.src1 = sbuf_tile(src);
    i.dst = sbuf_tile(dst);
    i.dst.space = neff::MemSpace::PSUM;
    return {Engine::PE, i, by_critical_path};
}

/** A copy on `e` between SBUF/PSUM tiles. */
SelectedInstr copy_on(Engine e, neff::MemSpace from, int64_t src, int64_t dst) {
    SelectedInstr c = op_on(e, src, dst);
    c.instr.src.space = from;
    return c;
}

} // namespace

TEST_CASE("PE instructions in critical-path order: a transpose that later matmuls wait for first") {
    // Program order: two matmuls whose results only an ACT copy reads, then a transpose whose
    // copy out of PSUM (DVE) a third matmul reads: A's next row tile after the current one.
    auto program = [](bool by_critical_path) {
        return std::vector<SelectedInstr>{
            pe_op(neff::Opcode::Matmul, 0, 0, by_critical_path),
            copy_on(Engine::ACT, neff::MemSpace::PSUM, 0, 8192),
            pe_op(neff::Opcode::Matmul, 1024, 2048, by_critical_path),
            copy_on(Engine::ACT, neff::MemSpace::PSUM, 2048, 9216),
            pe_op(neff::Opcode::Transpose, 2048, 4096, by_critical_path),
            copy_on(Engine::DVE, neff::MemSpace::PSUM, 4096, 12288),
            pe_op(neff::Opcode::Matmul, 12288, 6144, by_critical_path),
            copy_on(Engine::ACT, neff::MemSpace::PSUM, 6144, 16384)};
    };
    auto pe_order = [](const std::vector<SelectedInstr> &out) {
        std::vector<neff::Opcode> ops;
        for (const SelectedInstr &s : out)
            if (s.engine == Engine::PE)
                ops.push_back(s.instr.op);
        return ops;
    };
    const target::TargetInfo &trn1 = target::target_by_name("trn1");
    using neff::Opcode;
    std::vector<SelectedInstr> in_order = program(false);
    double plain = codegen::schedule_instructions(in_order, trn1, true);
    CHECK(pe_order(in_order) ==
          std::vector<Opcode>{Opcode::Matmul, Opcode::Matmul, Opcode::Transpose, Opcode::Matmul});
    std::vector<SelectedInstr> by_path = program(true);
    double ranked = codegen::schedule_instructions(by_path, trn1, true);
    CHECK(pe_order(by_path) ==
          std::vector<Opcode>{Opcode::Transpose, Opcode::Matmul, Opcode::Matmul, Opcode::Matmul});
    // The DVE copy runs beside the first matmuls rather than after them: the program ends sooner.
    CHECK(ranked < plain);
}

namespace {

/** Instructions `op` on engine `e` (of the node named `node`, if given). */
int count_op(const neff::Program &p, Engine e, neff::Opcode op, const std::string &node = "") {
    int count = 0;
    for (const Instr &i : p.stream(e))
        count += i.op == op && (node.empty() || i.name == node) ? 1 : 0;
    return count;
}

} // namespace

TEST_CASE("a batched matmul of one tile per head loads its operands once per outer batch item") {
    // Attention's score product: 2 batches x 4 heads, each a [64, 32] x [32, 64] tile.
    neff::Program p = compile_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4, 64, 32] q, float[2, 4, 32, 64] k) => (float[2, 4, 64, 64] s) {
  s = MatMul(q, k)
}
)");
    CHECK(dmas_reading(p, "q") == 2);
    CHECK(dmas_reading(p, "k") == 2);
}

TEST_CASE("single-input work is shared between ACT and DVE; reduction inits are not emitted") {
    neff::Program p = compile_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1024, 512] x) => (float[1024, 512] y, float[1024, 1] r) <float two = {2.0}> {
  y = Mul(x, two)
  r = ReduceMax <axes = [-1]> (x)
}
)");
    int on_act = count_op(p, Engine::ACT, neff::Opcode::Activation, "Mul_0");
    int on_dve = count_op(p, Engine::DVE, neff::Opcode::TensorScalar, "Mul_0");
    CHECK(on_act > 0);
    CHECK(on_dve > 0);
    CHECK(on_act + on_dve == 8); // one per row tile of y
    CHECK(count_op(p, Engine::DVE, neff::Opcode::Memset) == 0);
    CHECK(count_op(p, Engine::DVE, neff::Opcode::TensorReduce) == 8);
}

TEST_CASE("attention's probabilities stay on chip: scores, Softmax and P·V are one group") {
    neff::Program p = compile_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 64, 32] q, float[1, 2, 32, 64] k, float[1, 2, 64, 32] v)
    => (float[1, 2, 64, 32] o) <float scale = {8.0}> {
  s = MatMul(q, k)
  d = Div(s, scale)
  pr = Softmax <axis = -1> (d)
  o = MatMul(pr, v)
}
)");
    int dmas = 0;
    for (const auto &stream : p.streams)
        for (const Instr &i : stream)
            if (i.op == neff::Opcode::Dma) {
                dmas++;
                for (const AccessPattern *a : {&i.src, &i.dst})
                    if (a->space == neff::MemSpace::HBM)
                        CHECK(p.vars.at(static_cast<size_t>(a->var)).name != "pr");
            }
    CHECK(dmas == 5); // q, k and v once per batch item (1), o once per head tile (2)
    // The softmax's sum is the exp activation's own accumulation, one per head.
    int accumulating = 0, add_reduces = 0;
    for (const Instr &i : p.stream(Engine::ACT))
        accumulating += i.op == neff::Opcode::Activation && i.accum.present() ? 1 : 0;
    for (const Instr &i : p.stream(Engine::DVE))
        add_reduces += i.op == neff::Opcode::TensorReduce && i.alu0 == neff::AluOp::Add ? 1 : 0;
    CHECK(accumulating == 2);
    CHECK(add_reduces == 0);
}

TEST_CASE("attention with heads folded into the batch reads its operands through the MatMuls, "
          "and matches") {
    // Stable Diffusion's einsum attention as the front end decomposes it (frontend/
    // DecomposeEinsum.h): [1, s, h, d] -> Transpose -> Reshape [h, s, d] -> MatMul, and back.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 2, 32] qh, float[1, 64, 2, 32] kh, float[1, 64, 2, 32] vh)
    => (float[1, 64, 2, 32] o) <int64[3] s3 = {2, 64, 32}, int64[4] s4 = {1, 2, 64, 32}> {
  qt = Transpose <perm = [0, 2, 1, 3]> (qh)
  q = Reshape(qt, s3)
  kt = Transpose <perm = [0, 2, 1, 3]> (kh)
  k = Reshape(kt, s3)
  ktt = Transpose <perm = [0, 2, 1]> (k)
  vt = Transpose <perm = [0, 2, 1, 3]> (vh)
  v = Reshape(vt, s3)
  sc = MatMul(q, ktt)
  pr = Softmax <axis = -1> (sc)
  ov = MatMul(pr, v)
  o4 = Reshape(ov, s4)
  o = Transpose <perm = [0, 2, 1, 3]> (o4)
}
)");
    // Nothing is copied through HBM for a Transpose: the only tensor written there is o, and q,
    // k and v are each read once, by the attention's own loads.
    neff::Program p = test::compile_graph(g);
    std::set<std::string> written;
    for (const auto &stream : p.streams)
        for (const Instr &i : stream)
            if (i.op == neff::Opcode::Dma && i.dst.space == neff::MemSpace::HBM)
                written.insert(p.vars.at(static_cast<size_t>(i.dst.var)).name);
    CHECK(written == std::set<std::string>{"o"});
    for (const char *in : {"qh", "kh", "vh"})
        CHECK(test::bytes_read_from(p, in) == 64 * 2 * 32 * 4);
    CHECK(test::worst_rel_l2(g, random_inputs(g, 9), {"o"}, 1e-4, 1e-5) <= 1e-5);
}

TEST_CASE("a residual and LayerNorm over rows wider than a PSUM bank join the Gemm, and match") {
    // N = 768: two column tiles of 384 per row tile; the LayerNorm runs on the whole rows.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256, 64] x, float[64, 768] w, float[768] b, float[256, 768] r, float[768] gamma,
   float[768] beta) => (float[256, 768] y) {
  m = Gemm(x, w, b)
  s = Add(m, r)
  y = LayerNormalization <axis = -1> (s, gamma, beta)
}
)";
    Graph g = load_text(text);
    std::map<std::string, HostTensor> inputs = random_inputs(g, 2);
    HostTensor want = alg::run_reference(g, inputs).at("y");
    test::E2EResult got = test::compile_and_run(g, inputs);
    test::Comparison cmp = test::compare(got.outputs.at("y"), want, 1e-3, 1e-4);
    CHECK(cmp.rel_l2 <= 1e-5);
    neff::Program p = compile_text(text);
    CHECK(dmas_reading(p, "s") == 0); // the residual sum never reaches HBM
    CHECK(dmas_reading(p, "r") == 2); // one per row tile: whole rows
}

TEST_CASE("at -O2 a residual Add read through unit-axis views of a Gemm (ViT's attention output) "
          "joins the Gemm's group, and matches") {
    // [S, E] -> [S, 1, E] -> Transpose(1, 0, 2) (unit axes only: a view at -O2) -> + residual.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[96, 64] x, float[64, 128] w, float[128] b, float[1, 96, 128] r) => (float[1, 96, 128] y)
    <int64[3] s = {96, 1, 128}> {
  m = Gemm(x, w, b)
  v = Reshape(m, s)
  t = Transpose <perm = [1, 0, 2]> (v)
  y = Add(t, r)
}
)");
    CompileOptions o;
    o.optlevel = 2;
    neff::Program p = test::compile_graph(g, o);
    // The Gemm's output never reaches HBM: its tiles are the Add's operand on chip.
    for (const neff::Variable &var : p.vars)
        CHECK(!(var.kind == neff::VarKind::Scratch && var.name == "m"));
    CHECK(dmas_reading(p, "m") == 0);
    CHECK(test::worst_rel_l2(g, random_inputs(g, 4), {"y"}, 1e-4, 1e-5) <= 1e-6);
}

TEST_CASE("a matmul's result over a constant (attention's scores over sqrt(d)) is scaled on its "
          "way out of PSUM, one instruction per tile; matches") {
    // The MatMul's result is computed inline into the Div (schedules/DefaultSchedule): the Div's
    // instruction reads the accumulator, where a copy out of PSUM and a scale were two.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 128, 64] q, float[4, 64, 128] k, float[4, 128, 128] m) => (float[4, 128, 128] y)
    <float eight = {8.0}> {
  s = MatMul(q, k)
  d = Div(s, eight)
  y = Add(d, m)
}
)");
    neff::Program p = test::compile_graph(g);
    std::set<int64_t> accumulators; // q's PE transposes land in PSUM too: not counted
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        if (i.op == neff::Opcode::Matmul)
            accumulators.insert(i.dst.offset);
    int from_psum = 0, scaled = 0;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream) {
            if (i.op == neff::Opcode::Matmul || i.op == neff::Opcode::Transpose ||
                i.op == neff::Opcode::Dma || i.src.space != neff::MemSpace::PSUM ||
                !accumulators.count(i.src.offset))
                continue;
            from_psum++;
            bool act_scale = i.op == neff::Opcode::Activation && !i.s0.is_ap && i.s0.imm == 0.125f;
            bool dve_divide = i.op == neff::Opcode::TensorScalar && !i.s0.is_ap &&
                              ((i.alu0 == neff::AluOp::Divide && i.s0.imm == 8.0f) ||
                               (i.alu0 == neff::AluOp::Mult && i.s0.imm == 0.125f));
            scaled += act_scale || dve_divide;
        }
    CHECK(from_psum == 4); // one output tile per batch item
    CHECK(scaled == from_psum);
    CHECK(test::worst_rel_l2(g, random_inputs(g, 6), {"y"}, 1e-4, 1e-5) <= 1e-6);
}

TEST_CASE("a Transpose that merges heads back is written by its producer, and matches") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4, 64, 32] q, float[2, 4, 32, 64] k, float[2, 4, 64, 32] v) => (float[2, 64, 4, 32] o) {
  s = MatMul(q, k)
  pr = Softmax <axis = -1> (s)
  c = MatMul(pr, v)
  o = Transpose <perm = [0, 2, 1, 3]> (c)
}
)";
    Graph g = load_text(text);
    std::map<std::string, HostTensor> inputs = random_inputs(g, 3);
    HostTensor want = alg::run_reference(g, inputs).at("o");
    test::E2EResult got = test::compile_and_run(g, inputs);
    CHECK(test::compare(got.outputs.at("o"), want, 1e-3, 1e-4).rel_l2 <= 1e-5);
    neff::Program p = compile_text(text);
    for (const neff::Variable &v : p.vars)
        CHECK(v.name != "c"); // the untransposed context never reaches HBM
}

TEST_CASE("a linear layer of channels transposed to the last axis reads them as stored, and "
          "matches") {
    // sd_unet_64's attention input: [1, C, H*W] transposed to [1, H*W, C] for its Q/K/V layer.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 256, 192] x, float[256, 320] w) => (float[1, 192, 320] y) {
  t = Transpose <perm = [0, 2, 1]> (x)
  y = MatMul(t, w)
}
)";
    Graph g = load_text(text);
    CHECK(test::worst_rel_l2(g, random_inputs(g, 5), {"y"}, 1e-3, 1e-4) <= 1e-5);
    // x arrives with K (its channels) outer, as the PE takes it: no HBM copy of the Transpose,
    // no PE transposes.
    neff::Program p = compile_text(text);
    for (const neff::Variable &v : p.vars)
        CHECK(v.name != "t");
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        CHECK(i.op != neff::Opcode::Transpose);
}

TEST_CASE("a Concat of large inputs is copied through SBUF on all partitions, a small one HBM to "
          "HBM; both match") {
    // A UNet decoder's skip connection: channels concatenated, 256 KiB per input.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 32, 32] a, float[1, 32, 32, 32] b, float[1, 1, 8] c, float[1, 2, 8] d)
    => (float[1, 96, 32, 32] y, float[1, 3, 8] z) {
  y = Concat <axis = 1> (a, b)
  z = Concat <axis = 1> (c, d)
}
)";
    Graph g = load_text(text);
    std::map<std::string, HostTensor> inputs = random_inputs(g, 11);
    auto want = alg::run_reference(g, inputs);
    test::E2EResult got = test::compile_and_run(g, inputs);
    for (const char *out : {"y", "z"})
        CHECK(test::compare(got.outputs.at(out), want.at(out), 0, 0).max_abs_err == 0);
    neff::Program p = compile_text(text);
    int y = p.var_index("y"), z = p.var_index("z"), to_y = 0, to_z = 0;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream) {
            if (i.op != neff::Opcode::Dma)
                continue;
            if (i.dst.var == y) { // stored from SBUF tiles of all the partitions
                CHECK(i.src.space == neff::MemSpace::SBUF);
                CHECK(i.src.num_partitions == 128);
                to_y++;
            }
            if (i.dst.var == z) {
                CHECK(i.src.space == neff::MemSpace::HBM);
                to_z++;
            }
        }
    CHECK(to_y >= 2);
    CHECK(to_z == 2);
}

TEST_CASE("a Concat staged through SBUF leaves the region kept for the next group's weights") {
    // At -O3 a group may keep a region for the next one's weights (neff/OnChipAllocator.h); a
    // Concat compiled between them neither uses that region nor forgets it.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 32, 32] a, float[1, 32, 32, 32] b) => (float[1, 96, 32, 32] y) {
  y = Concat <axis = 1> (a, b)
}
)");
    neff::Program p;
    for (const char *name : {"a", "b", "y"}) {
        neff::Variable v;
        v.name = name;
        v.shape = g.value(name).shape;
        p.vars.push_back(v);
    }
    std::vector<codegen::SelectedInstr> out;
    const int64_t kept = 96 * 1024;
    codegen::AllocationHistory history;
    history.kept_offset = 0;
    history.kept_bytes = kept;
    codegen_copies::CopyTarget t{g, p, [&](const std::string &v) { return p.var_index(v); }, out};
    t.target = &target::target_by_name("trn1");
    t.sbuf_history = &history;
    codegen_copies::concat(t, g.nodes.at(0));
    int staged = 0;
    for (const codegen::SelectedInstr &s : out)
        for (const neff::AccessPattern *ap : {&s.instr.src, &s.instr.dst})
            if (ap->space == neff::MemSpace::SBUF) {
                CHECK(ap->offset >= kept);
                staged++;
            }
    CHECK(staged >= 4); // a load and a store per input at least
    CHECK(history.kept_offset == 0);
    CHECK(history.kept_bytes == kept);
}

TEST_CASE("an Expand along the last axis ends the compute chain of its [R, 1] input; matches") {
    // A GroupNorm's group means spread over each group's rows (graph/GroupNorm): the sums, their
    // scaling and the spread are one group; the means never reach HBM.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[32, 24] s) => (float[32, 24] y)
    <int64[1] last = {1}, float inv = {0.25}, int64[2] spread = {32, 24}> {
  t = ReduceSum <keepdims = 1> (s, last)
  m = Mul(t, inv)
  y = Expand(m, spread)
}
)";
    Graph g = load_text(text);
    CHECK(test::worst_rel_l2(g, random_inputs(g, 17), {"y"}, 1e-5, 1e-6) <= 1e-6);
    neff::Program p = compile_text(text);
    CHECK(p.var_index("t") < 0);
    CHECK(p.var_index("m") < 0);
}

TEST_CASE("a wide bf16 matmul output is stored once per row tile, in whole rows") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256, 64] x, float[64, 1024] w1, float[1024, 64] w2) => (float[256, 64] y) {
  h = MatMul(x, w1)
  y = MatMul(h, w2)
}
)";
    Graph g = load_text(text);
    std::map<std::string, HostTensor> inputs = random_inputs(g, 4);
    CompileOptions bf16;
    bf16.auto_cast = "matmult";
    HostTensor want = alg::run_reference(g, inputs).at("y");
    test::E2EResult got = test::compile_and_run(g, inputs, bf16);
    CHECK(test::compare(got.outputs.at("y"), want, 1e-2, 1e-2).rel_l2 <= 2e-2);
    apply_graph_passes(g, bf16);
    bf16.keep_resident = false; // h's stores, which residency drops, are what is checked
    neff::Program p = generate_program(g, bf16);
    int h_stores = 0;
    for (const auto &stream : p.streams)
        for (const Instr &i : stream)
            if (i.op == neff::Opcode::Dma && i.dst.space == neff::MemSpace::HBM &&
                p.vars.at(static_cast<size_t>(i.dst.var)).name == "h")
                h_stores++;
    CHECK(h_stores == 2); // [128, 1024] bf16 rows, not four [128, 512] column tiles
}

TEST_CASE("softmax's exp(x - max) is one ACT instruction, the max negated into its bias") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1024, 512] x) => (float[1024, 512] y) {
  y = Softmax <axis = -1> (x)
}
)";
    neff::Program p = compile_text(text);
    int exp_with_bias = 0;
    for (const Instr &i : p.stream(Engine::ACT))
        exp_with_bias +=
            i.op == neff::Opcode::Activation && i.func == neff::ActFunc::Exp && i.s1.is_ap ? 1 : 0;
    CHECK(exp_with_bias == 8); // one per row tile
    Graph g = load_text(text);
    HostTensor x(DType::Float32, {1024, 512});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, 4 * std::sin(0.7 * double(i)));
    HostTensor want = alg::run_reference(g, {{"x", x}}).at("y");
    test::E2EResult got = test::compile_and_run(g, {{"x", x}});
    CHECK(test::compare(got.outputs.at("y"), want, 1e-5, 1e-6).rel_l2 <= 1e-5);
}

TEST_CASE("a LayerNorm's variance squares x - mean in one ACT instruction; no copy goes unread") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1024, 512] x, float[512] gamma, float[512] beta) => (float[1024, 512] y) {
  y = LayerNormalization <axis = -1> (x, gamma, beta)
}
)";
    neff::Program p = compile_text(text);
    // Per row tile, x - mean is computed once for the normalisation and, unless the variance
    // is one ACT Square of x with -mean as its bias (its sum the activation's accumulation),
    // once for the variance. Lowering x * x used to compute it once more, for nothing.
    auto centred = [](const Instr &i) {
        if (i.dst.free_count() != 512)
            return false;
        if (i.op == neff::Opcode::Activation)
            return i.func == neff::ActFunc::Copy && i.s1.is_ap;
        return i.op == neff::Opcode::TensorScalar && i.s0.is_ap &&
               (i.alu0 == neff::AluOp::Subtract || i.alu0 == neff::AluOp::Add);
    };
    int squares = 0, subtractions = 0;
    for (Engine e : {Engine::ACT, Engine::DVE})
        for (const Instr &i : p.stream(e)) {
            squares += i.op == neff::Opcode::Activation && i.func == neff::ActFunc::Square &&
                       i.s1.is_ap && i.accum.present();
            subtractions += centred(i);
        }
    CHECK(squares > 0);
    CHECK(subtractions == 8 + (8 - squares));
    Graph g = load_text(text);
    std::map<std::string, HostTensor> inputs = random_inputs(g, 3);
    HostTensor want = alg::run_reference(g, inputs).at("y");
    test::E2EResult got = test::compile_and_run(g, inputs);
    CHECK(test::compare(got.outputs.at("y"), want, 1e-4, 1e-5).rel_l2 <= 1e-5);
}

TEST_CASE("on-chip allocation rotates across groups: the next group's buffers are elsewhere") {
    neff::Program p = compile_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 64] x, float[64, 256] w1, float[64, 256] w2) => (float[128, 256] a,
    float[128, 256] b) {
  a = MatMul(x, w1)
  b = MatMul(x, w2)
}
)");
    std::map<std::string, int64_t> first_load; // per group: the lowest SBUF offset it loads into
    for (const Instr &i : p.stream(Engine::SP))
        if (i.op == neff::Opcode::Dma && i.dst.space == neff::MemSpace::SBUF) {
            auto it = first_load.find(i.name);
            if (it == first_load.end() || i.dst.offset < it->second)
                first_load[i.name] = i.dst.offset;
        }
    REQUIRE(first_load.size() == 2);
    CHECK(first_load.begin()->second != std::next(first_load.begin())->second);
}

TEST_CASE("tf32 auto-cast: operand tiles are tf32, weights stay 4 bytes, results within tf32") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256, 64] x, float[64, 128] w) => (float[256, 128] y) {
  y = MatMul(x, w)
}
)";
    Graph g = load_text(text);
    std::map<std::string, HostTensor> inputs = random_inputs(g, 5);
    CompileOptions tf32;
    tf32.auto_cast = "matmult";
    tf32.auto_cast_type = "tf32";
    HostTensor want = alg::run_reference(g, inputs).at("y");
    test::E2EResult got = test::compile_and_run(g, inputs, tf32);
    double err = test::compare(got.outputs.at("y"), want, 1e-2, 1e-2).rel_l2;
    CHECK(err <= 2e-3); // 10 mantissa bits: ~4e-4 here; bf16 (7 bits) gives ~3e-3
    CHECK(err > 1e-6);  // and the operands were rounded
    apply_graph_passes(g, tf32);
    neff::Program p = generate_program(g, tf32);
    int tf32_matmuls = 0;
    for (const Instr &i : p.stream(Engine::PE))
        if (i.op == neff::Opcode::Matmul)
            tf32_matmuls += i.src.dtype == neff::DType::TF32 && i.src1.dtype == neff::DType::TF32;
    CHECK(tf32_matmuls == 2);
}

namespace {

CompileOptions fp8_options() {
    CompileOptions fp8;
    fp8.auto_cast = "matmult";
    fp8.auto_cast_type = "fp8_e4m3";
    return fp8;
}

/** Compiles and runs `g` with fp8 weights and checks output `y` against two references: `g`
 *  itself, and `g` with each of `weights` as fp8 stores it (w / s rounded to fp8, times
 *  s = max|w| / 240). The second differs only by the activations' bf16 rounding; the first by
 *  fp8's three mantissa bits too. */
void check_fp8_against_references(const Graph &g, const std::vector<std::string> &weights,
                                  const std::map<std::string, HostTensor> &inputs) {
    Graph dequantized = g;
    for (const std::string &name : weights) {
        const HostTensor &w = *g.value(name).constant;
        const float scale = float(w.largest_magnitude()) / 240.0f;
        auto d = std::make_shared<HostTensor>(DType::Float32, w.shape());
        for (int64_t e = 0; e < w.numel(); e++)
            d->set_f64(e,
                       double(fp8e4m3_to_f32(f32_to_fp8e4m3(float(w.get_f64(e)) / scale)) * scale));
        dequantized.values.at(name).constant = d;
    }
    HostTensor exact = alg::run_reference(g, inputs).at("y");
    HostTensor stored = alg::run_reference(dequantized, inputs).at("y");
    test::E2EResult got = test::compile_and_run(g, inputs, fp8_options());
    double err_stored = test::compare(got.outputs.at("y"), stored, 1e-1, 1e-1).rel_l2;
    double err_exact = test::compare(got.outputs.at("y"), exact, 1e-1, 1e-1).rel_l2;
    CHECK(err_stored < 1e-2);
    CHECK(err_exact > 2.0 * err_stored);
}

/** Each input of `magnitude` made a constant (a weight) of that magnitude, smooth and signed. */
void make_weights(Graph &g, const std::map<std::string, double> &magnitude) {
    for (const auto &[name, m] : magnitude) {
        Value &w = g.values.at(name);
        auto t = std::make_shared<HostTensor>(DType::Float32, w.shape);
        for (int64_t e = 0; e < t->numel(); e++)
            t->set_f64(e, m * std::sin(0.37 * double(e) + m));
        w.constant = t;
        g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), name));
    }
}

int fp8_weight_count(const neff::Program &p) {
    int n = 0;
    for (const neff::Variable &v : p.vars)
        n += v.kind == neff::VarKind::Weight && v.dtype == neff::DType::FP8E4M3;
    return n;
}

} // namespace

TEST_CASE("fp8 auto-cast: linear layers' weights are fp8 in HBM and on the PE, each with its "
          "own scale") {
    // The two middle layers are one workload (bf16 in, bf16 out), lowered once, but each
    // weight's scale (25x apart here) must reach its own layer's evacuation.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x, float[256, 256] w1, float[256, 256] w2, float[256, 256] w3,
   float[256, 256] w4) => (float[128, 256] y) {
  h1 = MatMul(x, w1)
  h2 = MatMul(h1, w2)
  h3 = MatMul(h2, w3)
  y = MatMul(h3, w4)
}
)");
    const std::map<std::string, double> magnitude = {
        {"w1", 0.05}, {"w2", 0.5}, {"w3", 0.02}, {"w4", 0.05}};
    make_weights(g, magnitude);
    std::map<std::string, HostTensor> inputs = random_inputs(g, 3);
    Graph passed = g;
    apply_graph_passes(passed, fp8_options());
    for (const auto &[name, m] : magnitude)
        REQUIRE(passed.value(name + "__fp8e4m3").dtype == DType::Float8E4M3);
    check_fp8_against_references(g, {"w1", "w2", "w3", "w4"}, inputs);
    // In the program: four 1-byte weights, and every matmul takes one as stored beside bf16.
    neff::Program p = generate_program(passed, fp8_options());
    CHECK(fp8_weight_count(p) == 4);
    int matmuls = 0, mixed = 0;
    for (const Instr &i : p.stream(Engine::PE))
        if (i.op == neff::Opcode::Matmul) {
            matmuls++;
            mixed +=
                (i.src.dtype == neff::DType::FP8E4M3) != (i.src1.dtype == neff::DType::FP8E4M3);
        }
    CHECK(matmuls > 0);
    CHECK(mixed == matmuls);
}

TEST_CASE("fp8 auto-cast: convolution weights are fp8 with their own scale, applied with the "
          "bias in one pass out of PSUM") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 16, 12, 12] x, float[32, 16, 3, 3] w1, float[32] b1, float[16, 32, 3, 3] w2)
    => (float[1, 16, 12, 12] y) {
  h = Conv <pads = [1, 1, 1, 1]> (x, w1, b1)
  r = Relu(h)
  y = Conv <pads = [1, 1, 1, 1]> (r, w2)
}
)");
    const std::map<std::string, double> magnitude = {{"w1", 0.1}, {"b1", 0.5}, {"w2", 0.02}};
    make_weights(g, magnitude);
    std::map<std::string, HostTensor> inputs = random_inputs(g, 5);
    Graph passed = g;
    apply_graph_passes(passed, fp8_options());
    int convs = 0;
    for (const Node &n : passed.nodes)
        if (n.domain == "nhc" && n.op_type == "ConvTaps") {
            convs++;
            CHECK(passed.value(n.inputs[1]).dtype == DType::Float8E4M3);
            CHECK(n.attr_float("alpha", 1.0) < 1e-3); // max |w| / 240
        }
    CHECK(convs == 2);
    check_fp8_against_references(g, {"w1", "w2"}, inputs);
    // Two 1-byte weights; the first conv's scale and bias leave PSUM in one instruction each
    // time (an ACT copy with both, or a DVE tensor_scalar multiplying and adding).
    neff::Program p = generate_program(passed, fp8_options());
    CHECK(fp8_weight_count(p) == 2);
    int scaled = 0, scaled_with_bias = 0;
    for (Engine e : {Engine::ACT, Engine::DVE})
        for (const Instr &i : p.stream(e)) {
            if (i.src.space != neff::MemSpace::PSUM)
                continue;
            bool scale = (i.op == neff::Opcode::Activation && i.s0.imm != 1.0f) ||
                         (i.op == neff::Opcode::TensorScalar && i.alu0 == neff::AluOp::Mult);
            bool bias = i.s1.is_ap;
            scaled += scale;
            scaled_with_bias += scale && bias;
        }
    CHECK(scaled_with_bias > 0);
    CHECK(scaled > scaled_with_bias); // the second conv has no bias
}

TEST_CASE("--disable-mixed-precision-accumulation: softmax's and layer norm's intermediates are "
          "stored in bf16 under auto-cast all") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 384] x, float[384] gamma, float[384] beta)
    => (float[128, 384] s, float[128, 384] n, float[128, 1] r) {
  s = Softmax <axis = -1> (x)
  n = LayerNormalization <axis = -1> (x, gamma, beta)
  r = ReduceMean <axes = [-1]> (x)
}
)");
    for (const char *name : {"gamma", "beta"}) { // the layer norm's weights
        Value &w = g.values.at(name);
        auto t = std::make_shared<HostTensor>(DType::Float32, w.shape);
        for (int64_t e = 0; e < t->numel(); e++)
            t->set_f64(e, 1.0 + 0.25 * std::sin(double(e)));
        w.constant = t;
        g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), name));
    }
    std::map<std::string, HostTensor> inputs = random_inputs(g, 4);
    CompileOptions on;
    on.auto_cast = "all";
    CompileOptions off = on;
    off.mixed_precision_accumulation = false;
    std::map<std::string, HostTensor> want = alg::run_reference(g, inputs);
    test::E2EResult got_on = test::compile_and_run(g, inputs, on);
    test::E2EResult got_off = test::compile_and_run(g, inputs, off);
    for (const char *out : {"s", "n", "r"}) {
        CAPTURE(out);
        const HostTensor &a = got_on.outputs.at(out), &b = got_off.outputs.at(out);
        CHECK(test::compare(a, want.at(out), 1e-1, 1e-1).rel_l2 < 1e-2);
        CHECK(test::compare(b, want.at(out), 1e-1, 1e-1).rel_l2 < 2e-2);
        if (std::string(out) == "r")
            continue; // one instruction's sum: its fp32 accumulator is the engine's either way
        int differ = 0;
        for (int64_t i = 0; i < a.numel(); i++)
            differ += a.get_f64(i) != b.get_f64(i);
        CHECK(differ > 0); // the sums, exponentials and moments rounded to bf16 show
    }
    // The engines write more bf16 tiles: the intermediates that were fp32.
    auto bf16_writes = [&](const CompileOptions &o) {
        Graph passed = g;
        apply_graph_passes(passed, o);
        neff::Program p = generate_program(passed, o);
        int n = 0;
        for (Engine e : {Engine::ACT, Engine::DVE, Engine::POOL})
            for (const Instr &i : p.stream(e))
                n += i.dst.space == neff::MemSpace::SBUF && i.dst.dtype == neff::DType::BF16;
        return n;
    };
    CHECK(bf16_writes(off) > bf16_writes(on));
}

TEST_CASE("auto-cast all casts a 1-D input longer than the partitions on rows that fill them") {
    // A layer norm's scale given as a graph input: the Cast after it was a 1-D tensor of 384
    // elements, which no schedule tiles.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 384] x, float[384] gamma) => (float[128, 384] n) {
  n = LayerNormalization <axis = -1> (x, gamma)
}
)");
    std::map<std::string, HostTensor> inputs = random_inputs(g, 6);
    CompileOptions all;
    all.auto_cast = "all";
    HostTensor want = alg::run_reference(g, inputs).at("n");
    test::E2EResult got = test::compile_and_run(g, inputs, all);
    CHECK(test::compare(got.outputs.at("n"), want, 1e-1, 1e-1).rel_l2 < 1e-2);
}

TEST_CASE("a matmul of bf16 or fp16 operands runs at their rate, with the values of fp32 staging") {
    for (const char *type : {"bfloat16", "float16"}) {
        CAPTURE(type);
        std::string text = std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (T[256, 192] x, T[192, 128] w) => (T[256, 128] y) {
  y = MatMul(x, w)
}
)");
        text.replace(text.find("T[256, 192]"), 1, type);
        text.replace(text.find("T[192, 128]"), 1, type);
        text.replace(text.find("T[256, 128]"), 1, type);
        Graph g = load_text(text);
        std::map<std::string, HostTensor> inputs;
        for (const auto &[name, t] : random_inputs(g, 9)) {
            HostTensor narrow(g.value(name).dtype, t.shape()); // rounds to nearest even
            for (int64_t i = 0; i < t.numel(); i++)
                narrow.set_f64(i, t.get_f64(i));
            inputs[name] = narrow;
        }
        Graph native = g, staged = g;
        CompileOptions o;
        apply_graph_passes(native, o);
        apply_graph_passes(staged, o);
        for (Node &n : staged.nodes)
            if (n.operand_cast)
                n.operand_cast = DType::Float32; // what the operands were staged as before
        neff::Program p = generate_program(native, o);
        neff::DType want = std::string(type) == "float16" ? neff::DType::F16 : neff::DType::BF16;
        int matmuls = 0, native_matmuls = 0;
        for (const Instr &i : p.stream(Engine::PE))
            if (i.op == neff::Opcode::Matmul) {
                matmuls++;
                native_matmuls += i.src.dtype == want && i.src1.dtype == want;
            }
        CHECK(matmuls > 0);
        CHECK(native_matmuls == matmuls);
        HostTensor a = test::run_program(std::move(p), native, inputs).outputs.at("y");
        HostTensor b =
            test::run_program(generate_program(staged, o), staged, inputs).outputs.at("y");
        REQUIRE(a.numel() == b.numel());
        for (int64_t i = 0; i < a.numel(); i++)
            REQUIRE(a.get_f64(i) == b.get_f64(i));
    }
}

TEST_CASE("Slice with constant starts, ends, axes and steps (negative too) matches the reference") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[6, 10, 8] x) => (float[3, 4, 8] y, float[6, 4, 4] z)
    <int64[2] s = {1, 2}, int64[2] e = {6, 9}, int64[2] a = {0, 1}, int64[2] st = {2, 2},
     int64[2] s2 = {-1, 7}, int64[2] e2 = {-100, 0}, int64[2] a2 = {-2, 2}, int64[2] st2 = {-3, -2}> {
  y = Slice(x, s, e, a, st)
  z = Slice(x, s2, e2, a2, st2)
}
)";
    Graph g = load_text(text);
    HostTensor x(DType::Float32, {6, 10, 8});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, double(i));
    auto want = alg::run_reference(g, {{"x", x}});
    test::E2EResult got = test::compile_and_run(g, {{"x", x}});
    for (const char *out : {"y", "z"}) {
        INFO(out);
        CHECK(test::compare(got.outputs.at(out), want.at(out), 0, 0).rel_l2 == 0);
    }
    CHECK(want.at("z").get_f64(0) == 9 * 8 + 7); // z[0, 0, 0] = x[0, 9, 7]
}

TEST_CASE("attention over 197 positions (ViT): K^T's 197 rows are loaded and transposed in "
          "chunks within the partitions, P·V contracts them in two chunks on chip; matches") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 197, 64] q, float[2, 197, 64] k, float[2, 197, 64] v) => (float[2, 197, 64] o) {
  kt = Transpose <perm = [0, 2, 1]> (k)
  s = MatMul(q, kt)
  p = Softmax <axis = -1> (s)
  o = MatMul(p, v)
}
)");
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 21), {"o"}, 1e-4, 1e-5) <= 1e-5);
    neff::Program p = test::compile_graph(g);
    int transposes = 0;
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        if (i.op == neff::Opcode::Transpose && i.src.num_partitions > 64) {
            transposes++;
            CHECK(i.src.num_partitions <= 128);
        }
    CHECK(transposes > 0);
    // P·V contracts the 197 positions (prime) in chunks of 99 and 98, not 197 chunks of one.
    int matmuls = 0;
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        matmuls += i.op == neff::Opcode::Matmul;
    CHECK(matmuls <= 2 * (2 + 2 * 2)); // heads x (scores' row tiles + row tiles x K chunks)
    // One group: the probabilities never reach HBM (P is transposed on chip per K chunk).
    for (const neff::Variable &var : p.vars)
        CHECK(var.name != "p");
}

TEST_CASE("attention over 640 positions, score rows wider than a PSUM bank: per row tile of "
          "queries the masked scores are built bank by bank, the softmax runs on whole rows, and "
          "P never leaves the chip; matches") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 640, 32] q, float[1, 2, 32, 640] k, float[1, 2, 640, 32] v, bool[1, 1, 640, 640] m)
    => (float[1, 2, 640, 32] o) <float scale = {5.0}, float low = {-10000.0}> {
  s = MatMul(q, k)
  d = Div(s, scale)
  w = Where(m, d, low)
  p = Softmax <axis = -1> (w)
  o = MatMul(p, v)
}
)");
    std::map<std::string, HostTensor> in = test::random_inputs(g, 23);
    HostTensor mask(DType::Bool, {1, 1, 640, 640}); // causal, as GPT-2's
    for (int64_t i = 0; i < 640; i++)
        for (int64_t j = 0; j < 640; j++)
            mask.set_f64(i * 640 + j, j <= i ? 1 : 0);
    in["m"] = mask;
    CHECK(test::worst_rel_l2(g, in, {"o"}, 1e-4, 1e-5) <= 1e-5);
    neff::Program p = test::compile_graph(g);
    for (const neff::Variable &var : p.vars)
        CHECK(var.name != "p"); // one group
    // Per head and row tile of 128 queries: two score banks of 320 columns, and P·V over five
    // K chunks of 128 positions.
    CHECK(test::matmuls_contracting(p, 32) == 2 * 5 * 2);
    CHECK(test::matmuls_contracting(p, 128) == 2 * 5 * 5);
}

TEST_CASE("a matmul whose tiles do not divide M and N keeps A^T resident and reads B once "
          "(GPT-2's vocabulary projection, N = 50,257); matches") {
    // M = 260: three row tiles of 87, the last guarded (86 rows); N = 3,100: seven column
    // tiles of 443, the last shifted inwards. B (K = 1,024) is too large to stay whole in SBUF.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[260, 1024] a, float[1024, 3100] b) => (float[260, 3100] y) { y = MatMul(a, b) }
)");
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 24), {"y"}, 1e-4, 1e-5) <= 1e-5);
    neff::Program p = test::compile_graph(g);
    // Each operand crosses HBM once, but for the overlap of the last tile with the one before.
    CHECK(test::bytes_read_from(p, "b") == 1024 * 7 * 443 * 4);
    CHECK(test::bytes_read_from(p, "a") == 3 * 87 * 1024 * 4);
}

TEST_CASE("a copy from HBM to HBM whose loops all exceed the partitions moves rows in chunks, "
          "not one element per DMA") {
    // torch's in_proj split: q = qkv[:, :, 0:768] of [197, 1, 2304]; 197 rows of 768.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[197, 1, 2304] x) => (float[197, 1, 768] y)
    <int64[1] s = {768}, int64[1] e = {1536}, int64[1] a = {2}> {
  y = Slice(x, s, e, a)
}
)");
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 22), {"y"}, 0, 0) == 0);
    neff::Program p = test::compile_graph(g);
    CHECK(test::dmas_reading(p, "x") == 2); // rows 0-98 and 99-196
    CHECK(test::bytes_read_from(p, "x") == 197 * 768 * 4);
}

TEST_CASE("a graph output that copies a view, whose viewed value other nodes read, is copied") {
    // log_prob = Identity(view of a computed value) and z reads the same view: the output is a
    // copy of the value, not where the value is written (as in ONNX's expanded
    // SoftmaxCrossEntropyLoss with log_prob).
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3, 4, 5] x) => (float[3, 20] log_prob, float[3, 20] z) <int64[2] s = {3, 20}> {
  t = Transpose <perm = [0, 2, 1]> (x)
  e = Exp(t)
  u = Transpose <perm = [0, 2, 1]> (e)
  v = Reshape(u, s)
  log_prob = Identity(v)
  z = Neg(v)
}
)");
    CHECK(test::worst_rel_l2(g, random_inputs(g, 5), {"log_prob", "z"}, 1e-5, 1e-6) <= 1e-6);
}

TEST_CASE("Sin reduces its argument to [-pi, pi] (fmod) before ACT's sin, and matches far out") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 8] x) => (float[4, 8] y) { y = Sin(x) }
)");
    neff::Program p = test::compile_graph(g);
    int mods = 0, sins = 0;
    for (const auto &stream : p.streams)
        for (const Instr &i : stream) {
            mods += (i.op == neff::Opcode::TensorScalar || i.op == neff::Opcode::TensorTensor) &&
                    (i.alu0 == neff::AluOp::Mod || i.alu1 == neff::AluOp::Mod);
            sins += i.op == neff::Opcode::Activation && i.func == neff::ActFunc::Sin;
        }
    CHECK(mods >= 1);
    CHECK(sins == 1);
    HostTensor x(DType::Float32, {4, 8});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, -40.0 + 2.7 * double(i)); // well outside [-pi, pi]
    test::E2EResult got = test::compile_and_run(g, {{"x", x}});
    for (int64_t i = 0; i < x.numel(); i++)
        CHECK(got.outputs.at("y").get_f64(i) ==
              doctest::Approx(std::sin(x.get_f64(i))).epsilon(1e-4));
}

TEST_CASE("attention's 1/sqrt(d) rides on the exponential at -O2, with the same bits as at -O1") {
    // Scores, their scale by 1/sqrt(64) and Softmax, then the context product: one fused group.
    Graph g = test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 128, 64] q, float[1, 2, 64, 128] kt, float[1, 2, 128, 64] v)
    => (float[1, 2, 128, 64] y) <float c = {8.0}> {
  s = MatMul(q, kt)
  d = Div(s, c)
  p = Softmax(d)
  y = MatMul(p, v)
}
)");
    test::require_same_values_at_o1_and_o2(
        g, test::random_inputs(g, 11), {}, "y", [](int level, const neff::Program &p) {
            // At -O2 each head's exponential scales its input (exp(x * 0.125 + bias)), and no
            // instruction scales the scores by 0.125 on their own.
            int scaled_exp = 0, scaling = 0;
            for (Engine e : {Engine::ACT, Engine::DVE, Engine::POOL})
                for (const Instr &i : p.stream(e)) {
                    bool exp = i.op == neff::Opcode::Activation && i.func == neff::ActFunc::Exp;
                    bool by_eighth = !i.s0.is_ap && i.s0.imm == 0.125f;
                    scaled_exp += exp && by_eighth && i.s1.is_ap;
                    scaling += !exp && by_eighth;
                }
            CHECK(scaled_exp == (level == 2 ? 2 : 0));
            CHECK((scaling == 0) == (level == 2));
        });
}

TEST_CASE(
    "ViT's attention at -O2: no copies of Q, K and V, no scaling pass, the same bits as -O1") {
    // torchvision's nn.MultiheadAttention at batch 1: sequence-first Transposes of a unit axis,
    // one in-projection cut by three Slices, q scaled by 1/sqrt(d) before the scores.
    std::string w, b;
    for (int i = 0; i < 32 * 96; i++)
        w += (i ? ", " : "") + std::to_string(0.0625 * ((i * 5) % 11) - 0.3125);
    for (int i = 0; i < 96; i++)
        b += (i ? ", " : "") + std::to_string(0.03125 * (i % 7));
    Graph g = test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 16, 32] x) => (float[1, 16, 32] out) <float[32, 96] w = {)" +
                              w + R"(},
    float[96] b = {)" + b + R"(}, int64[1] s0 = {0}, int64[1] s1 = {32}, int64[1] s2 = {64},
    int64[1] s3 = {96}, int64[1] last = {-1}, int64[3] heads = {16, 2, 16},
    int64[3] merged = {16, 1, 32}, float four = {4.0}> {
  t = Transpose <perm = [1, 0, 2]> (x)
  y = MatMul(t, w)
  yb = Add(b, y)
  q = Slice(yb, s0, s1, last)
  k = Slice(yb, s1, s2, last)
  v = Slice(yb, s2, s3, last)
  qh = Reshape(q, heads)
  kh = Reshape(k, heads)
  vh = Reshape(v, heads)
  qt = Transpose <perm = [1, 0, 2]> (qh)
  qs = Div(qt, four)
  kt = Transpose <perm = [1, 2, 0]> (kh)
  vt = Transpose <perm = [1, 0, 2]> (vh)
  s = MatMul(qs, kt)
  p = Softmax(s)
  o = MatMul(p, vt)
  ot = Transpose <perm = [1, 0, 2]> (o)
  om = Reshape(ot, merged)
  out = Transpose <perm = [1, 0, 2]> (om)
}
)");
    test::require_same_values_at_o1_and_o2(g, test::random_inputs(g, 3), {}, "out",
                                           [&](int level, const neff::Program &) {
                                               CompileOptions o;
                                               o.optlevel = level;
                                               Graph passed = g;
                                               apply_graph_passes(passed, o);
                                               std::map<std::string, int> ops;
                                               for (const Node &n : passed.nodes)
                                                   ops[n.op_type]++;
                                               // -O2: three projections instead of one and three
                                               // Slices; the Div in the Softmax; of the Transposes,
                                               // only the heads' merge, which attention writes
                                               // transposed (-O1 also keeps the two of a unit axis
                                               // and q's, which the Div stood between q and its
                                               // MatMul).
                                               CHECK(ops["Slice"] == (level == 2 ? 0 : 3));
                                               CHECK(ops["Gemm"] == (level == 2 ? 3 : 1));
                                               CHECK(ops["Div"] == (level == 2 ? 0 : 1));
                                               CHECK(ops["Transpose"] == (level == 2 ? 1 : 4));
                                           });
}

TEST_CASE("SiLU and Sigmoid are one ACT instruction each per tile, and match") {
    // y = x * Sigmoid(x) (graph/FuseSwish: Swish, ACT's silu); z = Sigmoid(x) (ACT's sigmoid),
    // where each was exp, add and reciprocal, and SiLU a multiply besides.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x) => (float[128, 256] y, float[128, 256] z) {
  s = Sigmoid(x)
  y = Mul(x, s)
  z = Sigmoid(x)
}
)";
    Graph g = load_text(text);
    neff::Program p = test::compile_graph(g);
    std::map<neff::ActFunc, int> act;
    int others = 0;
    for (neff::Engine e : {neff::Engine::ACT, neff::Engine::DVE, neff::Engine::POOL})
        for (const neff::Instr &i : p.stream(e)) {
            if (i.op == neff::Opcode::Activation)
                act[i.func]++;
            else if (i.op != neff::Opcode::Dma)
                others++;
        }
    CHECK(act[neff::ActFunc::Silu] == 1);
    CHECK(act[neff::ActFunc::Sigmoid] == 1);
    CHECK(act[neff::ActFunc::Exp] == 0);
    CHECK(others == 0);
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 5), {"y", "z"}, 1e-5, 1e-6) <= 1e-6);
}

TEST_CASE("a Concat's inputs along the channels of one image are computed in place") {
    // a and s (which b views) are stored straight into their blocks of y
    // (driver/ConcatInPlace.h): neither has a variable, the Concat copies nothing, and w reads a
    // from y's first block. With two images the blocks are not contiguous, and the Concat copies.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 64, 40] x, float[N, 1280] z) => (float[N, 96, 40] y, float[N, 64, 40] w)
    <int64[3] shape = {N, 32, 40}> {
  a = Relu(x)
  s = Sigmoid(z)
  b = Reshape(s, shape)
  y = Concat <axis = 1> (a, b)
  w = Neg(a)
}
)";
    auto with_batch = [&](const char *n) {
        std::string t = text;
        for (const char *pattern : {"[N,", "{N,"})
            for (size_t at; (at = t.find(pattern)) != std::string::npos;)
                t.replace(at + 1, 1, n);
        return t;
    };
    Graph g = load_text(with_batch("1"));
    neff::Program p = test::compile_graph(g);
    std::set<std::string> vars;
    for (const neff::Variable &v : p.vars)
        vars.insert(v.name);
    CHECK_FALSE(vars.count("a"));
    CHECK_FALSE(vars.count("s"));
    int y_var = p.var_index("y");
    std::set<int64_t> y_offsets; // where the stores into y start
    for (neff::Engine e : {neff::Engine::SP, neff::Engine::POOL, neff::Engine::ACT})
        for (const neff::Instr &i : p.stream(e)) {
            if (i.op == neff::Opcode::Dma && i.dst.space == neff::MemSpace::HBM &&
                i.dst.var == y_var)
                y_offsets.insert(i.dst.offset);
        }
    CHECK(y_offsets.count(0));
    CHECK(y_offsets.count(64 * 40 * 4));
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 3), {"y", "w"}, 1e-5, 1e-6) <= 1e-6);
    // Two images: a has its own variable and the Concat copies it.
    Graph two = load_text(with_batch("2"));
    neff::Program p2 = test::compile_graph(two);
    CHECK(p2.var_index("a") >= 0);
    CHECK(test::worst_rel_l2(two, test::random_inputs(two, 3), {"y", "w"}, 1e-5, 1e-6) <= 1e-6);
}

TEST_CASE("a value a Concat takes twice is copied into both its blocks") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 40] x) => (float[1, 128, 40] y) {
  a = Relu(x)
  y = Concat <axis = 1> (a, a)
}
)";
    Graph g = load_text(text);
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 4), {"y"}, 1e-6, 1e-7) <= 1e-7);
}

TEST_CASE("a causal mask is one affine_select on GpSimd per tile, with the values of -O1") {
    // At -O2 the mask is an index test (graph/CausalMask): GpSimd's affine_select replaces the
    // mask's loads, its conversion and DVE's select, and the scale rides on the exponential.
    Graph g = test::causal_attention(128, false);
    CompileOptions o;
    o.model_type = "transformer";
    test::require_same_values_at_o1_and_o2(
        g, test::random_inputs(g, 11), o, "o", [&](int level, const neff::Program &p) {
            std::map<neff::Opcode, int> ops;
            for (const auto &stream : p.streams)
                for (const neff::Instr &i : stream)
                    ops[i.op]++;
            CHECK(ops[neff::Opcode::AffineSelect] == (level == 2 ? 2 : 0)); // one per head
            CHECK(ops[neff::Opcode::Select] == (level == 2 ? 0 : 2));
            CHECK(dmas_reading(p, "m") == (level == 2 ? 0 : 2));
            // The scores, masked or not, and the probabilities stay on chip: the mask joins the
            // attention's group.
            for (const neff::Variable &var : p.vars)
                CHECK((var.name != "s" && var.name != "w" && var.name != "p"));
            // The Div folds into the Softmax through the mask (the Softmax keeps the scores'
            // shape for the attention fusion: graph/FlattenElementwise walks through the mask).
            CompileOptions at = o;
            at.optlevel = level;
            Graph passed = g;
            apply_graph_passes(passed, at);
            int divs = 0;
            for (const Node &n : passed.nodes)
                divs += n.op_type == "Div";
            CHECK(divs == (level == 2 ? 0 : 1));
        });
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 11), {"o"}, 1e-5, 1e-6) <= 1e-6);
}

TEST_CASE("attention over rows longer than a bank builds K^T and V once per head") {
    // 640 positions: five row tiles of queries per head, each reading all of K^T and V, and two
    // banks of scores per row tile, both reading Q^T (schedules/MatmulSchedule,
    // stage_keys_and_values_per_head, transpose_a_per_row_tile).
    Graph g = test::causal_attention(640, true);
    CompileOptions o;
    o.optlevel = 2;
    o.model_type = "transformer";
    neff::Program p = test::compile_graph(g, o);
    int qk_transposes = 0, p_transposes = 0;
    for (const neff::Instr &i : p.stream(Engine::PE))
        if (i.op == neff::Opcode::Transpose) {
            qk_transposes += i.dst.num_partitions == 64; // a [128, 64] tile of Q or K
            p_transposes += i.dst.num_partitions == 128;
        }
    // Per head, Q's five row tiles and K's two tiles of 320 keys in three chunks of rows each,
    // each once (K's were transposed again for every row tile, Q's for each tile of scores).
    CHECK(qk_transposes == 2 * (5 + 2 * 3));
    // P's chunks of 128 keys up to each row tile's diagonal (the masked keys past it are
    // skipped, graph/SkipMaskedKeys): 1 + 2 + 3 + 4 + 5 per head, where all five were.
    CHECK(p_transposes == 2 * 15);
    // V's five chunks loaded once per head, not once per row tile.
    CHECK(dmas_reading(p, "v") == 2 * 5);
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 3), {"o"}, 1e-5, 1e-6) <= 1e-5);
}
