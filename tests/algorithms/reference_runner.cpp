// Runs ONNX backend-test cases through the front end and the host reference (the algorithms
// JIT-compiled for the CPU) and compares with the stored outputs. Cases whose operators do not all
// have an algorithm are skipped. A case listed in the expected-failures file may fail; any other
// failure, and any listed case that now passes, fails the run (so the list stays true).
//
// usage: nhc_reference_runner [--expected FILE] [--verbose] DIR...

#include "CaseData.h"
#include "algorithms/Algorithm.h"
#include "algorithms/Reference.h"
#include "frontend/Frontend.h"
#include "support/Error.h"
#include "support/Log.h"

#include <iostream>
#include <set>

namespace fs = std::filesystem;
using namespace nhc;

namespace {

bool all_ops_have_algorithms(const Graph &g) {
    for (const Node &n : g.nodes)
        if (!n.domain.empty() || !alg::find_algorithm(n.op_type))
            return false;
    return true;
}

// "pass", "skip", or a failure description.
std::string run_case(const fs::path &dir) {
    Graph g;
    try {
        g = test::load_case_graph(dir); // runtime operands frozen, as nhc_conformance does
    } catch (const UserError &) {
        return "skip";
    }
    if (!all_ops_have_algorithms(g) || !fs::exists(dir / "test_data_set_0"))
        return "skip";
    return test::check_case_outputs(g, dir, [&](const std::map<std::string, HostTensor> &in) {
        return alg::run_reference(g, in);
    });
}

} // namespace

int main(int argc, char **argv) {
    Logger::instance().set_console_level(100);
    return test::run_case_suite(argc, argv, run_case, "operators without an algorithm");
}
