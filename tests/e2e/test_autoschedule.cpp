// The autoscheduler (issue 16): schedule plans as data, the search per workload at -O2/-O3 and
// its budgets, the values of what it chooses, checked on the simulator against the host
// reference, and lowerings reused across groups of one workload.

#include "TextCases.h"
#include "autoscheduler/Autoschedule.h"
#include "autoscheduler/Candidates.h"
#include "autoscheduler/TuningDb.h"
#include "autoscheduler/Workload.h"
#include "driver/LoweringCache.h"
#include "driver/WholeProgramCheck.h"
#include "neff/Assembler.h"
#include "neff/LowerGroup.h"
#include "neff/NeffFile.h"
#include "runtime/Simulator.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/ScheduleScript.h"
#include "target/Target.h"

#include <doctest/doctest.h>
#include <set>

using namespace nhc;
using test::load_text;
using test::node_with_output;

namespace {

using Operands = sched::MatmulPlan::Operands;

const target::TargetInfo &trn1() {
    return target::target_by_name("trn1");
}

// K = 384 (three chunks) and N = 640 (wider than one PSUM bank): every operand movement applies.
const char *kMatmul = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256, 384] x, float[384, 640] w) => (float[256, 640] y) {
  y = MatMul(x, w)
}
)";

// Two layers of one shape, then a third of another: two workloads among three matmul groups.
const char *kLayers = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x, float[256, 256] w1, float[256, 256] w2, float[256, 384] w3)
    => (float[128, 384] y) {
  h1 = MatMul(x, w1)
  h2 = MatMul(h1, w2)
  y = MatMul(h2, w3)
}
)";

Graph passed(const char *text) {
    Graph g = load_text(text);
    apply_graph_passes(g, CompileOptions{});
    return g;
}

sched::Group scheduled(const Graph &g, const Node &n, const sched::SchedulePlan &plan) {
    sched::Group grp = sched::build_node_group(g, n);
    sched::apply_default_schedule(grp, trn1(), plan);
    return grp;
}

std::string schedule_text(const sched::Group &grp) {
    sched::ScheduleScript s;
    s.blocks.push_back(sched::describe_schedule(grp));
    return s.to_string();
}

sched::SchedulePlan plan_of(Operands o, int max_n = 0) {
    sched::SchedulePlan p;
    p.matmul = {o, max_n};
    return p;
}

} // namespace

TEST_CASE("every matmul plan is a schedule a script states, and computes the product") {
    Graph loaded = load_text(kMatmul);
    Graph g = passed(kMatmul);
    const Node &mm = node_with_output(g, "y");
    auto inputs = test::random_inputs(loaded, 7);
    auto want = alg::run_reference(loaded, inputs);
    std::set<std::string> schedules;
    for (Operands o : {Operands::Auto, Operands::WholeRows, Operands::AResident,
                       Operands::BResident, Operands::Streamed})
        for (int max_n : {0, 128})
            for (std::pair<int, int> transposes : {std::pair{4, 0}, {1, 0}, {4, 2}}) {
                sched::SchedulePlan plan = plan_of(o, max_n);
                plan.matmul.transposes_per_tile = transposes.first;
                plan.matmul.transpose_buffers = transposes.second;
                CAPTURE(plan.describe());
                sched::ScheduleScript script;
                script.blocks.push_back(sched::describe_schedule(scheduled(g, mm, plan)));
                schedules.insert(script.to_string());
                // The plan's schedule, given back as a script, compiles to the right values.
                CompileOptions o1;
                o1.optlevel = 1;
                o1.schedule = &script;
                test::E2EResult got = test::run_program(generate_program(g, o1), g, inputs);
                CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
            }
    // Whole rows, A resident, B resident and streamed operands differ, and so do tile widths
    // and, where A is transposed, its transposes' placement.
    CHECK(schedules.size() >= 12);
}

namespace {

neff::Program compiled_with(const Graph &g, const Node &mm, const sched::SchedulePlan &plan) {
    sched::ScheduleScript script;
    script.blocks.push_back(sched::describe_schedule(scheduled(g, mm, plan)));
    CompileOptions o;
    o.optlevel = 1;
    o.schedule = &script;
    return generate_program(g, o);
}

/** ACT and DVE instructions that read PSUM: copies of transposes and of accumulators. */
int psum_reads(const neff::Program &p) {
    int n = 0;
    for (neff::Engine e : {neff::Engine::ACT, neff::Engine::DVE})
        for (const neff::Instr &i : p.stream(e))
            n += i.src.space == neff::MemSpace::PSUM ? 1 : 0;
    return n;
}

} // namespace

TEST_CASE("A's transposes share PSUM tiles and take turns in the plan's fixed buffers") {
    // A of [256, 384] is stored K innermost: 2 row tiles x 3 K chunks = 6 PE transposes.
    Graph g = passed(kMatmul);
    const Node &mm = node_with_output(g, "y");
    sched::SchedulePlan one = plan_of(Operands::AResident), grouped = one;
    one.matmul.transposes_per_tile = 1;
    grouped.matmul.transposes_per_tile = 4; // 3 chunks: a tile of 3
    grouped.matmul.transpose_buffers = 2;
    neff::Program p1 = compiled_with(g, mm, one), p3 = compiled_with(g, mm, grouped);
    std::set<int64_t> tiles1, tiles3;
    for (const neff::Instr &i : p1.stream(neff::Engine::PE))
        if (i.op == neff::Opcode::Transpose)
            tiles1.insert(i.dst.offset);
    int transposes = 0;
    for (const neff::Instr &i : p3.stream(neff::Engine::PE))
        if (i.op == neff::Opcode::Transpose) {
            tiles3.insert(i.dst.offset - i.dst.offset % trn1().psum_bank_bytes);
            transposes++;
        }
    CHECK(transposes == 6);
    // Three transposes per tile: one copy each 3 instead of 6, the accumulators' unchanged.
    CHECK(psum_reads(p1) - psum_reads(p3) == 4);
    // Two fixed banks; without buffers, the rotating allocator gives each tile a new bank.
    CHECK(tiles3.size() == 2);
    CHECK(tiles1.size() == 6);
}

namespace {

/** The product of `text`'s MatMul y under `plan`, given back as a script: its schedule text,
 *  and whether its values match the host reference. */
std::pair<std::string, bool> blocked_product(const char *text, const sched::SchedulePlan &plan) {
    Graph loaded = load_text(text);
    Graph g = passed(text);
    auto inputs = test::random_inputs(loaded, 11);
    auto want = alg::run_reference(loaded, inputs);
    sched::ScheduleScript script;
    script.blocks.push_back(sched::describe_schedule(scheduled(g, node_with_output(g, "y"), plan)));
    CompileOptions o1;
    o1.optlevel = 1;
    o1.schedule = &script;
    test::E2EResult got = test::run_program(generate_program(g, o1), g, inputs);
    return {script.to_string(),
            test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5};
}

} // namespace

TEST_CASE("an operand too large to stay whole is kept in blocks, and the product is right") {
    // B of [1024, 3072] fp32 is 96 KiB per partition, over the resident budget (88 KiB): in
    // blocks of at most 2048 columns, the largest multiple of the 512-column tile that divides
    // 3072 is 1536, and x crosses HBM once per block.
    const char *wide_b = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 1024] x, float[1024, 3072] w) => (float[128, 3072] y) {
  y = MatMul(x, w)
}
)";
    sched::SchedulePlan b_blocks = plan_of(Operands::BResident);
    b_blocks.matmul.resident_block = 2048;
    auto [b_text, b_right] = blocked_product(wide_b, b_blocks);
    CHECK(b_text.find("split(v0, nb, nr, 1536)") != std::string::npos);
    CHECK(b_text.find("rhs.split(v1, kco, kci, 128).unroll(kco).compute_at(final0, nb)") !=
          std::string::npos);
    CHECK(b_right);
    // Without blocks B does not fit, and the plan falls back to the default.
    Graph g = passed(wide_b);
    const Node &mm = node_with_output(g, "y");
    CHECK(schedule_text(scheduled(g, mm, plan_of(Operands::BResident))) ==
          schedule_text(scheduled(g, mm, {})));
    // A^T of [4096, 768] fp32 is 96 KiB per partition: blocks of 384 rows (640 and 512 do not
    // divide 768), each built once, B staged once per block.
    const char *tall_a = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[768, 4096] x, float[4096, 128] w) => (float[768, 128] y) {
  y = MatMul(x, w)
}
)";
    sched::SchedulePlan a_blocks = plan_of(Operands::AResident);
    a_blocks.matmul.resident_block = 2048;
    auto [a_text, a_right] = blocked_product(tall_a, a_blocks);
    CHECK(a_text.find("split(v1, mb, mr, 384)") != std::string::npos);
    CHECK(a_text.find("compute_at(final0, mb)") != std::string::npos);
    CHECK(a_right);
}

TEST_CASE("narrower output tiles leave room for taller blocks of A^T, and -O2 and -O3 offer them") {
    // A^T of [2048, 4096] fp32 is 256 KiB per partition. Beside a 512-column tile of B (64 KiB
    // per partition) a block holds fewer than 768 rows, so 512 (640 does not divide 2048);
    // beside a 128-column one (16 KiB), 1,024: B then crosses HBM twice instead of 4 times.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2048, 4096] x, float[4096, 512] w) => (float[2048, 512] y) {
  y = MatMul(x, w)
}
)";
    Graph g = passed(text);
    const Node &mm = node_with_output(g, "y");
    sched::SchedulePlan wide = plan_of(Operands::AResident);
    wide.matmul.resident_block = 2048;
    sched::SchedulePlan narrow = wide;
    narrow.matmul.max_tile_n = 128;
    CHECK(schedule_text(scheduled(g, mm, wide)).find("split(v1, mb, mr, 512)") !=
          std::string::npos);
    auto [narrow_text, narrow_right] = blocked_product(text, narrow);
    CHECK(narrow_text.find("split(v1, mb, mr, 1024)") != std::string::npos);
    CHECK(narrow_right);
    sched::Group grp = sched::build_node_group(g, mm);
    for (int level : {2, 3}) {
        auto plans = autosched::candidate_plans(grp, trn1(), level);
        CAPTURE(level);
        CHECK(std::find(plans.begin(), plans.end(), narrow) != plans.end());
    }
}

TEST_CASE("a MatMul whose K is long beside M and N: -O2 and -O3 reduce K in two stages, and the "
          "product is right") {
    // [128, 4096] x [4096, 512] fp32: every other plan waits for a whole operand (8 or 16 MiB of
    // it) before its first output tile; K in blocks of 1,024 needs one block of each
    // (bench/README.md, nineteenth stop: 71.4 -> 59.6 us at -O2).
    Graph loaded = load_text(test::one_matmul(128, 4096, 512));
    auto inputs = test::random_inputs(loaded, 11);
    auto want = alg::run_reference(loaded, inputs);
    for (int level : {1, 2, 3}) {
        CAPTURE(level);
        CompileOptions o;
        o.optlevel = level;
        Graph g = loaded;
        apply_graph_passes(g, o);
        neff::Program p = generate_program(g, o);
        // The blocks' partial products are added into the sum by tensor_tensor; one stage
        // accumulates them all in PSUM.
        int adds = 0;
        for (const auto &stream : p.streams)
            for (const neff::Instr &i : stream)
                adds += i.op == neff::Opcode::TensorTensor;
        CHECK((adds == 4) == (level >= 2)); // 4 blocks of K, one output tile
        test::E2EResult got = test::run_program(p, g, inputs);
        CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
    }
}

TEST_CASE("an A-resident output is stored in blocks of columns when the plan asks, and the "
          "product is right") {
    // 6,000 columns: output tiles of 500 (2,000-byte rows). Stores of up to 1,024 columns
    // gather two tiles per row tile (rows of 1,000 elements), B staged once per block; the
    // stores halve.
    const char *wide = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 768] x, float[768, 6000] w) => (float[128, 6000] y) {
  y = MatMul(x, w)
}
)";
    sched::SchedulePlan blocks = plan_of(Operands::AResident);
    blocks.matmul.store_columns = 1024;
    auto [text, right] = blocked_product(wide, blocks);
    CHECK(text.find("split(v0, nb, nr, 1000)") != std::string::npos);
    CHECK(text.find("compute_at(final0, nb)") != std::string::npos); // B per block
    CHECK(text.find("split(v0, no, ni, 500)") != std::string::npos); // the gathered tiles
    CHECK(right);
    Graph g = passed(wide);
    const Node &mm = node_with_output(g, "y");
    auto stores = [&](const sched::SchedulePlan &plan) {
        sched::ScheduleScript script;
        script.blocks.push_back(sched::describe_schedule(scheduled(g, mm, plan)));
        CompileOptions o1;
        o1.optlevel = 1;
        o1.schedule = &script;
        neff::Program p = generate_program(g, o1);
        int n = 0;
        for (const auto &stream : p.streams)
            for (const neff::Instr &i : stream)
                n += i.op == neff::Opcode::Dma && i.dst.space == neff::MemSpace::HBM;
        return n;
    };
    CHECK(stores(blocks) * 2 == stores(plan_of(Operands::AResident)));
}

TEST_CASE("a bias broadcast over the partitions is built on the PE when asked, and the values "
          "are right") {
    // The bias of 1,536 fp32 is read into each of the 128 partitions of its tile: by default one
    // DMA reading it 128 times; built on the PE, one DMA of the row into one partition and a
    // K = 1 matmul of a ones row by it per PSUM bank (3), each copied out.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 768] x, float[768, 1536] w, float[1536] b) => (float[128, 1536] y) {
  t = MatMul(x, w)
  y = Add(t, b)
}
)";
    Graph loaded = load_text(text);
    Graph g = passed(text);
    auto inputs = test::random_inputs(loaded, 5);
    auto want = alg::run_reference(loaded, inputs);
    struct Counts {
        int broadcast_loads = 0, unit_k_matmuls = 0;
    };
    auto compiled = [&](bool on_pe, Counts &c) {
        CompileOptions o;
        o.optlevel = 2;
        o.broadcast_on_pe = on_pe;
        neff::Program p = generate_program(g, o);
        for (const auto &stream : p.streams)
            for (const neff::Instr &i : stream) {
                c.broadcast_loads += i.op == neff::Opcode::Dma &&
                                     i.src.space == neff::MemSpace::HBM &&
                                     i.src.partition_step == 0 && i.dst.num_partitions > 1;
                c.unit_k_matmuls += i.op == neff::Opcode::Matmul && i.src.num_partitions == 1;
            }
        return p;
    };
    Counts dma, pe;
    compiled(false, dma);
    neff::Program p = compiled(true, pe);
    CHECK(dma.broadcast_loads >= 1);
    CHECK(dma.unit_k_matmuls == 0);
    CHECK(pe.broadcast_loads == 0);
    CHECK(pe.unit_k_matmuls == 3);
    test::E2EResult got = test::run_program(std::move(p), g, inputs);
    CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
}

TEST_CASE("the default plan is the default schedule") {
    Graph g = passed(kMatmul);
    const Node &mm = node_with_output(g, "y");
    sched::Group plain = sched::build_node_group(g, mm);
    sched::apply_default_schedule(plain, trn1());
    CHECK(schedule_text(plain) == schedule_text(scheduled(g, mm, {})));
    CHECK(schedule_text(plain) != schedule_text(scheduled(g, mm, plan_of(Operands::Streamed))));
}

TEST_CASE("candidates: the default first, -O2 fewer than -O3, none but the default at -O1") {
    Graph g = passed(kMatmul);
    sched::Group grp = sched::build_node_group(g, node_with_output(g, "y"));
    auto o1 = autosched::candidate_plans(grp, trn1(), 1);
    auto o2 = autosched::candidate_plans(grp, trn1(), 2);
    auto o3 = autosched::candidate_plans(grp, trn1(), 3);
    CHECK(o1.size() == 1);
    CHECK(o1.front().is_default());
    CHECK(o2.front().is_default());
    CHECK(o3.front().is_default());
    CHECK(o2.size() > 1);
    CHECK(o3.size() > o2.size());
    // An elementwise group has no choices yet.
    Graph e = passed(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256, 64] x) => (float[256, 64] y) {
  y = Relu(x)
}
)");
    CHECK(autosched::candidate_plans(sched::build_node_group(e, e.nodes[0]), trn1(), 3).size() ==
          1);
    // A convolution: its image padded by the DMA or on chip, under every model type (64
    // channels: too many for its kernel rows to be packed into the partitions).
    Graph c = passed(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 16, 16] x, float[64, 64, 3, 3] w) => (float[1, 64, 16, 16] y) {
  y = Conv <pads = [1, 1, 1, 1]> (x, w)
}
)");
    sched::Group conv = sched::build_node_group(c, node_with_output(c, "y"));
    CHECK(autosched::candidate_plans(conv, trn1(), 1).size() == 1);
    for (const char *type : {"generic", "transformer", "unet-inference"}) {
        auto plans = autosched::candidate_plans(conv, trn1(), 2, type);
        REQUIRE(plans.size() == 2);
        CHECK(plans[0].is_default());
        CHECK(plans[1].describe() == "image padded on chip");
        sched::SchedulePlan back;
        CHECK(sched::parse_plan(plans[1].describe(), back));
        CHECK(back == plans[1]);
    }
    // A max pooling and a depthwise convolution (PoolTaps) with padding: the same choice.
    Graph pools = passed(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 16, 16] x, float[64, 1, 3, 3] wd) => (float[1, 64, 8, 8] y, float[1, 64, 16, 16] z) {
  y = MaxPool <kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]> (x)
  z = Conv <pads = [1, 1, 1, 1], group = 64> (x, wd)
}
)");
    for (const char *out : {"y", "z"}) {
        CAPTURE(out);
        sched::Group grp = sched::build_node_group(pools, node_with_output(pools, out));
        CHECK(grp.node->op_type == "PoolTaps");
        auto plans = autosched::candidate_plans(grp, trn1(), 2);
        REQUIRE(plans.size() == 2);
        CHECK(plans[1].describe() == "image padded on chip");
    }
    // Without padding along the rows (a 1 x 1 convolution; padding of rows only) the DMA writes
    // whole rows already: no choice.
    Graph unpadded = passed(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 16, 16] x, float[64, 64, 1, 1] w, float[64, 64, 3, 1] w2)
    => (float[1, 64, 16, 16] y, float[1, 64, 16, 16] z) {
  y = Conv (x, w)
  z = Conv <pads = [1, 0, 1, 0]> (x, w2)
}
)");
    for (const char *out : {"y", "z"}) {
        CAPTURE(out);
        sched::Group grp = sched::build_node_group(unpadded, node_with_output(unpadded, out));
        CHECK(grp.node->op_type == "ConvTaps");
        CHECK(autosched::candidate_plans(grp, trn1(), 3).size() == 1);
    }
}

TEST_CASE("a float attribute's value is the lowering's, not the schedule's, unless 0 or 1") {
    // fp8's per-tensor weight scales ride on each Gemm's alpha: layers that differ only there
    // are one workload to search, and two lowerings.
    Graph g = passed(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x, float[256, 256] w1, float[256, 256] w2, float[256, 256] w3)
    => (float[128, 256] y) {
  h1 = Gemm <alpha = 0.5> (x, w1)
  h2 = Gemm <alpha = 0.25> (h1, w2)
  y = Gemm (h2, w3)
}
)");
    auto workload = [&](const char *out) {
        return autosched::workload_of(g, sched::build_node_group(g, node_with_output(g, out)), {},
                                      "trn1");
    };
    CHECK(workload("h1").text == workload("h2").text);
    CHECK(workload("h1").hash == workload("h2").hash);
    CHECK(workload("h1").literals != workload("h2").literals);
    CHECK(workload("h1").text != workload("y").text); // alpha 1 may drop a multiply
}

TEST_CASE("identical groups are one workload, searched once within the level's budget") {
    Graph g = passed(kLayers);
    const Node &l1 = node_with_output(g, "h1"), &l2 = node_with_output(g, "h2"),
               &l3 = node_with_output(g, "y");
    auto workload = [&](const Node &n) {
        return autosched::workload_of(g, sched::build_node_group(g, n), {}, "trn1");
    };
    CHECK(workload(l1).text == workload(l2).text);
    CHECK(workload(l1).hash == workload(l2).hash);
    CHECK(workload(l1).text != workload(l3).text);
    CHECK(workload(l1).text !=
          autosched::workload_of(g, sched::build_node_group(g, l1), {}, "inf2").text);
    for (int level : {1, 2, 3}) {
        CAPTURE(level);
        autosched::Autoscheduler a(g, trn1(), {level});
        for (const Node *n : {&l1, &l2, &l3}) {
            sched::Group probe = sched::build_node_group(g, *n);
            a.plan_for(
                probe, {}, [&] { return sched::build_node_group(g, *n); },
                [] { return autosched::ProgramContext(); });
        }
        const autosched::SearchStats &s = a.stats();
        if (level == 1) {
            CHECK(s.workloads == 0);
            CHECK(s.measured == 0);
            continue;
        }
        CHECK(s.workloads == 2);
        CHECK(s.reused == 1);
        CHECK(s.measured >= 2 * 2); // at least two distinct schedules per workload
        CHECK(s.measured <= 2 * autosched::measured_budget(level));
        CHECK(s.chosen_ns <= s.default_ns);
        CHECK(s.chosen_ns > 0);
    }
}

TEST_CASE("-O2 and -O3 give the same program every time, with the reference values") {
    Graph loaded = load_text(kLayers);
    auto inputs = test::random_inputs(loaded, 11);
    auto want = alg::run_reference(loaded, inputs);
    for (int level : {2, 3}) {
        CAPTURE(level);
        CompileOptions o;
        o.optlevel = level;
        Graph g = loaded;
        apply_graph_passes(g, o);
        std::string first = neff::print_program(generate_program(g, o));
        CHECK(first == neff::print_program(generate_program(g, o)));
        test::E2EResult got = test::run_program(generate_program(g, o), g, inputs);
        CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
    }
}

TEST_CASE("plans read back as written; other text is not a plan") {
    Graph g = passed(kMatmul);
    sched::Group grp = sched::build_node_group(g, node_with_output(g, "y"));
    for (const sched::SchedulePlan &plan : autosched::candidate_plans(grp, trn1(), 3)) {
        sched::SchedulePlan back;
        CAPTURE(plan.describe());
        CHECK(sched::parse_plan(plan.describe(), back));
        CHECK(back == plan);
    }
    sched::SchedulePlan p;
    for (const char *junk : {"",
                             "matmul",
                             "matmul auto",
                             "matmul sideways",
                             "matmul auto, 0 buffers",
                             "matmul auto, transposes 4 per tile",
                             "matmul auto, 3 buffers, n <= 128",
                             "matmul auto, transposes x per tile",
                             "matmul auto, 3 buffers,",
                             "matmul streamed, n <= ",
                             "matmul b_resident, blocks of 0",
                             "matmul b_resident, blocks of",
                             "matmul a_resident, stores of 0 columns",
                             "matmul a_resident, stores of columns",
                             "matmul k_blocked, k blocks of 0",
                             "matmul k_blocked, k blocks of",
                             "matmul streamed, n <= 12x",
                             "matmul streamed, n <= 99999999999",
                             "conv default",
                             "conv, padded",
                             "image padded on chip, n <= 128",
                             "image padded on chip, output resident, n <= 128",
                             "output resident, n <= 128",
                             "matmul auto, output resident, n <= 128",
                             "matmul auto, staging in 0 buffers",
                             "matmul auto, staging in 2 buffers, 3 buffers",
                             "PE in critical-path order, matmul auto, 3 buffers",
                             "output resident, PE in critical-path order",
                             "PE in critical-path order, 3 buffers"}) {
        CAPTURE(junk);
        CHECK_FALSE(sched::parse_plan(junk, p));
    }
}

TEST_CASE("the tuning database keeps this version's fastest plan per workload and target") {
    test::TempDir dir;
    std::string path = dir.file("t.db");
    CHECK_THROWS_WITH_AS(autosched::TuningDb::open(path, /*create=*/false),
                         doctest::Contains("no such file"), UserError);
    auto db = autosched::TuningDb::open(path, /*create=*/true);
    auto row = [](const std::string &target, const std::string &plan, bool feasible, double ns) {
        return autosched::TuningRecord{"0123", "workload A", target,
                                       plan,   "script",     feasible,
                                       ns,     ns,           feasible ? "" : "refused"};
    };
    db->record(row("trn1", "default", true, 200));
    db->record(row("trn1", "matmul b_resident", true, 150));
    db->record(row("trn1", "matmul streamed", false, 0));
    db->record(row("inf2", "matmul a_resident", true, 100));
    auto best = db->best_plan("workload A", "trn1");
    REQUIRE(best);
    CHECK(best->first == "matmul b_resident");
    CHECK(best->second == 150);
    CHECK(db->recorded_plans("workload A", "trn1").size() == 3);
    CHECK_FALSE(db->best_plan("workload B", "trn1"));
    CHECK(db->rows() == 4);
    CHECK(db->foreign_rows() == 0);
    // Reopened, the rows are there.
    db.reset();
    CHECK(autosched::TuningDb::open(path, false)->best_plan("workload A", "inf2")->first ==
          "matmul a_resident");
}

TEST_CASE("a tuning session records candidates once; replay takes the best without measuring") {
    test::TempDir dir;
    Graph g = passed(kLayers);
    auto db = autosched::TuningDb::open(dir.file("t.db"), true);
    auto plans_of = [&](const autosched::SearchOptions &o) {
        autosched::Autoscheduler a(g, trn1(), o);
        std::vector<std::string> plans;
        for (const char *value : {"h1", "h2", "y"}) {
            const Node &n = node_with_output(g, value);
            plans.push_back(a.plan_for(
                                 sched::build_node_group(g, n), {},
                                 [&] { return sched::build_node_group(g, n); },
                                 [] { return autosched::ProgramContext(); })
                                .describe());
        }
        return std::make_pair(plans, a.stats());
    };
    auto [tuned, session] = plans_of({3, db.get(), 4});
    CHECK(session.recorded >= 4);
    CHECK(db->rows() == session.recorded);
    auto [resumed, again] = plans_of({3, db.get(), 4});
    CHECK(again.recorded == 0);
    CHECK(resumed == tuned);
    auto [replayed, replay] = plans_of({1, db.get(), 0});
    CHECK(replay.from_db == 2);
    CHECK(replay.measured == 0);
    CHECK(replayed == tuned);
}

TEST_CASE("-O3's whole-program check: the NEFF takes the time the check measured") {
    Graph g = passed(kLayers);
    CompileOptions o;
    o.optlevel = 3;
    CheckedPlans c = check_plans_on_program(g, o);
    CHECK(c.plans.size() == 2); // the two workloads with a choice
    int not_default = 0;
    for (const auto &[workload, plan] : c.plans)
        not_default += !plan.is_default();
    CHECK(c.tried + c.trusted == not_default + c.put_back);
    CHECK(c.put_back <= c.tried);
    o.fixed_plans = &c.plans;
    o.keep_resident = c.keep_resident;
    o.read_in_place = c.read_in_place;
    o.whole_model_moves = c.whole_model_moves;
    // The program of -O3's search, or of -O2's where that is faster (never slower than -O2).
    CHECK((c.search_level == 2 || c.search_level == 3));
    o.optlevel = c.search_level;
    // Weights prefetched, if kept, with the room each group's weights took in the program checked.
    CHECK((c.prefetch.empty() || c.prefetch == c.group_lifetime_bytes));
    if (!c.prefetch.empty())
        o.prefetch_bytes = &c.prefetch;
    neff::Program p = generate_program(g, o); // with the weights' bytes, as written
    rt::Machine machine(trn1(), p, /*functional=*/false);
    CHECK(rt::simulate(machine).summary.total_ns == c.program_ns);
    // No slower than the program -O2 writes.
    CompileOptions o2;
    o2.optlevel = 2;
    neff::Program p2 = generate_program(g, o2);
    rt::Machine m2(trn1(), p2, /*functional=*/false);
    CHECK(c.program_ns <= rt::simulate(m2).summary.total_ns);
}

TEST_CASE("-O3's whole-program check keeps a plan that won its window widely without a trial") {
    // Two convolutions of 16 x 16 images (rows of 64 bytes) with constant weights: padded on
    // chip, each wins its window by far more than the margin, and no program is compiled to try
    // them one by one.
    Graph g = test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 128, 16, 16] x, float[128, 128, 3, 3] w1, float[128, 128, 3, 3] w2)
    => (float[1, 128, 16, 16] y) {
  h = Conv <pads = [1, 1, 1, 1]> (x, w1)
  r = Relu(h)
  y = Conv <pads = [1, 1, 1, 1]> (r, w2)
}
)");
    auto values = test::random_inputs(g, 3);
    for (const char *w : {"w1", "w2"}) {
        g.values.at(w).constant = std::make_shared<HostTensor>(values.at(w));
        g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), w));
    }
    apply_graph_passes(g, CompileOptions{});
    CompileOptions o;
    o.optlevel = 3;
    std::map<std::string, double> gains;
    o.window_gains = &gains;
    generate_program(g, o);
    REQUIRE(gains.size() == 2);
    for (const auto &[workload, gain] : gains)
        CHECK(gain >= 1.05);
    o.window_gains = nullptr;
    CheckedPlans c = check_plans_on_program(g, o);
    CHECK(c.trusted == 2);
    CHECK(c.tried == 0);
    for (const auto &[workload, plan] : c.plans)
        CHECK(plan.describe() == "image padded on chip");
}

namespace {

// Two layers of one workload (matmul, bias, activation: one fused group each), a third of another
// shape, and a softmax over the result.
const char *kBiasLayers = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x, float[256, 256] w1, float[256] b1, float[256, 256] w2, float[256] b2,
   float[256, 384] w3) => (float[128, 384] y) {
  m1 = MatMul(x, w1)
  a1 = Add(m1, b1)
  h1 = Relu(a1)
  m2 = MatMul(h1, w2)
  a2 = Add(m2, b2)
  h2 = Relu(a2)
  m3 = MatMul(h2, w3)
  y = Softmax<axis = -1>(m3)
}
)";

} // namespace

TEST_CASE("a group of a workload and plan lowered before takes that lowering, rebound") {
    Graph g = passed(kLayers);
    const Node &l1 = node_with_output(g, "h1"), &l2 = node_with_output(g, "h2"),
               &l3 = node_with_output(g, "y");
    LoweringCache cache;
    int lowerings = 0;
    auto lower = [&](const Node &n, const sched::SchedulePlan &plan) {
        sched::Group grp = scheduled(g, n, plan);
        std::string workload = autosched::workload_of(g, grp, {}, "trn1").text;
        return cache.lowered(grp, workload, plan, [&] {
            lowerings++;
            return codegen::lower_group(grp);
        });
    };
    auto values = [](const codegen::LoweredGroup &lg) {
        std::set<std::string> v;
        for (const auto &[buffer, value] : lg.hbm_buffers)
            v.insert(value);
        return v;
    };
    codegen::LoweredGroup first = lower(l1, {});
    CHECK(values(first) == std::set<std::string>{"x", "w1", "h1"});
    codegen::LoweredGroup second = lower(l2, {});
    CHECK(lowerings == 1); // the second layer is the first's workload: not lowered again
    CHECK(second.body.same_as(first.body));
    CHECK(values(second) == std::set<std::string>{"h1", "w2", "h2"});
    lower(l3, {}); // another shape
    CHECK(lowerings == 2);
    lower(l2, plan_of(Operands::BResident)); // another plan: another schedule, lowered
    CHECK(lowerings == 3);
    CHECK(cache.lowered_count() == 3);
    CHECK(cache.reused_count() == 1);
}

TEST_CASE("reusing lowerings changes neither the values nor the time of a program") {
    Graph loaded = load_text(kBiasLayers);
    auto inputs = test::random_inputs(loaded, 5);
    auto want = alg::run_reference(loaded, inputs);
    for (int level : {1, 2}) {
        CAPTURE(level);
        CompileOptions o;
        o.optlevel = level;
        Graph g = loaded;
        apply_graph_passes(g, o);
        test::E2EResult reused = test::run_program(generate_program(g, o), g, inputs);
        o.reuse_lowered_groups = false;
        test::E2EResult each = test::run_program(generate_program(g, o), g, inputs);
        CHECK(reused.outputs.at("y").bytes() == each.outputs.at("y").bytes());
        CHECK(reused.summary.total_ns == each.summary.total_ns);
        CHECK(test::compare(reused.outputs.at("y"), want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
    }
}

namespace {

/** GPT-2's QKV projection at sequence 128: some of its plans are estimated well above the best. */
const char *const kGpt2QkvProjection = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 768] x, float[768, 2304] w) => (float[128, 2304] y) {
  y = MatMul(x, w)
}
)";

/** The plan a search of `options` chooses for node `n` alone, and its counts. */
std::pair<sched::SchedulePlan, autosched::SearchStats>
search_node(const Graph &g, const Node &n, const autosched::SearchOptions &options) {
    autosched::Autoscheduler a(g, trn1(), options);
    sched::SchedulePlan plan = a.plan_for(
        sched::build_node_group(g, n), {}, [&] { return sched::build_node_group(g, n); },
        [] { return autosched::ProgramContext(); });
    return {plan, a.stats()};
}

} // namespace

TEST_CASE("candidates estimated far above the best are not simulated, and change no choice") {
    // GPT-2's QKV projection at sequence 128: some plans are estimated well above the best.
    Graph g = passed(kGpt2QkvProjection);
    const Node &mm = node_with_output(g, "y");
    int pruned = 0;
    for (int level : {2, 3}) {
        CAPTURE(level);
        auto search = [&](double prune_above) {
            autosched::SearchOptions o{level};
            o.prune_above = prune_above;
            return search_node(g, mm, o);
        };
        auto [every_plan, every] = search(0);
        auto [plan, stats] = search(autosched::kPruneAbove);
        CHECK(every.pruned == 0);
        CHECK(plan == every_plan);
        CHECK(stats.chosen_ns == every.chosen_ns);
        CHECK(stats.measured + stats.pruned == every.measured);
        pruned += stats.pruned;
    }
    CHECK(pruned > 0);
}

TEST_CASE("candidates measured in parallel: the choices, counts and program of one at a time") {
    // GPT-2's QKV projection (some candidates pruned) searched alone, then a whole program, with
    // 1, 2, 3 and 8 jobs.
    Graph g = passed(kGpt2QkvProjection);
    const Node &mm = node_with_output(g, "y");
    for (int level : {2, 3}) {
        CAPTURE(level);
        auto search = [&](int jobs) {
            autosched::SearchOptions o{level};
            o.jobs = jobs;
            return search_node(g, mm, o);
        };
        auto [one_plan, one] = search(1);
        CHECK(one.pruned > 0);
        for (int jobs : {2, 3, 8}) {
            CAPTURE(jobs);
            auto [plan, stats] = search(jobs);
            CHECK(plan == one_plan);
            CHECK(stats.measured == one.measured);
            CHECK(stats.pruned == one.pruned);
            CHECK(stats.chosen_ns == one.chosen_ns);
            CHECK(stats.default_ns == one.default_ns);
        }
        Graph layers = passed(kLayers);
        CompileOptions o;
        o.optlevel = level;
        o.num_parallel_jobs = 1;
        std::vector<uint8_t> sequential = neff::write_neff(generate_program(layers, o));
        for (int jobs : {2, 3, 8}) {
            CAPTURE(jobs);
            o.num_parallel_jobs = jobs;
            CHECK(neff::write_neff(generate_program(layers, o)) == sequential);
        }
    }
}
