// The algorithms, run on the host (Halide CPU JIT), reproduce PyTorch's outputs for every
// development model in ../shared/models whose operators all have algorithms: relative L2 error
// at most 1e-4 (fp32). Skipped, with a message, when ../shared is not beside the project.

#include "CaseData.h"
#include "algorithms/Algorithm.h"
#include "algorithms/Reference.h"
#include "frontend/Frontend.h"
#include "support/Error.h"

#include <doctest/doctest.h>

using namespace nhc;
namespace fs = std::filesystem;

TEST_CASE("host reference matches PyTorch on the development models") {
    fs::path dir = fs::path(NHC_SOURCE_DIR) / ".." / "shared" / "models";
    if (!fs::is_directory(dir)) {
        MESSAGE("../shared/models not present: nothing to check");
        return;
    }
    std::vector<fs::path> cases;
    for (const auto &e : fs::directory_iterator(dir))
        if (fs::exists(e.path() / "model.onnx"))
            cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    int checked = 0;
    for (const fs::path &c : cases) {
        Graph g = run_frontend((c / "model.onnx").string(), {});
        bool covered = true;
        for (const Node &n : g.nodes)
            covered = covered && alg::find_algorithm(n.op_type) != nullptr;
        if (!covered) {
            MESSAGE("skipped (operators without an algorithm): " << c.filename().string());
            continue;
        }
        auto outs = alg::run_reference(g, test::read_inputs(g, c / "test_data_set_0"));
        for (size_t i = 0; i < g.outputs.size(); i++) {
            HostTensor want =
                test::read_pb(c / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
            test::Comparison cmp = test::compare(outs.at(g.outputs[i]), want, 1e-3, 1e-4);
            INFO(c.filename().string() << " output " << g.outputs[i] << ": rel L2 " << cmp.rel_l2
                                       << ", max abs " << cmp.max_abs_err);
            CHECK(cmp.rel_l2 <= 1e-4);
        }
        checked++;
    }
    CHECK(checked >= 12);
}

TEST_CASE("an operator form the algorithm does not cover is NHC_EALG001 naming the node") {
    Node n;
    n.name = "proj";
    n.op_type = "Gemm";
    Value a{"a", DType::Float32, {2, 3, 4}, nullptr}, b{"b", DType::Float32, {4, 5}, nullptr};
    alg::OpContext ctx{
        n, {alg::make_input(a).tensor, alg::make_input(b).tensor}, {nullptr, nullptr}, {}, 17};
    try {
        alg::build_algorithm(ctx);
        FAIL("no error");
    } catch (const UserError &e) {
        CHECK(e.code() == "NHC_EALG001");
        CHECK(std::string(e.what()).find("Gemm 'proj'") != std::string::npos);
    }
}

TEST_CASE("bf16 outputs compare as numbers, not as their stored bit patterns") {
    // ONNX's test data keeps bf16 outputs as uint16 bits. 1.0 is 0x3F80; its bf16 neighbour
    // 1.0078125 is 0x3F81: 6e-5 apart as integers, 7.8e-3 apart as numbers (rtol 1e-3 fails).
    HostTensor got(DType::BFloat16, {2}), want(DType::UInt16, {2});
    got.set_f64(0, 1.0078125);
    got.set_f64(1, -2.0);
    want.set_i64(0, 0x3F80);
    want.set_i64(1, 0xC000); // -2.0
    test::Comparison c = test::compare(got, want, 1e-3, 1e-5);
    CHECK_FALSE(c.ok);
    CHECK(c.max_abs_err == doctest::Approx(0.0078125));
    got.set_f64(0, 1.0);
    CHECK(test::compare(got, want, 1e-3, 1e-5).ok);
    CHECK(test::compare(got, want, 1e-3, 1e-5).rel_l2 == 0);
}
