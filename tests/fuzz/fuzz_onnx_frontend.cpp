// Fuzz target: bytes as an ONNX model file, through the front end (load, check, opset
// conversion, shape inference and folding, import) and, when it imports, the graph passes.

#include "FuzzTarget.h"
#include "driver/GraphPasses.h"
#include "driver/Options.h"
#include "frontend/Frontend.h"
#include "support/Log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    nhc::Logger::instance().set_console_level(100);
    static const nhc::fuzz::ScratchFile file(".onnx");
    const std::string &path = file.write(data, size);
    nhc::fuzz::expect_user_errors([&] {
        nhc::Graph g = nhc::run_frontend(path, {});
        nhc::CompileOptions options; // -O2, trn1: every pass of the default compile
        nhc::apply_graph_passes(g, options);
    });
    return 0;
}
