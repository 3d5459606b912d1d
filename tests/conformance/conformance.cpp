// The ONNX conformance runner. Every case of the given folders (libonnx-testdata's, and
// tests/conformance/recurrent's, whose outputs are ONNX Runtime's) goes the way a
// user's model goes (issue 20): `neuron-halide-cc model.onnx --output m.neff` (the binary, --cc),
// then `neuron-halide-run m.neff --input NAME=input_i.pb ... --output-dir out` (--run), which binds
// the case's .pb files (runtime/TensorFiles.h: bool, bfloat16 given as uint16 bits, int64 to
// int32) and writes each output as a .npy file; those are read back and compared with the stored
// output_i.pb (relative 1e-3, absolute 1e-5 per element; bfloat16 compared as numbers). The table
// counts that path. Each case also runs in-process first (the front end, graph passes and code
// generation called directly, the program run without a file): a case that passes there and not
// through the tools is a disagreement, which fails the run. Each case runs in a forked child with
// a time limit, so a crash or a hang is observed, not suffered.
//
// An input that an operand needing a compile-time value comes from (Resize's scales, Slice's
// bounds, ...: frontend/ConstantOperands.h) is frozen to its test_data_set_0 value with
// --freeze-input's option, as a user of a static compiler would; such cases are listed with
// "frozen=NAMES" and counted in their own column, so the table shows what passes without freezing
// too. A passing case whose program has no compute instruction (every value folded at compile
// time, the device only copies) is marked "folded" and counted apart from the cases the device
// computes.
//
// Outcomes: passed; failed (compiled, but a wrong number or a coded error while running);
// rejected (a coded user error while compiling: an unsupported operator, a dynamic shape, ...);
// crashed (a signal or an internal error); hung (the time limit).
//
// usage: nhc_conformance --cc PATH --run PATH [--timeout S] [--expected FILE]
//                        [--write-expected FILE] [--verbose] DIR...
// Prints a table per folder and the rejection codes. With --expected, a case that the table says
// passed and does not pass now (or needs frozen inputs now, where it did not) fails the run; any
// crash, hang or disagreement always does.

#include "../ForkedRun.h"
#include "../e2e/E2E.h"
#include "../unit/TestModels.h"
#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "support/Log.h"
#include "support/TensorFile.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sys/wait.h>

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
    std::string detail;     // the code or what went wrong
    std::string frozen;     // the inputs frozen to their test values, comma-separated
    bool disagrees = false; // passed in-process, not through the tools
};

/** The stored name of a .pb tensor file. */
std::string stored_name(const fs::path &file) {
    onnx::TensorProto t;
    std::ifstream in(file, std::ios::binary);
    t.ParseFromIstream(&in);
    return t.name();
}

/** A tensor file's contents as a HostTensor of the type its NumPy name says. */
HostTensor host_tensor(const NpyTensor &f) {
    std::optional<DType> dt = dtype_from_onnx(onnx_data_type(f.dtype));
    nhc_assert(dt, "no graph type for a " << f.dtype << " file");
    HostTensor t(*dt, f.shape);
    t.mutable_bytes() = f.data;
    return t;
}

/** `s` quoted for the shell. */
std::string shell_quoted(const std::string &s) {
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

/** The paths of neuron-halide-cc and neuron-halide-run (--cc, --run). */
struct Tools {
    std::string cc, run;
};

/** Runs a shell command: its exit status (128 + signal if killed) and its output. */
std::pair<int, std::string> shell(const std::string &command) {
    FILE *p = popen((command + " 2>&1").c_str(), "r");
    if (!p)
        return {127, "cannot run " + command};
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;)
        out.append(buf, n);
    int st = pclose(p);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), out};
}

/** The "[NHC_E...]" code in a tool's output, or "". */
std::string error_code(const std::string &out) {
    size_t at = out.find("[NHC_E");
    size_t end = at == std::string::npos ? at : out.find(']', at);
    return end == std::string::npos ? "" : out.substr(at + 1, end - at - 1);
}

/** The tool's error line (else its first line), for a failure's detail. */
std::string error_line(const std::string &out) {
    size_t at = out.find("error: ");
    if (at == std::string::npos)
        at = 0;
    return out.substr(at, out.find('\n', at) - at);
}

/** The runtime inputs and the outputs of the model file, by name: for a case whose graph the
 *  in-process import refused (control flow, which only host fallback runs). */
Graph interface_of_file(const fs::path &model) {
    onnx::ModelProto m;
    std::ifstream in(model, std::ios::binary);
    Graph g;
    if (!m.ParseFromIstream(&in))
        return g;
    std::set<std::string> initializers;
    for (const auto &t : m.graph().initializer())
        initializers.insert(t.name());
    for (const auto &vi : m.graph().input())
        if (!initializers.count(vi.name()))
            g.inputs.push_back(vi.name());
    for (const auto &vi : m.graph().output())
        g.outputs.push_back(vi.name());
    return g;
}

/** The case in `dir` the user's way (see the file comment): its outcome and detail (the code of
 *  a rejection, why a run failed). `loaded`: the case's graph as loaded (its runtime inputs and
 *  outputs; empty when the import refused it), `frozen`: the inputs frozen at compile time. */
std::pair<Outcome, std::string> run_through_files(const Tools &tools, const fs::path &dir,
                                                  const Graph &loaded,
                                                  const std::vector<FrozenInput> &frozen) {
    const Graph g = loaded.inputs.empty() && loaded.outputs.empty()
                        ? interface_of_file(dir / "model.onnx")
                        : loaded;
    test::TempDir tmp;
    std::string neff = tmp.file("model.neff");
    std::string compile = tools.cc + " " + shell_quoted((dir / "model.onnx").string()) +
                          " --output " + shell_quoted(neff);
    for (const FrozenInput &f : frozen)
        compile += " --freeze-input " + shell_quoted(f.name + "=" + f.file);
    auto [cc_status, cc_out] = shell(compile);
    if (cc_status == 1 && !error_code(cc_out).empty())
        return {Rejected, error_code(cc_out)};
    if (cc_status != 0)
        return {Crashed, "neuron-halide-cc exit " + std::to_string(cc_status) + ": " + cc_out};
    // Bound by the stored name, else by position among the graph's inputs, as test::read_inputs
    // binds them in-process; frozen inputs are not passed.
    fs::path set = dir / "test_data_set_0";
    std::string run =
        tools.run + " " + shell_quoted(neff) + " --output-dir " + shell_quoted(tmp.file("out"));
    for (size_t i = 0;; i++) {
        fs::path file = set / ("input_" + std::to_string(i) + ".pb");
        if (!fs::exists(file))
            break;
        std::string name = stored_name(file);
        bool runtime = std::find(g.inputs.begin(), g.inputs.end(), name) != g.inputs.end();
        if (!runtime && !g.has_value(name) && i < g.inputs.size())
            name = g.inputs[i];
        else if (!runtime)
            continue;
        run += " --input " + shell_quoted(name + "=" + file.string());
    }
    auto [run_status, run_out] = shell(run);
    if (run_status == 1)
        return {Failed, error_line(run_out)};
    if (run_status != 0)
        return {Crashed, "neuron-halide-run exit " + std::to_string(run_status) + ": " + run_out};
    try {
        for (size_t i = 0; i < g.outputs.size(); i++) {
            const std::string &name = g.outputs[i];
            std::string file = name; // as neuron-halide-run names it: no '/' in a file name
            std::replace(file.begin(), file.end(), '/', '_');
            HostTensor got = host_tensor(read_tensor_file(tmp.file("out/" + file + ".npy")));
            HostTensor want = test::read_pb(set / ("output_" + std::to_string(i) + ".pb"));
            test::Comparison c = test::compare(got, want, 1e-3, 1e-5);
            if (!c.ok)
                return {Failed, "wrong output '" + name + "': " + c.why};
        }
    } catch (const UserError &e) {
        return {Failed, e.formatted()};
    }
    return {Passed, ""};
}

// The verdict on one case, through the tools (the user's path), after the in-process run. The
// message starts with "frozen=NAMES " when inputs were frozen, then "disagrees " when the case
// passed in-process and not through the tools; a pass says "folded" when the device computes
// nothing, "host" when the in-process compile (device only) refused it and the tools ran host
// segments (host fallback).
std::pair<int, std::string> judge(const Tools &tools, const fs::path &dir) {
    Graph g, compiled; // as loaded, and after the graph passes (the types the program has)
    neff::Program program;
    std::vector<FrozenInput> frozen_inputs;
    std::string frozen, in_process;
    bool device_only = false; // the in-process compile took the whole case to the device
    try {
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
        device_only = true;
        in_process = test::check_case_outputs(g, dir, [&](const auto &in) {
            return test::run_program(program, compiled, in).outputs;
        });
    } catch (const UserError &e) {
        in_process = e.code(); // refused in-process: the tools are asked all the same
    } catch (const std::exception &e) {
        return {Crashed, frozen + "internal: " + e.what()};
    }
    auto [outcome, detail] = run_through_files(tools, dir, g, frozen_inputs);
    if (outcome == Passed)
        return {Passed, frozen + (!device_only                       ? "host"
                                  : has_compute_instruction(program) ? ""
                                                                     : "folded")};
    return {outcome, frozen + (in_process == "pass" ? "disagrees " : "") + detail};
}

Result run_one(const Tools &tools, const fs::path &dir, unsigned timeout) {
    test::ForkedResult r = test::run_forked([&] { return judge(tools, dir); }, timeout);
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
    if (res.detail.rfind("disagrees ", 0) == 0) {
        res.disagrees = true;
        res.detail = res.detail.substr(10);
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
        const bool passed = outcome == "passed";
        for (const char *detail : {" host", " folded", " frozen"})
            if (passed && line.find(detail, a + 1) != std::string::npos)
                outcome += detail;
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
    Tools tools;
    std::vector<std::string> dirs;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--timeout" && i + 1 < argc)
            timeout = static_cast<unsigned>(std::stoul(argv[++i]));
        else if (a == "--cc" && i + 1 < argc)
            tools.cc = argv[++i];
        else if (a == "--run" && i + 1 < argc)
            tools.run = argv[++i];
        else if (a == "--expected" && i + 1 < argc)
            expected_path = argv[++i];
        else if (a == "--write-expected" && i + 1 < argc)
            write_path = argv[++i];
        else if (a == "--verbose")
            verbose = true;
        else
            dirs.push_back(a);
    }
    if (tools.cc.empty() || tools.run.empty()) {
        std::cerr << "give the tools' paths: --cc neuron-halide-cc --run neuron-halide-run\n";
        return 2;
    }
    std::map<std::string, std::string> expected;
    if (!expected_path.empty())
        expected = read_table(expected_path);
    std::ofstream table;
    if (!write_path.empty()) {
        table.open(write_path);
        table << "# nhc_conformance outcomes, one case per line: folder/case outcome [detail] "
                 "[frozen=NAMES]; a pass whose program computes nothing on the device is "
                 "\"passed folded\", one the tools ran with host segments \"passed host\"\n";
    }
    std::map<std::string, int> codes;
    int regressions = 0, broken = 0, disagreements = 0, total[5] = {0, 0, 0, 0, 0};
    int total_frozen = 0;
    int total_folded = 0, total_host = 0;
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
        int count[5] = {0, 0, 0, 0, 0}, frozen_passes = 0, folded_passes = 0, host_passes = 0;
        for (const fs::path &c : cases) {
            std::string key = folder + "/" + c.filename().string();
            Result r = run_one(tools, c, timeout);
            count[r.outcome]++;
            frozen_passes += r.outcome == Passed && !r.frozen.empty();
            folded_passes += r.outcome == Passed && r.detail == "folded";
            host_passes += r.outcome == Passed && r.detail == "host";
            if (r.outcome == Rejected)
                codes[r.detail]++;
            if (table.is_open())
                table << key << " " << kOutcomes[r.outcome]
                      << (r.outcome == Rejected || r.detail == "folded" || r.detail == "host"
                              ? " " + r.detail
                              : "")
                      << (r.frozen.empty() ? "" : " frozen=" + r.frozen) << "\n";
            // A case that passed needs to pass again, without frozen inputs if it did, and with
            // the device computing if it did (not a host segment in its place).
            const std::string was = expected.count(key) ? expected[key] : "";
            bool passed = was.rfind("passed", 0) == 0;
            bool frozen = was.find(" frozen") != std::string::npos;
            bool on_device = passed && was.find(" host") == std::string::npos &&
                             was.find(" folded") == std::string::npos;
            bool regressed = passed && (r.outcome != Passed || (!frozen && !r.frozen.empty()) ||
                                        (on_device && r.detail == "host"));
            broken += r.outcome >= Crashed;
            regressions += regressed;
            disagreements += r.disagrees;
            if (regressed || r.outcome >= Crashed || r.disagrees || verbose)
                std::cout << (regressed              ? "  REGRESSED "
                              : r.outcome >= Crashed ? "  BROKEN "
                              : r.disagrees          ? "  DISAGREES (passed in-process) "
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
        total_host += host_passes;
    }
    int all = total[0] + total[1] + total[2] + total[3] + total[4];
    std::printf("%-20s %6d %7d %7d %9d %8d %5d %7.1f%% %16d %16d\n", "all", all, total[0], total[1],
                total[2], total[3], total[4], all ? 100.0 * total[0] / all : 0.0, total_frozen,
                total_folded);
    int device = total[0] - total_folded - total_host;
    std::printf("passed with device compute: %d (%.1f%%); folded at compile time: %d; with host "
                "segments (host fallback): %d\n",
                device, all ? 100.0 * device / all : 0.0, total_folded, total_host);
    std::cout << "rejections by code:";
    for (const auto &[code, n] : codes)
        std::cout << " " << code << "=" << n;
    std::cout << "\n"
              << regressions << " regressions against the table, " << broken << " crashed or hung, "
              << disagreements << " passed in-process but not through the tools\n";
    return regressions == 0 && broken == 0 && disagreements == 0 ? 0 : 1;
}
