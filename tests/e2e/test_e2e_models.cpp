// End to end on the development models of ../shared/models (when present): compile with the
// default schedules, simulate on trn1, compare with PyTorch's outputs: relative L2 error at most
// 1e-4 in fp32. A model with an operator outside `list-operators` is reported and skipped.

#include "E2E.h"
#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "support/Log.h"

#include <doctest/doctest.h>

using namespace nhc;
namespace fs = std::filesystem;

TEST_CASE("development models compile, run on the simulator and match PyTorch") {
    Logger::instance().set_console_level(100);
    register_codegen_operators();
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
        try {
            check_operator_support(g);
        } catch (const UserError &e) {
            MESSAGE("skipped " << c.filename().string() << ": " << e.code());
            continue;
        }
        test::E2EResult r = test::compile_and_run(g, test::read_inputs(g, c / "test_data_set_0"));
        for (size_t i = 0; i < g.outputs.size(); i++) {
            HostTensor want =
                test::read_pb(c / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
            test::Comparison cmp = test::compare(r.outputs.at(g.outputs[i]), want, 1e-3, 1e-4);
            INFO(c.filename().string() << " output " << g.outputs[i] << ": rel L2 " << cmp.rel_l2
                                       << ", simulated " << r.summary.total_ns / 1000 << " us");
            CHECK(cmp.rel_l2 <= 1e-4);
        }
        checked++;
    }
    CHECK(checked >= 8);
}
