// Schedules the hardware cannot run are user errors that name the stage (DESIGN.md §6). The
// default schedules avoid them, so each case here builds a group and schedules it by hand, the
// way a --schedule script will, then runs lowering and instruction selection.

#include "../schedules/OneNodeGraph.h"
#include "../unit/TestModels.h"
#include "driver/Codegen.h"
#include "frontend/Frontend.h"
#include "neff/LowerGroup.h"
#include "neff/SelectInstructions.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/MemoryTypes.h"
#include "support/Error.h"

#include <doctest/doctest.h>
#include <functional>

using namespace nhc;
using Halide::Func;
using Halide::Var;

namespace {

/** The code of the user error that selecting instructions for the hand-scheduled group raises. */
std::string select_error(const Graph &g, const std::function<void(sched::Group &)> &schedule) {
    sched::Group grp = sched::build_node_group(g, g.nodes[0]);
    schedule(grp);
    codegen::LoweredGroup lg = codegen::lower_group(grp);
    codegen::SelectOptions so;
    so.target = &target::target_by_name("trn1");
    so.node_name = "node";
    so.partition_dim = grp.partition_dim;
    so.buffers = grp.buffers;
    int var = 0;
    for (const auto &[buf, value] : lg.hbm_buffers)
        so.hbm[buf] = {var++, neff::DType::F32, shape_numel(g.value(value).shape) * 4};
    try {
        codegen::select_instructions(lg.body, so);
    } catch (const UserError &e) {
        return e.code();
    }
    return "no error";
}

Var v(int i) {
    return Var("v" + std::to_string(i));
}

// Gemm [M, K] x [K, N] with the accumulator tile chosen by the test.
void gemm_tiles(sched::Group &g, int tn, int tm, int tk) {
    Func out = g.outputs[0].func, acc = g.stage("acc");
    Var no("no"), mo("mo"), ni("ni"), mi("mi");
    out.tile(v(0), v(1), no, mo, ni, mi, tn, tm);
    acc.compute_at(out, no).store_in(sched::PSUM);
    Halide::RVar k(acc.function().update(0).schedule().rvars()[0].var), ko("ko"), ki("ki");
    acc.update().split(k, ko, ki, tk).reorder(ki, v(0), v(1), ko);
    g.stage("lhs_t").compute_at(acc, ko).store_in(sched::SBUF);
    g.stage("rhs").compute_at(acc, ko).store_in(sched::SBUF);
    g.stage("out").compute_at(out, no).store_in(sched::SBUF);
    for (const auto &s : g.op.stages)
        g.partition_dim[s.func.name()] = 1;
}

} // namespace

TEST_CASE("a PSUM tile larger than one bank is NHC_EGEN004") {
    Graph g = test::one_node_graph("Gemm", {{128, 128}, {128, 1024}}, {128, 1024});
    CHECK(select_error(g, [](sched::Group &s) { gemm_tiles(s, 1024, 128, 128); }) == "NHC_EGEN004");
}

TEST_CASE("more fixed PSUM buffers than there are banks is NHC_EGEN005") {
    // Four output tiles of one bank each; their accumulator asks for 9 fixed banks of the 8.
    Graph g = test::one_node_graph("Gemm", {{128, 128}, {128, 2048}}, {128, 2048});
    auto with_buffers = [](int count) {
        return [count](sched::Group &s) {
            gemm_tiles(s, 512, 128, 128);
            s.buffers[s.stage("acc").name()] = count;
        };
    };
    CHECK(select_error(g, with_buffers(9)) == "NHC_EGEN005");
    CHECK(select_error(g, with_buffers(2)) == "no error");
}

TEST_CASE("a contraction chunk over 128 partitions is NHC_EGEN003") {
    Graph g = test::one_node_graph("Gemm", {{128, 256}, {256, 512}}, {128, 512});
    CHECK(select_error(g, [](sched::Group &s) { gemm_tiles(s, 512, 128, 256); }) == "NHC_EGEN003");
}

TEST_CASE("a tile over 128 partitions is NHC_EGEN003") {
    Graph g = test::one_node_graph("Gemm", {{256, 128}, {128, 512}}, {256, 512});
    CHECK(select_error(g, [](sched::Group &s) { gemm_tiles(s, 512, 256, 128); }) == "NHC_EGEN003");
}

TEST_CASE("a stage left in HBM is NHC_EGEN002") {
    Graph g = test::one_node_graph("Relu", {{4, 8}}, {4, 8});
    CHECK(select_error(g, [](sched::Group &s) {
              s.stage("out").compute_root(); // no store_in: Halide's heap
          }) == "NHC_EGEN002");
}

TEST_CASE("a compute stage reading HBM is NHC_EGEN011") {
    Graph g = test::one_node_graph("Relu", {{4, 8}}, {4, 8});
    CHECK(select_error(g, [](sched::Group &s) {
              s.stage("out").compute_root().store_in(sched::SBUF); // input not staged
          }) == "NHC_EGEN011");
}

TEST_CASE("a PSUM stage that is not a matmul is NHC_EGEN012") {
    Graph g = test::one_node_graph("Relu", {{4, 8}}, {4, 8});
    CHECK(select_error(g, [](sched::Group &s) {
              s.inputs[0].staged.compute_root().store_in(sched::SBUF);
              s.stage("out").compute_root().store_in(sched::PSUM);
          }) == "NHC_EGEN012");
}

TEST_CASE("more than four free loops in one instruction is NHC_EGEN015") {
    Graph g = test::one_node_graph("Relu", {{2, 2, 2, 2, 2, 2}}, {2, 2, 2, 2, 2, 2});
    CHECK(select_error(g, [](sched::Group &s) {
              s.inputs[0].staged.compute_root().store_in(sched::SBUF);
              s.stage("out").compute_root().store_in(sched::SBUF);
          }) == "NHC_EGEN015");
}

TEST_CASE("a reduction loop that is not innermost is NHC_EGEN016") {
    Graph g =
        test::one_node_graph("ReduceSum", {{4, 8}}, {4, 1}, {{"axes", std::vector<int64_t>{1}}});
    CHECK(select_error(g, [](sched::Group &s) {
              Func acc = s.stage("acc");
              Halide::RVar r(acc.function().update(0).schedule().rvars()[0].var);
              s.inputs[0].staged.compute_root().store_in(sched::SBUF);
              acc.compute_root().store_in(sched::SBUF);
              acc.update().reorder(v(0), r);
              s.stage("out").compute_root().store_in(sched::SBUF);
              s.partition_dim[s.inputs[0].staged.name()] = 1;
          }) == "NHC_EGEN016");
}

TEST_CASE("a data-dependent (non-affine) access is NHC_EGEN008") {
    // Gather along an inner axis (not rows of a 2-D table): the index selects the address.
    Graph g = test::one_node_graph("Gather", {{2, 10, 4}, {3}}, {2, 3, 4}, {{"axis", int64_t(1)}});
    g.values["in1"].dtype = DType::Int32;
    CHECK(select_error(g, [](sched::Group &s) {
              for (auto &in : s.inputs)
                  in.staged.compute_root().store_in(sched::SBUF);
              s.stage("out").compute_root().store_in(sched::SBUF);
          }) == "NHC_EGEN008");
}

TEST_CASE("a row larger than SBUF is NHC_EGEN005 when a schedule stages it whole") {
    // The default schedule computes such rows in chunks of columns (schedules/RowChunks); a
    // schedule that keeps the 400 KB rows whole is refused by the code generator.
    Graph g = test::one_node_graph("Relu", {{2, 100000}}, {2, 100000});
    CHECK(select_error(g, [](sched::Group &s) {
              s.inputs[0].staged.compute_root().store_in(sched::SBUF);
              s.stage("out").compute_root().store_in(sched::SBUF);
              s.partition_dim[s.inputs[0].staged.name()] = 1;
              s.partition_dim[s.stage("out").name()] = 1;
          }) == "NHC_EGEN005");
    CHECK(select_error(g, [](sched::Group &s) {
              sched::apply_default_schedule(s, target::target_by_name("trn1"));
          }) == "no error");
}

TEST_CASE("a 1-D tensor longer than one partition tile is NHC_ESCH001 naming the stage") {
    // 307 is prime: no view [rows, cols] with rows on the partitions (graph/WideElementwiseRows
    // computes a 1-D value of 300 elements as [100, 3]).
    test::TempDir dir;
    Graph g = run_frontend(test::write_model(test::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[307] x) => (float[307] y) { y = Relu(x) }
)"),
                                             dir.file("m.onnx")),
                           {});
    CompileOptions o;
    apply_graph_passes(g, o);
    try {
        generate_program(g, o);
        FAIL("expected NHC_ESCH001");
    } catch (const UserError &e) {
        CHECK(e.code() == "NHC_ESCH001");
        CHECK(std::string(e.what()).find("307 elements") != std::string::npos);
    }
}

TEST_CASE("an operand laid out across the instruction's partitions the other way is NHC_EGEN010") {
    Graph g = test::one_node_graph("Relu", {{8, 8}}, {8, 8});
    CHECK(select_error(g, [](sched::Group &s) {
              Func in = s.inputs[0].staged, out = s.stage("out");
              in.compute_root().store_in(sched::SBUF);
              out.compute_root().store_in(sched::SBUF);
              s.partition_dim[in.name()] = 0;  // the input's rows lie along the free axis
              s.partition_dim[out.name()] = 1; // the output's rows on partitions
          }) == "NHC_EGEN010");
}

TEST_CASE("an operand read by every partition alike without a broadcast stage is NHC_EGEN009") {
    Graph g = test::one_node_graph("Add", {{8, 8}, {1, 8}}, {8, 8});
    CHECK(select_error(g, [](sched::Group &s) {
              for (sched::GroupInput &in : s.inputs) {
                  in.staged.compute_root().store_in(sched::SBUF);
                  s.partition_dim[in.staged.name()] = 1;
              }
              Func out = s.stage("out");
              out.compute_root().store_in(sched::SBUF); // the broadcast stage stays inlined
              s.partition_dim[out.name()] = 1;
          }) == "NHC_EGEN009");
}
