// Schedule scripts applied to groups: the scripted group lowers, selects instructions that follow
// the script (tile sizes change the instruction count) and still computes the right values on the
// simulator; the default schedule printed as a script gives back the same instructions; unknown
// names and schedules Halide rejects are coded errors with the script's line (NHC_ESCH110..116).

#include "ScheduleTestUtil.h"

#include <cmath>
#include <doctest/doctest.h>

using namespace nhc;
using nhc::test::compile_group;
using nhc::test::Compiled;
using nhc::test::error_code;
using nhc::test::gemm_graph;
using nhc::test::one_node_graph;
using nhc::test::scheduled_group;

namespace {

// gemm_graph() tiled N x M by the script; K in chunks of 128.
std::string gemm_script(int n_tile) {
    return test::gemm_block("tile(v0, v1, no, mo, ni, mi, " + std::to_string(n_tile) + ", 64)");
}

// Softmax over rows of 32, rows tiled by the script.
std::string softmax_script(int rows) {
    std::string s = "node \"node\":\n  final0.split(v1, v1o, v1i, " + std::to_string(rows) + ")\n";
    for (const char *st : {"out", "rcp", "sum", "exp", "max", "stage_0"})
        s += std::string("  ") + st + ".compute_at(final0, v1o).store_in(SBUF)\n";
    for (const char *st : {"stage_0 1", "max 0", "exp 1", "sum 0", "rcp 0", "out 1"})
        s += std::string("  hint partition_dim ") + st + "\n";
    return s;
}

/** The group's schedule printed as a script (what --dump-schedules writes for it). */
std::string printed(const sched::Group &grp) {
    sched::ScheduleScript again;
    again.blocks.push_back(sched::describe_schedule(grp));
    return again.to_string();
}

/** Inputs of gemm_graph() ([64, 256] x [256, 512]) and their product, in double. */
struct GemmData {
    std::vector<float> a, b;
    std::vector<double> want;
};
GemmData gemm_data() {
    GemmData d{test::ramp(64 * 256, 0.01f, -0.5f), test::ramp(256 * 512, 0.02f, -1),
               std::vector<double>(64 * 512, 0.0)};
    for (int m = 0; m < 64; m++)
        for (int k = 0; k < 256; k++)
            for (int n = 0; n < 512; n++)
                d.want[m * 512 + n] += double(d.a[m * 256 + k]) * d.b[k * 512 + n];
    return d;
}

/** Relative L2 error of `got` against `want` (the project's accuracy measure). */
double rel_l2_error(const std::vector<float> &got, const std::vector<double> &want) {
    REQUIRE(got.size() == want.size());
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size(); i++) {
        num += (got[i] - want[i]) * (got[i] - want[i]);
        den += want[i] * want[i];
    }
    return std::sqrt(num / den);
}

/** The opcodes of a compiled group, in selection order. */
std::vector<neff::Opcode> opcodes(const Compiled &c) {
    std::vector<neff::Opcode> ops;
    for (const codegen::SelectedInstr &i : c.instrs)
        ops.push_back(i.instr.op);
    return ops;
}

/** The code of applying `block_lines` to the group of `g`'s node, and the message. */
std::string apply_error(const Graph &g, const std::string &block_lines, std::string *msg) {
    return error_code(
        [&] {
            sched::Group grp = sched::build_node_group(g, g.nodes[0]);
            sched::ScheduleScript s =
                sched::parse_schedule("node \"node\":\n" + block_lines, "t.sched");
            sched::apply_schedule_script(s, grp);
        },
        msg);
}

} // namespace

TEST_CASE("a script's N tile sets the number of matmuls, and the Gemm stays correct") {
    Graph g = gemm_graph();
    sched::Group def = scheduled_group(g, "");
    CHECK(compile_group(g, def).count(neff::Opcode::Matmul) == 2); // one 512 tile x 2 K chunks
    const GemmData d = gemm_data();
    for (int tile : {512, 256, 128}) {
        CAPTURE(tile);
        sched::Group grp = scheduled_group(g, gemm_script(tile));
        Compiled c = compile_group(g, grp);
        CHECK(c.count(neff::Opcode::Matmul) == 2 * (512 / tile));
        CHECK(rel_l2_error(test::run(c, g, {{"in0", d.a}, {"in1", d.b}}), d.want) < 1e-4);
    }
}

TEST_CASE("hint resident: each tile of the stage keeps its region past the group, and the hint "
          "reads back as written") {
    Graph g = gemm_graph();
    const GemmData d = gemm_data();
    for (bool resident : {false, true}) {
        CAPTURE(resident);
        sched::Group grp =
            scheduled_group(g, gemm_script(256) + (resident ? "  hint resident out\n" : ""));
        CHECK(grp.resident.size() == (resident ? 1u : 0u));
        CHECK((printed(grp).find("  hint resident out\n") != std::string::npos) == resident);
        // Two output tiles of 256 columns (fp32: 1 KiB per partition each), each in its own region.
        Compiled c = compile_group(g, grp);
        REQUIRE(c.kept_sbuf.size() == (resident ? 2u : 0u));
        if (resident) {
            CHECK(c.kept_sbuf[0].second == 1024);
            CHECK(c.kept_sbuf[0].first != c.kept_sbuf[1].first);
        }
        CHECK(rel_l2_error(test::run(c, g, {{"in0", d.a}, {"in1", d.b}}), d.want) < 1e-4);
    }
}

TEST_CASE("hint pe_order critical_path marks the group's PE instructions for the list scheduler, "
          "and reads back as written") {
    Graph g = gemm_graph();
    const GemmData d = gemm_data();
    for (bool ranked : {false, true}) {
        CAPTURE(ranked);
        sched::Group grp = scheduled_group(
            g, gemm_script(256) + (ranked ? "  hint pe_order critical_path\n" : ""));
        CHECK(grp.pe_critical_path == ranked);
        CHECK((printed(grp).find("  hint pe_order critical_path\n") != std::string::npos) ==
              ranked);
        Compiled c = compile_group(g, grp);
        int pe = 0, marked = 0;
        for (const codegen::SelectedInstr &i : c.instrs) {
            pe += i.engine == neff::Engine::PE;
            marked += i.by_critical_path;
            CHECK((!i.by_critical_path || i.engine == neff::Engine::PE));
        }
        CHECK(pe > 0);
        CHECK(marked == (ranked ? pe : 0));
        CHECK(rel_l2_error(test::run(c, g, {{"in0", d.a}, {"in1", d.b}}), d.want) < 1e-4);
    }
}

TEST_CASE("hint engine runs a stage's instructions on the engine named where it can, reads back "
          "as written, and the values stay right") {
    // Softmax's `out` = exp * rcp, rcp one value per row: a tensor_scalar product on DVE or
    // GpSimd, or an ACT copy with rcp as its scale; two row tiles of 128.
    Graph g = one_node_graph("Softmax", {{256, 32}}, {256, 32});
    std::vector<float> x = test::ramp(256 * 32, 0.05f, -2);
    sched::Group plain = scheduled_group(g, softmax_script(128));
    std::vector<double> want;
    for (float v : test::run(compile_group(g, plain), g, {{"in0", x}}))
        want.push_back(v);
    auto scaled_on = [](const Compiled &c, neff::Engine e) {
        int n = 0;
        for (const codegen::SelectedInstr &i : c.instrs)
            n += i.engine == e && i.instr.s0.is_ap &&
                 (i.instr.op == neff::Opcode::TensorScalar ||
                  (i.instr.op == neff::Opcode::Activation && i.instr.func == neff::ActFunc::Copy));
        return n;
    };
    for (const char *engine : {"act", "dve", "pool"}) {
        CAPTURE(engine);
        std::string hint = std::string("  hint engine out ") + engine + "\n";
        sched::Group grp = scheduled_group(g, softmax_script(128) + hint);
        CHECK(printed(grp).find(hint) != std::string::npos);
        Compiled c = compile_group(g, grp);
        neff::Engine e = std::string(engine) == "act"   ? neff::Engine::ACT
                         : std::string(engine) == "dve" ? neff::Engine::DVE
                                                        : neff::Engine::POOL;
        CHECK(scaled_on(c, e) == 2);
        CHECK(rel_l2_error(test::run(c, g, {{"in0", x}}), want) < 1e-6);
    }
    // GpSimd does not reduce (tensor_reduce is DVE's): max's instructions stay where they were.
    sched::Group grp = scheduled_group(g, softmax_script(128) + "  hint engine max pool\n");
    Compiled c = compile_group(g, grp);
    for (const codegen::SelectedInstr &i : c.instrs)
        if (i.instr.op != neff::Opcode::Dma) { // transfers are queued from GpSimd
            CAPTURE(std::string(neff::opcode_name(i.instr.op)));
            CHECK(i.engine != neff::Engine::POOL);
        }
}

TEST_CASE("matmuls split by columns each overwrite their own zeroed columns first, then "
          "accumulate") {
    // K chunks inside the column loop: one matmul per output column and K chunk. The schedule
    // fuzzer's variant 1871 (seed 1): every column after the first accumulated onto what the
    // PSUM bank held before, as only the tile's first matmul overwrote.
    Graph g = gemm_graph();
    const GemmData d = gemm_data();
    sched::Group grp =
        scheduled_group(g, test::gemm_block("tile(v0, v1, no, mo, ni, mi, 512, 64)",
                                            "  acc.update().reorder(ki, v1, ko, v0)\n"));
    Compiled c = compile_group(g, grp);
    int overwrites = 0, accumulates = 0;
    for (const codegen::SelectedInstr &i : c.instrs)
        if (i.instr.op == neff::Opcode::Matmul)
            (i.instr.has(neff::kFlagAccumulate) ? accumulates : overwrites)++;
    CHECK(overwrites == 512);  // one per column
    CHECK(accumulates == 512); // the second K chunk of each
    CHECK(rel_l2_error(test::run(c, g, {{"in0", d.a}, {"in1", d.b}}), d.want) < 1e-4);
}

TEST_CASE("a script's row tile sets the Softmax instruction count, and Softmax stays correct") {
    Graph g = one_node_graph("Softmax", {{256, 32}}, {256, 32});
    std::vector<float> x = test::ramp(256 * 32, 0.05f, -2);
    std::vector<double> want(x.size());
    for (int r = 0; r < 256; r++) {
        double mx = -1e30, sum = 0;
        for (int c = 0; c < 32; c++)
            mx = std::max(mx, double(x[r * 32 + c]));
        for (int c = 0; c < 32; c++)
            sum += std::exp(x[r * 32 + c] - mx);
        for (int c = 0; c < 32; c++)
            want[r * 32 + c] = std::exp(x[r * 32 + c] - mx) / sum;
    }
    sched::Group def = scheduled_group(g, "");
    size_t per_128 = compile_group(g, def).instrs.size();
    sched::Group g128 = scheduled_group(g, softmax_script(128));
    CHECK(compile_group(g, g128).instrs.size() == per_128);
    sched::Group g64 = scheduled_group(g, softmax_script(64));
    Compiled c64 = compile_group(g, g64);
    CHECK(c64.instrs.size() == 2 * per_128); // twice the tiles, the same instructions per tile
    CHECK(rel_l2_error(test::run(c64, g, {{"in0", x}}), want) < 1e-4);
}

TEST_CASE("the default schedule printed as a script compiles to the same instructions") {
    std::vector<Graph> graphs = {
        gemm_graph(),
        one_node_graph("MatMul", {{2, 64, 96}, {96, 640}}, {2, 64, 640}),
        one_node_graph("Softmax", {{256, 32}}, {256, 32}),
        one_node_graph("LayerNormalization", {{200, 48}, {48}, {48}}, {200, 48}),
        one_node_graph("ReduceSum", {{4, 8}}, {4, 1}, {{"axes", std::vector<int64_t>{1}}}),
        one_node_graph("Add", {{4, 8}, {8}}, {4, 8}),
        one_node_graph("Transpose", {{4, 8}}, {8, 4}),
    };
    for (const Graph &g : graphs) {
        CAPTURE(g.nodes[0].op_type);
        std::string text =
            sched::print_default_schedule(g, g.nodes[0], target::target_by_name("trn1"));
        CAPTURE(text);
        sched::ScheduleScript s = sched::parse_schedule(text, "default.sched");
        CHECK(s.to_string() == text);
        sched::Group def = scheduled_group(g, "");
        sched::Group scripted = sched::build_node_group(g, g.nodes[0]);
        REQUIRE(sched::apply_schedule_script(s, scripted));
        // Applied and described again: the same text (parse -> apply -> print).
        sched::ScheduleScript again;
        again.blocks.push_back(sched::describe_schedule(scripted));
        again.blocks[0].leading_comments = s.blocks[0].leading_comments;
        CHECK(again.to_string() == text);
        CHECK(scripted.partition_dim.size() == def.partition_dim.size());
        CHECK(opcodes(compile_group(g, scripted)) == opcodes(compile_group(g, def)));
    }
}

TEST_CASE("a block names nodes of the model; otherwise NHC_ESCH110") {
    Graph g = gemm_graph();
    sched::ScheduleScript s = sched::parse_schedule(
        "node \"node\":\n  out.compute_root()\n\nnode \"nod3\":\n  out.compute_root()\n",
        "t.sched");
    std::string msg;
    CHECK(error_code([&] { sched::check_schedule_nodes(s, g); }, &msg) == "NHC_ESCH110");
    CHECK(msg == "t.sched:4: node \"nod3\" is not in the model; the closest node name is \"node\"");
    sched::Group grp = sched::build_node_group(g, g.nodes[0]);
    CHECK_FALSE(sched::apply_schedule_script(sched::parse_schedule("node \"other\":\n"), grp));
}

TEST_CASE("an unknown stage is NHC_ESCH111") {
    Graph g = gemm_graph();
    std::string msg;
    CHECK(apply_error(g, "  accu.compute_root()\n", &msg) == "NHC_ESCH111");
    // The list follows the algorithm's stages; the staged inputs come first, the outputs last.
    CHECK(msg.find("t.sched:2: node \"node\": unknown stage 'accu'; the stages of this node are "
                   "stage_0, stage_1, ") == 0);
    CHECK(msg.find(", acc, ") != std::string::npos);
    CHECK(msg.find(", final0") == msg.size() - 8);
    CHECK(apply_error(g, "  out.compute_root()\n  acc.compute_at(final1, v0)\n", &msg) ==
          "NHC_ESCH111");
    CHECK(msg.find("t.sched:3: node \"node\": unknown stage 'final1'") == 0);
    CHECK(apply_error(g, "  hint partition_dim psum 1\n", &msg) == "NHC_ESCH111");
    CHECK(msg.find("t.sched:2:") == 0);
}

TEST_CASE("an unknown loop is NHC_ESCH112") {
    Graph g = gemm_graph();
    std::string msg;
    CHECK(apply_error(g, "  final0.split(v2, a, b, 8)\n", &msg) == "NHC_ESCH112");
    CHECK(msg == "t.sched:2: node \"node\": stage final0 has no loop 'v2'; its loops, innermost "
                 "first, are v0, v1");
    CHECK(apply_error(g, "  acc.update().split(k, ko, ki, 128).reorder(k, v0)\n", &msg) ==
          "NHC_ESCH112");
    CHECK(msg.find("stage acc.update(0) has no loop 'k'; its loops, innermost first, are ki, ko, "
                   "v0, v1") != std::string::npos);
    CHECK(apply_error(g, "  acc.update().split(k.y, ko, ki, 128)\n", &msg) == "NHC_ESCH112");
    // compute_at names a loop of the consumer's last stage, checked after the block's splits.
    CHECK(apply_error(g, "  acc.compute_at(final0, no)\n  final0.split(v0, n0, ni, 8)\n", &msg) ==
          "NHC_ESCH112");
    CHECK(msg.find("t.sched:2: node \"node\": stage final0 has no loop 'no'; its loops, innermost "
                   "first, are ni, n0, v1") == 0);
    CHECK(apply_error(g, "  acc.compute_at(final0, no)\n  final0.split(v0, no, ni, 8)\n", &msg) ==
          "no error");
}

TEST_CASE("update() of a stage without that update is NHC_ESCH113") {
    Graph g = gemm_graph();
    std::string msg;
    CHECK(apply_error(g, "  out.update().split(v0, a, b, 8)\n", &msg) == "NHC_ESCH113");
    CHECK(msg == "t.sched:2: node \"node\": stage 'out' has no update definition; found update(0)");
    CHECK(apply_error(g, "  acc.update(1).split(v0, a, b, 8)\n", &msg) == "NHC_ESCH113");
    CHECK(msg.find("stage 'acc' has 1 update definition(s), numbered from 0; found update(1)") !=
          std::string::npos);
}

TEST_CASE("a directive Halide rejects is NHC_ESCH114 at its line") {
    Graph g = gemm_graph();
    std::string msg;
    CHECK(apply_error(g, "  final0.split(v0, v1, vi, 8)\n", &msg) == "NHC_ESCH114");
    CHECK(msg.find("t.sched:2: node \"node\": halide rejects split: ") == 0);
    CHECK(msg.find("v1") != std::string::npos);
    CHECK(apply_error(g, "  out.compute_root()\n  final0.reorder(v0, v0)\n", &msg) ==
          "NHC_ESCH114");
    CHECK(msg.find("t.sched:3: node \"node\": halide rejects reorder") == 0);
}

TEST_CASE("a partition_dim hint beyond the stage's dimensions is NHC_ESCH115") {
    Graph g = gemm_graph();
    std::string msg;
    CHECK(apply_error(g, "  hint partition_dim acc 2\n", &msg) == "NHC_ESCH115");
    CHECK(msg == "t.sched:2: node \"node\": hint partition_dim acc 2: the stage has 2 "
                 "dimension(s), numbered from 0 (v0, innermost)");
}

TEST_CASE("a buffers hint needs a positive count: NHC_ESCH115") {
    Graph g = gemm_graph();
    std::string msg;
    CHECK(apply_error(g, "  hint buffers acc 0\n", &msg) == "NHC_ESCH115");
    CHECK(msg == "t.sched:2: node \"node\": hint buffers acc 0: expected a positive count");
}

TEST_CASE("a schedule Halide cannot lower is NHC_ESCH116 at the line placing the stage") {
    Graph g = gemm_graph();
    // lhs_t inside final0's ni loop, but its consumer acc is computed outside it, at no.
    std::string text = gemm_script(256);
    text += "  lhs_t.compute_at(final0, ni)\n";
    sched::ScheduleScript s = sched::parse_schedule(text, "t.sched");
    sched::Group grp = sched::build_node_group(g, g.nodes[0]);
    REQUIRE(sched::apply_schedule_script(s, grp));
    std::string msg;
    CHECK(error_code(
              [&] {
                  sched::lower_scripted(s, *s.find("node"), grp,
                                        [&] { return codegen::lower_group(grp); });
              },
              &msg) == "NHC_ESCH116");
    CAPTURE(msg);
    CHECK(msg.find("t.sched:12: node \"node\": halide cannot lower this schedule (stage "
                   "'lhs_t'): ") == 0);
}

namespace {

// ReduceMax / ReduceSum of [128, 64] over its last axis: the reference, and a script block.
std::vector<double> reduce_reference(const std::string &op, const std::vector<float> &x) {
    std::vector<double> want(128);
    for (int r = 0; r < 128; r++) {
        double a = op == "ReduceMax" ? -1e30 : 0;
        for (int c = 0; c < 64; c++)
            a = op == "ReduceMax" ? std::max(a, double(x[r * 64 + c])) : a + x[r * 64 + c];
        want[r] = a;
    }
    return want;
}

std::string reduce_script(const std::string &lines) {
    return "node \"node\":\n  out.compute_root().store_in(SBUF)\n"
           "  acc.compute_root().store_in(SBUF)\n" +
           lines +
           "  hint partition_dim stage_0 1\n  hint partition_dim acc 0\n"
           "  hint partition_dim out 1\n";
}

} // namespace

TEST_CASE("a reduction split and computed per outer chunk accumulates its partial results") {
    // The input is staged one chunk of 16 columns at a time (at the outer reduction loop), so
    // each chunk's tensor_reduce must combine with what the earlier chunks left in acc; it used
    // to overwrite it (only the last chunk counted: relative error 0.08 for max, 0.76 for sum).
    std::vector<float> x = test::ramp(128 * 64, 0.37f, -20);
    for (const char *op : {"ReduceMax", "ReduceSum"}) {
        CAPTURE(op);
        Graph g = one_node_graph(op, {{128, 64}}, {128, 1}, {{"axes", std::vector<int64_t>{1}}});
        sched::Group whole_group =
            scheduled_group(g, reduce_script("  stage_0.compute_root().store_in(SBUF)\n"));
        Compiled whole = compile_group(g, whole_group);
        sched::Group chunked_group =
            scheduled_group(g, reduce_script("  stage_0.compute_at(acc, ro).store_in(SBUF)\n"
                                             "  acc.update().split(r, ro, ri, 16)."
                                             "reorder(ri, v0, ro)\n"));
        Compiled chunked = compile_group(g, chunked_group);
        CHECK(chunked.count(neff::Opcode::TensorReduce) == 4);
        CHECK(chunked.count(neff::Opcode::TensorTensor) == 4); // one combine per chunk
        CHECK(whole.count(neff::Opcode::TensorTensor) == 0);   // a whole row: no combine
        CHECK(rel_l2_error(test::run(chunked, g, {{"in0", x}}), reduce_reference(op, x)) < 1e-6);
        CHECK(rel_l2_error(test::run(whole, g, {{"in0", x}}), reduce_reference(op, x)) < 1e-6);
    }
}

TEST_CASE("a tile the engines cannot start at its partition is NHC_EGEN018 when compiling") {
    // Staging one row's chunk per (row, chunk) puts each reduction on one partition, starting at
    // partitions 1, 2, ...: the runtime used to refuse the NEFF (NHC_ERT005).
    Graph g =
        one_node_graph("ReduceMax", {{128, 64}}, {128, 1}, {{"axes", std::vector<int64_t>{1}}});
    std::string msg;
    std::string code = error_code(
        [&] {
            sched::Group grp =
                scheduled_group(g, reduce_script("  stage_0.compute_at(acc, ro).store_in(SBUF)\n"
                                                 "  acc.update().split(r, ro, ri, 16)\n"));
            compile_group(g, grp);
        },
        &msg);
    CHECK(code == "NHC_EGEN018");
    CHECK(msg.find("from partition 1") != std::string::npos);
    CHECK(msg.find("multiple of 32") != std::string::npos);
}

TEST_CASE("K in two stages (rfactor): the K-blocked plan adds each block's partial products into "
          "its sum in SBUF, computes the product, and prints as a script that compiles to the "
          "same instructions") {
    // [256, 1024] x [1024, 512], A stored K innermost: two K blocks of 512, two row tiles of 128
    // and one column tile of 512, so four partial products each added once into the sum.
    Graph g = one_node_graph("MatMul", {{256, 1024}, {1024, 512}}, {256, 512});
    sched::SchedulePlan plan;
    plan.matmul.operands = sched::MatmulPlan::Operands::KBlocked;
    plan.matmul.k_block = 512;
    sched::Group grp = sched::build_node_group(g, g.nodes[0]);
    sched::apply_default_schedule(grp, target::target_by_name("trn1"), plan);
    REQUIRE(grp.stage("acc_intm").defined());
    Compiled blocked = compile_group(g, grp);
    CHECK(blocked.count(neff::Opcode::TensorTensor) == 4);
    CHECK(blocked.count(neff::Opcode::Matmul) == 2 * 8); // per row tile, 8 K chunks

    std::vector<float> a = test::ramp(256 * 1024, 0.01f, -0.5f),
                       b = test::ramp(1024 * 512, 0.02f, -1);
    std::vector<double> want(256 * 512, 0.0);
    for (int m = 0; m < 256; m++)
        for (int k = 0; k < 1024; k++)
            for (int n = 0; n < 512; n++)
                want[m * 512 + n] += double(a[m * 1024 + k]) * b[k * 512 + n];
    CHECK(rel_l2_error(test::run(blocked, g, {{"in0", a}, {"in1", b}}), want) < 1e-6);

    std::string text = printed(grp);
    CHECK(text.find("acc.update().split(k, kb, kr, 512).rfactor(kb, u)") != std::string::npos);
    CHECK(text.find("acc_intm.compute_at(acc, no).store_in(PSUM)") != std::string::npos);
    sched::Group again = scheduled_group(g, text);
    CHECK(opcodes(compile_group(g, again)) == opcodes(blocked));
    CHECK(printed(again) == text);
}

TEST_CASE("rfactor of a loop no split made is NHC_ESCH114; rfactor must end an update's line: "
          "NHC_ESCH102") {
    std::string msg;
    CHECK(apply_error(test::gemm_graph(), "  acc.update().rfactor(k, u)\n", &msg) == "NHC_ESCH114");
    CHECK(msg.find("not the outer loop of a split") != std::string::npos);
    CHECK(error_code([] {
              sched::parse_schedule("node \"node\":\n  acc.update().split(k, kb, kr, 128)."
                                    "rfactor(kb, u).reorder(kr, v0)\n",
                                    "t.sched");
          }) == "NHC_ESCH102");
    CHECK(error_code([] {
              sched::parse_schedule("node \"node\":\n  acc.split(v0, a, b, 2).rfactor(a, u)\n",
                                    "t.sched");
          }) == "NHC_ESCH102");
}
