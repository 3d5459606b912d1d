// The ONNX conformance runner: every case of the given libonnx-testdata folders goes through the
// whole compiler (front end, graph passes, code generation), the simulator (fp32 mode) and a
// comparison with the stored outputs (relative 1e-3, absolute 1e-5 per element). Each case runs
// in a forked child with a time limit, so a crash or a hang is observed, not suffered.
//
// An input that an operand needing a compile-time value comes from (Resize's scales, Slice's
// bounds, ...: frontend/ConstantOperands.h) is frozen to its test_data_set_0 value, as a user
// of a static compiler would with --freeze-input; such cases are listed with "frozen=NAMES" and
// counted in their own column, so the table shows what passes without freezing too. A passing
// case whose program has no compute instruction (every value folded at compile time, the device
// only copies) is marked "folded" and counted apart from the cases the device computes.
//
// Outcomes: passed; failed (compiled, but a wrong number or a coded error while running);
// rejected (a coded user error while compiling: an unsupported operator, a dynamic shape, ...);
// crashed (a signal or an internal error); hung (the time limit).
//
// usage: nhc_conformance [--timeout S] [--expected FILE] [--write-expected FILE] [--verbose] DIR...
// Prints a table per folder and the rejection codes. With --expected, a case that the table says
// passed and does not pass now (or needs frozen inputs now, where it did not) fails the run; any
// crash or hang always does.

#include "../ForkedRun.h"
#include "../e2e/E2E.h"
#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "support/Log.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

namespace fs = std::filesystem;
using namespace nhc;

namespace {

const char *const kOutcomes[] = {"passed", "failed", "rejected", "crashed", "hung"};
enum Outcome { Passed, Failed, Rejected, Crashed, Hung };

/** True when some engine computes: an instruction other than a DMA or a no-op. */
bool has_compute_instruction(const neff::Program &p) {
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            if (i.op != neff::Opcode::Dma && i.op != neff::Opcode::Nop)
                return true;
    return false;
}

struct Result {
    Outcome outcome;
    std::string detail; // the code or what went wrong
    std::string frozen; // the inputs frozen to their test values, comma-separated
};

// The verdict on one case: compiled once, then run and compared. The message starts with
// "frozen=NAMES " when inputs were frozen; a pass says "folded" when the device computes nothing.
std::pair<int, std::string> judge(const fs::path &dir) {
    Graph g, compiled; // as loaded, and after the graph passes (the types the program has)
    neff::Program program;
    std::string frozen;
    try {
        std::vector<FrozenInput> frozen_inputs;
        g = test::load_case_graph(dir, &frozen_inputs);
        for (const FrozenInput &f : frozen_inputs)
            frozen += (frozen.empty() ? "frozen=" : ",") + f.name;
        if (!frozen.empty())
            frozen += " ";
        check_operator_support(g);
        if (!fs::exists(dir / "test_data_set_0"))
            return {Rejected, "no test data"};
        CompileOptions o;
        compiled = g;
        apply_graph_passes(compiled, o);
        program = generate_program(compiled, o);
    } catch (const UserError &e) {
        return {Rejected, frozen + e.code()};
    } catch (const std::exception &e) {
        return {Crashed, frozen + "internal: " + e.what()};
    }
    std::string r = test::check_case_outputs(
        g, dir, [&](const auto &in) { return test::run_program(program, compiled, in).outputs; });
    if (r != "pass")
        return {Failed, frozen + r};
    return {Passed, frozen + (has_compute_instruction(program) ? "" : "folded")};
}

Result run_one(const fs::path &dir, unsigned timeout) {
    test::ForkedResult r = test::run_forked([&] { return judge(dir); }, timeout);
    if (r.kind == test::ForkedResult::TimedOut)
        return {Hung, r.message, ""};
    if (r.kind == test::ForkedResult::Crashed)
        return {Crashed, r.message, ""};
    Result res{static_cast<Outcome>(r.code), r.message, ""};
    if (res.detail.rfind("frozen=", 0) == 0) {
        size_t space = res.detail.find(' ');
        res.frozen = res.detail.substr(7, space - 7);
        res.detail = space == std::string::npos ? "" : res.detail.substr(space + 1);
    }
    return res;
}

/** "folder/case outcome [detail] [frozen=NAMES]" lines: the committed table. A case is kept as
 *  "passed" (without frozen inputs), "passed frozen" or its other outcome. */
std::map<std::string, std::string> read_table(const std::string &path) {
    std::map<std::string, std::string> t;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#')
            continue;
        size_t a = line.find(' ');
        size_t b = line.find(' ', a + 1);
        std::string outcome = line.substr(a + 1, b == std::string::npos ? b : b - a - 1);
        if (outcome == "passed" && line.find(" frozen=") != std::string::npos)
            outcome += " frozen";
        t[line.substr(0, a)] = outcome;
    }
    return t;
}

} // namespace

int main(int argc, char **argv) {
    Logger::instance().set_console_level(100);
    register_codegen_operators();
    unsigned timeout = 120;
    bool verbose = false;
    std::string expected_path, write_path;
    std::vector<std::string> dirs;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--timeout" && i + 1 < argc)
            timeout = static_cast<unsigned>(std::stoul(argv[++i]));
        else if (a == "--expected" && i + 1 < argc)
            expected_path = argv[++i];
        else if (a == "--write-expected" && i + 1 < argc)
            write_path = argv[++i];
        else if (a == "--verbose")
            verbose = true;
        else
            dirs.push_back(a);
    }
    std::map<std::string, std::string> expected;
    if (!expected_path.empty())
        expected = read_table(expected_path);
    std::ofstream table;
    if (!write_path.empty()) {
        table.open(write_path);
        table << "# nhc_conformance outcomes, one case per line: folder/case outcome [detail] "
                 "[frozen=NAMES]; a pass whose program computes nothing on the device is "
                 "\"passed folded\"\n";
    }
    std::map<std::string, int> codes;
    int regressions = 0, broken = 0, total[5] = {0, 0, 0, 0, 0}, total_frozen = 0;
    int total_folded = 0;
    std::printf("%-20s %6s %7s %7s %9s %8s %5s %8s %16s %16s\n", "folder", "cases", "passed",
                "failed", "rejected", "crashed", "hung", "passed%", "of them frozen",
                "of them folded");
    for (const std::string &d : dirs) {
        if (!fs::is_directory(d)) {
            std::cerr << "folder '" << d << "' does not exist (install libonnx-testdata)\n";
            return 2;
        }
        std::vector<fs::path> cases;
        for (const auto &e : fs::directory_iterator(d))
            if (fs::exists(e.path() / "model.onnx"))
                cases.push_back(e.path());
        std::sort(cases.begin(), cases.end());
        std::string folder = fs::path(d).filename().string();
        int count[5] = {0, 0, 0, 0, 0}, frozen_passes = 0, folded_passes = 0;
        for (const fs::path &c : cases) {
            std::string key = folder + "/" + c.filename().string();
            Result r = run_one(c, timeout);
            count[r.outcome]++;
            frozen_passes += r.outcome == Passed && !r.frozen.empty();
            folded_passes += r.outcome == Passed && r.detail == "folded";
            if (r.outcome == Rejected)
                codes[r.detail]++;
            if (table.is_open())
                table << key << " " << kOutcomes[r.outcome]
                      << (r.outcome == Rejected || r.detail == "folded" ? " " + r.detail : "")
                      << (r.frozen.empty() ? "" : " frozen=" + r.frozen) << "\n";
            // A case that passed needs to pass again, and without frozen inputs if it did.
            bool regressed =
                expected.count(key) && expected[key].rfind("passed", 0) == 0 &&
                (r.outcome != Passed || (expected[key] == "passed" && !r.frozen.empty()));
            broken += r.outcome >= Crashed;
            regressions += regressed;
            if (regressed || r.outcome >= Crashed || verbose)
                std::cout << (regressed              ? "  REGRESSED "
                              : r.outcome >= Crashed ? "  BROKEN "
                                                     : "  ")
                          << key << ": " << kOutcomes[r.outcome] << " " << r.detail
                          << (r.frozen.empty() ? "" : " (frozen: " + r.frozen + ")") << "\n";
        }
        std::printf("%-20s %6zu %7d %7d %9d %8d %5d %7.1f%% %16d %16d\n", folder.c_str(),
                    cases.size(), count[0], count[1], count[2], count[3], count[4],
                    cases.empty() ? 0.0 : 100.0 * count[0] / double(cases.size()), frozen_passes,
                    folded_passes);
        for (int i = 0; i < 5; i++)
            total[i] += count[i];
        total_frozen += frozen_passes;
        total_folded += folded_passes;
    }
    int all = total[0] + total[1] + total[2] + total[3] + total[4];
    std::printf("%-20s %6d %7d %7d %9d %8d %5d %7.1f%% %16d %16d\n", "all", all, total[0], total[1],
                total[2], total[3], total[4], all ? 100.0 * total[0] / all : 0.0, total_frozen,
                total_folded);
    std::printf("passed with device compute: %d (%.1f%%); folded at compile time: %d\n",
                total[0] - total_folded, all ? 100.0 * (total[0] - total_folded) / all : 0.0,
                total_folded);
    std::cout << "rejections by code:";
    for (const auto &[code, n] : codes)
        std::cout << " " << code << "=" << n;
    std::cout << "\n"
              << regressions << " regressions against the table, " << broken
              << " crashed or hung\n";
    return regressions == 0 && broken == 0 ? 0 : 1;
}
