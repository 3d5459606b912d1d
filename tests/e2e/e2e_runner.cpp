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
        g = run_frontend((dir / "model.onnx").string(), {});
        check_operator_support(g);
    } catch (const UserError &) {
        return "skip";
    }
    if (!fs::exists(dir / "test_data_set_0"))
        return "skip";
    try {
        test::E2EResult r = test::compile_and_run(g, test::read_inputs(g, dir / "test_data_set_0"));
        for (size_t i = 0; i < g.outputs.size(); i++) {
            HostTensor want =
                test::read_pb(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
            test::Comparison c = test::compare(r.outputs.at(g.outputs[i]), want, 1e-3, 1e-5);
            if (!c.ok)
                return "wrong output '" + g.outputs[i] + "': " + c.why;
        }
    } catch (const UserError &e) {
        return e.formatted();
    } catch (const std::exception &e) {
        return std::string("exception: ") + e.what();
    }
    return "pass";
}

} // namespace

int main(int argc, char **argv) {
    Logger::instance().set_console_level(100);
    register_codegen_operators();
    std::set<std::string> expected;
    bool verbose = false;
    std::vector<std::string> dirs;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--expected" && i + 1 < argc) {
            std::ifstream in(argv[++i]);
            for (std::string line; std::getline(in, line);)
                if (!line.empty() && line[0] != '#')
                    expected.insert(line.substr(0, line.find(' ')));
        } else if (a == "--verbose") {
            verbose = true;
        } else {
            dirs.push_back(a);
        }
    }
    int pass = 0, skip = 0, fail_expected = 0, bad = 0;
    for (const std::string &d : dirs) {
        std::vector<fs::path> cases;
        for (const auto &e : fs::directory_iterator(d))
            if (fs::exists(e.path() / "model.onnx"))
                cases.push_back(e.path());
        std::sort(cases.begin(), cases.end());
        for (const fs::path &c : cases) {
            std::string name = c.filename().string(), r = run_case(c);
            bool listed = expected.count(name) != 0;
            if (r == "skip") {
                skip++;
            } else if (r == "pass") {
                pass++;
                if (listed) {
                    bad++;
                    std::cout << "UNEXPECTED PASS " << name
                              << " (remove it from the expected failures)\n";
                } else if (verbose) {
                    std::cout << "pass " << name << "\n";
                }
            } else if (listed) {
                fail_expected++;
                if (verbose)
                    std::cout << "expected failure " << name << ": " << r << "\n";
            } else {
                bad++;
                std::cout << "FAIL " << name << ": " << r << "\n";
            }
        }
    }
    std::cout << pass << " passed, " << fail_expected << " expected failures, " << bad
              << " unexpected, " << skip << " skipped (unsupported operators)\n";
    return bad == 0 ? 0 : 1;
}
