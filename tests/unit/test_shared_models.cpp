// Every development model in ../shared/models (PyTorch exports) loads into the Graph IR with fully
// static shapes. The folder sits beside the project in development and CI; a user's clone may not
// have it, and then this test says so and checks nothing.

#include "frontend/Frontend.h"

#include <doctest/doctest.h>
#include <filesystem>

using namespace nhc;
namespace fs = std::filesystem;

TEST_CASE("the shared development models load with static shapes") {
    fs::path dir = fs::path(NHC_SOURCE_DIR) / ".." / "shared" / "models";
    if (!fs::is_directory(dir)) {
        MESSAGE("../shared/models not present: nothing to check");
        return;
    }
    std::vector<fs::path> models;
    for (const auto &e : fs::directory_iterator(dir))
        if (fs::is_regular_file(e.path() / "model.onnx"))
            models.push_back(e.path() / "model.onnx");
    std::sort(models.begin(), models.end());
    CHECK(models.size() >= 14);
    for (const fs::path &m : models) {
        INFO(m.string());
        Graph g = run_frontend(m.string(), {});
        g.verify();
        for (const auto &[name, v] : g.values)
            for (int64_t d : v.shape)
                CHECK(d >= 0);
        for (const Node &n : g.nodes) {
            // Shape arithmetic and constant generators are folded away.
            CHECK(n.op_type != "Shape");
            CHECK(n.op_type != "Constant");
            CHECK(n.op_type != "ConstantOfShape");
        }
        CHECK(g.opset == 17);
    }
}
