// Schedule scripts whose splits leave tails or put two loops on one instruction's partitions:
// what the schedule fuzzer found. Each either lowers correctly (checked on the simulator against
// the host reference) or is refused with a code naming the stage and loop: NHC_EGEN019 for copies
// outside an HBM input, NHC_EGEN011 for a matmul operand left in PSUM, NHC_EGEN018 for a tile
// the engines cannot start at its partition, NHC_ESCH117 for an output split whose tiles would
// leave the tensor and for PredicateStores tails; and NHC_ESCH118 for a block of a node compiled
// without a schedule (Concat, views), which used to be ignored; NHC_ESCH120 for a stage stored
// outside its compute level (Halide's sliding window with folded storage gave wrong values).
// Also: a huge unroll.

#include "ScheduleTestUtil.h"

#include "algorithms/Reference.h"

#include <cmath>
#include <doctest/doctest.h>

using namespace nhc;
using nhc::test::compile_group;
using nhc::test::Compiled;
using nhc::test::error_code;
using nhc::test::gemm_block;
using nhc::test::gemm_graph;
using nhc::test::one_node_graph;
using nhc::test::scheduled_group;

namespace {

/** The code and message of scheduling `g`'s node by `script` and compiling it. */
std::string compile_error(const Graph &g, const std::string &script, std::string *msg) {
    return error_code(
        [&] {
            sched::Group grp = sched::build_node_group(g, g.nodes[0]);
            sched::apply_schedule_script(sched::parse_schedule(script, "test.sched"), grp);
            compile_group(g, grp);
        },
        msg);
}

/** Runs `g` scheduled by `script` on the simulator; the relative L2 error against the host
 *  reference of the graph. */
double error_of(const Graph &g, const std::string &script) {
    std::map<std::string, std::vector<float>> in;
    std::map<std::string, HostTensor> host;
    float scale = 0.01f;
    for (const std::string &name : g.inputs) {
        const Shape &s = g.value(name).shape;
        std::vector<float> v = test::ramp(static_cast<size_t>(shape_numel(s)), scale, -0.4f);
        scale *= 1.7f;
        HostTensor t(DType::Float32, s);
        for (size_t i = 0; i < v.size(); i++)
            t.set_f64(static_cast<int64_t>(i), v[i]);
        in[name] = v;
        host[name] = t;
    }
    HostTensor want = alg::run_reference(g, host).at("out");
    sched::Group grp = scheduled_group(g, script);
    std::vector<float> got = test::run(compile_group(g, grp), g, in);
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size(); i++) {
        double w = want.get_f64(static_cast<int64_t>(i));
        num += (got[i] - w) * (got[i] - w);
        den += w * w;
    }
    return std::sqrt(num / den);
}

/** The default schedule of `g`'s node with `edit` appended and lines containing `drop` left
 *  out. */
std::string edited_default(const Graph &g, const std::string &edit, const std::string &drop = "") {
    std::string text = sched::print_default_schedule(g, g.nodes[0], target::target_by_name("trn1"));
    std::string out;
    for (size_t at = 0; at < text.size();) {
        size_t nl = text.find('\n', at);
        std::string line = text.substr(at, nl + 1 - at);
        if (drop.empty() || line.find(drop) == std::string::npos)
            out += line;
        at = nl + 1;
    }
    return out + edit;
}

} // namespace

TEST_CASE("an output split whose tiles would leave the tensor is NHC_ESCH117, not a bad NEFF") {
    // The docs' first example had an M tile of 128 on an M of 64: ShiftInwards started the tile
    // at row -64 and the NEFF's store wrote bytes [-65536, 65536) (NHC_ENEFF008 at load).
    Graph g = gemm_graph();
    std::string msg;
    CHECK(compile_error(g, gemm_block("tile(v0, v1, no, mo, ni, mi, 256, 128)"), &msg) ==
          "NHC_ESCH117");
    CHECK(msg == "test.sched:2: node \"node\": tile of final0 cannot be lowered: loop v1 of the "
                 "output has extent 64, which the split factor 128 exceeds: with "
                 "TailStrategy::ShiftInwards the tiles would start before the tensor; split by a "
                 "factor of at most 64, or use TailStrategy::GuardWithIf");
    // RoundUp that does not divide writes past the end; one that divides is fine.
    CHECK(compile_error(g,
                        gemm_block("split(v0, no, ni, 384, TailStrategy::RoundUp)"
                                   ".split(v1, mo, mi, 64)"),
                        &msg) == "NHC_ESCH117");
    CHECK(msg.find("loop v0 of the output has extent 512, which the split factor 384 does not "
                   "divide: with TailStrategy::RoundUp the tiles would run past the end") !=
          std::string::npos);
    CHECK(error_of(g, gemm_block("split(v0, no, ni, 256, TailStrategy::RoundUp)"
                                 ".split(v1, mo, mi, 64)")) < 1e-5);
    // The same tiles with GuardWithIf lower: the last tile covers what remains.
    CHECK(error_of(g, gemm_block("split(v0, no, ni, 384, TailStrategy::GuardWithIf)"
                                 ".split(v1, mo, mi, 64)")) < 1e-5);
}

TEST_CASE("a PredicateStores tail by more than the extent is NHC_ESCH117 (Halide recursed)") {
    // out's loop v0 has extent 1: split by 16 with PredicateStores, Halide's loop partitioning
    // recursed until the stack overflowed (the compiler died of SIGSEGV). Inside the group the
    // extent is not known when the block is applied: refused there; on an output only when the
    // factor exceeds the extent.
    Graph g =
        one_node_graph("ReduceMean", {{128, 48}}, {128, 1}, {{"axes", std::vector<int64_t>{1}}});
    auto split = [&](const std::string &stage, const std::string &v, int factor,
                     const std::string &tail) {
        return edited_default(g, "  " + stage + ".split(" + v + ", vo, vi, " +
                                     std::to_string(factor) + ", TailStrategy::" + tail + ")\n");
    };
    std::string msg;
    CHECK(compile_error(g, split("out", "v0", 16, "PredicateStores"), &msg) == "NHC_ESCH117");
    CHECK(msg.find("Halide 14 cannot lower a PredicateStores tail on a scalar loop") !=
          std::string::npos);
    CHECK(compile_error(g, split("final0", "v0", 16, "PredicateStores"), &msg) == "NHC_ESCH117");
    CHECK(msg.find("loop v0 of the output has extent 1, smaller than the split factor 16") !=
          std::string::npos);
    // Predicate guards the whole tail (as GuardWithIf): it lowers, and is correct.
    CHECK(error_of(g, split("out", "v0", 16, "Predicate")) < 1e-5);
    CHECK(error_of(g, split("out", "v0", 16, "GuardWithIf")) < 1e-5);
    // An output's PredicateStores split within its extent lowers.
    Graph softmax = one_node_graph("Softmax", {{200, 32}}, {200, 32});
    auto tiled = [&](const std::string &split) {
        std::string text = edited_default(softmax, "", "final0.split");
        return text.insert(text.find("  out."), "  final0." + split + "\n");
    };
    CHECK(error_of(softmax, tiled("split(v1, v1o, v1i, 40, TailStrategy::PredicateStores)")) <
          1e-5);
    // PredicateLoads on an output whose tiles do not divide its extent: the stores run past it.
    CHECK(compile_error(softmax, tiled("split(v1, v1o, v1i, 64, TailStrategy::PredicateLoads)"),
                        &msg) == "NHC_ESCH117");
    CHECK(msg.find("with TailStrategy::PredicateLoads the tiles would run past the end") !=
          std::string::npos);
}

TEST_CASE("splits that do not divide lower correctly: output tiles and reduction chunks") {
    Graph softmax = one_node_graph("Softmax", {{200, 32}}, {200, 32});
    for (const char *split : {"split(v1, v1o, v1i, 64, TailStrategy::GuardWithIf)",
                              "split(v1, v1o, v1i, 48)"}) { // Auto: ShiftInwards
        CAPTURE(split);
        std::string text = edited_default(softmax, "", "final0.split");
        text.insert(text.find("  out."), std::string("  final0.") + split + "\n");
        CHECK(error_of(softmax, text) < 1e-5);
    }
    // A reduction split by 19 over 32 (an RVar: GuardWithIf, the last chunk 13 long): its loop
    // bounds depend on the chunk, which used to stop instruction selection with an internal error.
    Graph mean =
        one_node_graph("ReduceMean", {{200, 32}}, {200, 1}, {{"axes", std::vector<int64_t>{1}}});
    CHECK(error_of(mean, edited_default(mean, "  acc.update(0).split(r, ro, ri, 19)"
                                              ".reorder(ri, v0, ro)\n")) < 1e-5);
}

TEST_CASE(
    "a GuardWithIf tail of an unrolled loop is a guard per iteration, decided when compiling") {
    // Unrolling the chunk loop of a reduction split by 20 over 32 leaves `if` statements in the
    // lowered Stmt, which instruction selection used to stop at (an internal error).
    Graph g =
        one_node_graph("ReduceSum", {{200, 32}}, {200, 1}, {{"axes", std::vector<int64_t>{1}}});
    CHECK(error_of(g, edited_default(g, "  acc.update().split(r, ro, ri, 20, "
                                        "TailStrategy::GuardWithIf).reorder(v0, ri, ro)"
                                        ".unroll(ri)\n")) < 1e-5);
}

TEST_CASE("a reduction that overwrites its dropped init is checked for its partition start") {
    // acc per output row: the zero init is dropped and the tensor_reduce that replaces it reads
    // one row of the staged input from partition 1. The partition check skipped that instruction
    // (it started before the nest's first), so the NEFF reached the runtime (NHC_ERT005).
    Graph g =
        one_node_graph("ReduceMean", {{128, 100}}, {128, 1}, {{"axes", std::vector<int64_t>{1}}});
    std::string text = "node \"node\":\n  out.compute_at(final0, v1).store_in(SBUF)\n"
                       "  acc.compute_at(final0, v1).store_in(SBUF)\n"
                       "  stage_0.compute_root().store_in(SBUF)\n"
                       "  hint partition_dim stage_0 1\n  hint partition_dim acc 0\n"
                       "  hint partition_dim out 1\n";
    std::string msg;
    CHECK(compile_error(g, text, &msg) == "NHC_EGEN018");
    CHECK(msg.find("tensor_reduce would address 1 partition(s) from partition 1") !=
          std::string::npos);
}

TEST_CASE("a copy outside an HBM input is NHC_EGEN019 when compiling, not NHC_ENEFF008") {
    // stage_0's rows of 32 split by 64 (ShiftInwards): the tile starts at column -32, before the
    // input; the load used to read bytes the loader refuses.
    Graph g =
        one_node_graph("ReduceSum", {{100, 32}}, {100, 1}, {{"axes", std::vector<int64_t>{1}}});
    std::string msg;
    CHECK(compile_error(g, edited_default(g, "  stage_0.split(v0, v0o, v0i, 64)\n"), &msg) ==
          "NHC_EGEN019");
    CHECK(msg.find("stage 'node__stage_0") != std::string::npos);
    CHECK(msg.find("the copy reads bytes [-128, 12800) of 'in0") != std::string::npos);
}

TEST_CASE("two loops over an instruction's partitions: one instruction per outer iteration") {
    // M split inside the accumulation nest: the matmul selector used to keep only the inner loop
    // as M and drop the outer (rel L2 0.69); now one matmul per 32-row half.
    Graph g = gemm_graph();
    std::string split_m = "  acc.update().split(v1, v1o, v1i, 32)\n";
    sched::Group grp =
        scheduled_group(g, gemm_block("tile(v0, v1, no, mo, ni, mi, 512, 64)", split_m));
    CHECK(compile_group(g, grp).count(neff::Opcode::Matmul) == 4); // 2 K chunks x 2 halves
    CHECK(error_of(g, gemm_block("tile(v0, v1, no, mo, ni, mi, 512, 64)", split_m)) < 1e-5);
    // The same for a PE transpose (the default MatMul's a_tp) whose K is split in the nest.
    Graph mm = one_node_graph("MatMul", {{32, 128}, {128, 256}}, {32, 256});
    std::string split_k = "  a_tp.split(v1, v1o, v1i, 32).reorder(v1i, v0, v1o)\n";
    sched::Group tp = scheduled_group(mm, edited_default(mm, split_k));
    CHECK(compile_group(mm, tp).count(neff::Opcode::Transpose) == 4);
    CHECK(error_of(mm, edited_default(mm, split_k)) < 1e-5);
}

TEST_CASE("a matmul operand left in PSUM is NHC_EGEN011, not a NEFF the simulator refuses") {
    // Without lhs_t's line, the PE transpose's PSUM result is read by the matmul directly.
    Graph g = one_node_graph("MatMul", {{100, 128}, {128, 256}}, {100, 256});
    std::string msg;
    CHECK(compile_error(g, edited_default(g, "", "lhs_t.compute_at"), &msg) == "NHC_EGEN011");
    CHECK(msg.find("matmul operand 'node__a_tp") != std::string::npos);
    CHECK(msg.find("is not in SBUF") != std::string::npos);
}

TEST_CASE("a block for a Concat or a view is NHC_ESCH118, not ignored") {
    Graph concat = one_node_graph("Concat", {{4, 8}, {4, 8}}, {8, 8}, {{"axis", int64_t(0)}});
    Graph reshape = one_node_graph("Identity", {{4, 8}}, {4, 8});
    sched::ScheduleScript s =
        sched::parse_schedule("node \"node\":\n  out.compute_root()\n", "t.sched");
    std::string msg;
    CHECK(error_code([&] { sched::check_schedule_nodes(s, concat); }, &msg) == "NHC_ESCH118");
    CHECK(msg == "t.sched:1: node \"node\": Concat is compiled as copies of each input into its "
                 "slice of the output, without a schedule; remove its block");
    CHECK(error_code([&] { sched::check_schedule_nodes(s, reshape); }, &msg) == "NHC_ESCH118");
    CHECK(msg.find("Identity is a view of its input's bytes") != std::string::npos);
}

TEST_CASE("a loop unrolled 32,768 times is unrolled by instruction selection, not by Halide") {
    // rhs's two loops fused and unrolled: one DMA per element. Halide copied the body 32,768
    // times into a chain of Blocks that its recursive passes overflowed the stack on (the
    // compiler died of SIGSEGV); the loop is now lowered serial and unrolled while selecting.
    Graph mm = one_node_graph("MatMul", {{32, 128}, {128, 256}}, {32, 256});
    std::string text = edited_default(mm, "  rhs.fuse(v0, v1, f).unroll(f)\n");
    sched::Group grp = scheduled_group(mm, text);
    CHECK(compile_group(mm, grp).count(neff::Opcode::Dma) > 32768);
    CHECK(error_of(mm, text) < 1e-5);
}

TEST_CASE("a stage stored outside its compute level is NHC_ESCH120 (Halide's sliding window)") {
    // A^T computed per row tile inside the first column pass and stored at root: Halide computes
    // it only when no == 0 (a sliding window over the column loop) but folds its storage to one
    // row tile, so the second column pass read the last row tile's A^T: a whole output tile was
    // wrong, with no race and no error. Refused; stored where computed, the same loops match.
    Graph mm = one_node_graph("MatMul", {{256, 256}, {256, 1024}}, {256, 1024});
    auto script = [](const std::string &lhs_t_level) {
        return "node \"node\":\n"
               "  final0.split(v0, no, ni, 512).split(v1, mo, mi, 128).reorder(ni, mi, mo, no)\n"
               "  out.compute_at(final0, mo).store_in(SBUF)\n"
               "  acc.compute_at(final0, mo).store_in(PSUM)\n"
               "  acc.update().split(k, ko, ki, 128).reorder(ki, v0, v1, ko)\n"
               "  rhs.split(v1, kco, kci, 128).unroll(kco).compute_at(final0, no).store_in(SBUF)\n"
               "  lhs_t.split(v1, kco, kci, 128).split(kco, kcoo, kcoi, 2, "
               "TailStrategy::GuardWithIf).compute_at(final0, mo)" +
               lhs_t_level +
               ".store_in(SBUF)\n"
               "  a_tp.compute_at(lhs_t, kcoi).store_in(PSUM)\n"
               "  a_nat.compute_at(lhs_t, kcoo).store_in(SBUF)\n"
               "  hint partition_dim a_nat 1\n  hint partition_dim a_tp 1\n"
               "  hint partition_dim lhs_t 1\n  hint partition_split lhs_t 128\n"
               "  hint partition_dim rhs 1\n  hint partition_split rhs 128\n"
               "  hint partition_dim acc 1\n  hint partition_dim out 1\n";
    };
    std::string msg;
    CHECK(compile_error(mm, script(".store_root()"), &msg) == "NHC_ESCH120");
    CHECK(msg.find("test.sched:7: node \"node\": stage 'lhs_t' is stored at another level than "
                   "it is computed at (store_root)") == 0);
    CHECK(error_of(mm, script("")) < 1e-5);
}
