// Runs ONNX backend-test cases end to end: front end, code generation, the simulator, and a
// comparison with the stored outputs. Cases with an operator outside `list-operators` are
// skipped. A case listed in the expected-failures file may fail; any other failure, and any listed
// case that passes, fails the run.
//
// usage: nhc_e2e_runner [--expected FILE] [--verbose] DIR...

#include "E2E.h"
#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "support/Log.h"

#include <iostream>
#include <set>

namespace fs = std::filesystem;
using namespace nhc;

namespace {

std::string run_case(const fs::path &dir) {
    Graph g;
    try {
        g = test::load_case_graph(dir); // runtime operands frozen, as nhc_conformance does
        check_operator_support(g);
    } catch (const UserError &) {
        return "skip";
    }
    if (!fs::exists(dir / "test_data_set_0"))
        return "skip";
    return test::check_case_outputs(g, dir, [&](const std::map<std::string, HostTensor> &in) {
        return test::compile_and_run(g, in).outputs;
    });
}

} // namespace

int main(int argc, char **argv) {
    Logger::instance().set_console_level(100);
    register_codegen_operators();
    return test::run_case_suite(argc, argv, run_case, "unsupported operators");
}
