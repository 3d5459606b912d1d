#ifndef NHC_TESTS_CLI_CLIRUN_H
#define NHC_TESTS_CLI_CLIRUN_H

// Runs the neuron-halide-cc binary (path in $NHC_CLI) and collects its exit status and output,
// for the tests of the command line.

#include "../unit/TestModels.h"
#include "support/Npy.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <doctest/doctest.h>
#include <fstream>
#include <onnx/onnx_pb.h>
#include <string>
#include <sys/wait.h>

namespace nhc::cli_test {

using nhc::test::TempDir;

struct Run {
    int status;      // exit status, or 128 + signal
    std::string out; // stdout and stderr together
    bool has(const std::string &s) const { return out.find(s) != std::string::npos; }
};

inline std::string cli() {
    const char *p = std::getenv("NHC_CLI");
    REQUIRE_MESSAGE(p != nullptr, "set NHC_CLI to the neuron-halide-cc binary");
    return p;
}

/** Runs a shell command; its exit status and its output (stdout and stderr). */
inline Run run_shell(const std::string &cmd) {
    FILE *p = popen((cmd + " 2>&1").c_str(), "r");
    REQUIRE(p != nullptr);
    Run r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        r.out.append(buf, n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
}

inline std::string in_dir(const std::string &cwd) {
    return cwd.empty() ? "" : "cd '" + cwd + "' && ";
}

/** neuron-halide-cc with `args`, from `cwd`. */
inline Run run(const std::string &args, const std::string &cwd = "") {
    return run_shell(in_dir(cwd) + cli() + " " + args);
}

/** neuron-halide-run ($NHC_RUN) with `args`, from `cwd`. */
inline Run run_neff(const std::string &args, const std::string &cwd) {
    const char *runner = std::getenv("NHC_RUN");
    REQUIRE_MESSAGE(runner != nullptr, "set NHC_RUN to the neuron-halide-run binary");
    return run_shell(in_dir(cwd) + runner + " " + args);
}

inline void expect_user_error(const Run &r, const std::string &code) {
    INFO(r.out);
    CHECK(r.status == 1);
    CHECK(r.has("[" + code + "]"));
}

inline std::string model_file(const TempDir &dir, const std::string &name,
                              const std::string &text) {
    return nhc::test::write_model(nhc::test::parse_model(text), dir.file(name));
}

/** The whole contents of a file (REQUIRE that it can be read). */
inline std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "cannot read " << path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string example_model() {
    return std::string(NHC_SOURCE_DIR) + "/examples/mlp/model.onnx";
}

/** The .npy tensor neuron-halide-run wrote at `path` (relative to `dir`). */
inline nhc::NpyTensor read_npy(const TempDir &dir, const std::string &path) {
    std::ifstream f(dir.file(path), std::ios::binary);
    REQUIRE_MESSAGE(f.good(), "no output " << path);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                               std::istreambuf_iterator<char>());
    return nhc::parse_npy(bytes, path);
}

/** Runs `neff` (of the example model, in `dir`) with neuron-halide-run ($NHC_RUN) race-checked
 *  on the example's input; returns the relative L2 error of its output against the reference. */
inline double example_rel_l2(const TempDir &dir, const std::string &neff) {
    std::string input = std::string(NHC_SOURCE_DIR) + "/examples/mlp/test_data_set_0/input_0.pb";
    Run r = run_neff(neff + " --check-races --input input=" + input + " --output-dir out/new",
                     dir.path.string());
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(r.has("latency"));
    nhc::NpyTensor got = read_npy(dir, "out/new/logits.npy");
    onnx::TensorProto want;
    std::ifstream w(std::string(NHC_SOURCE_DIR) + "/examples/mlp/test_data_set_0/output_0.pb",
                    std::ios::binary);
    REQUIRE(want.ParseFromIstream(&w));
    REQUIRE(got.data.size() == want.raw_data().size());
    const float *g = reinterpret_cast<const float *>(got.data.data());
    const float *e = reinterpret_cast<const float *>(want.raw_data().data());
    double num = 0, den = 0;
    for (size_t i = 0; i < got.data.size() / 4; i++) {
        num += (g[i] - e[i]) * double(g[i] - e[i]);
        den += double(e[i]) * e[i];
    }
    return std::sqrt(num / den);
}

} // namespace nhc::cli_test

#endif
