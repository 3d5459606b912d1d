#ifndef NHC_TESTS_CASEDATA_H
#define NHC_TESTS_CASEDATA_H

// Reading ONNX backend-test case folders (model.onnx + test_data_set_N/{input,output}_i.pb) and
// comparing tensors, for the tests that check computed outputs against stored references.

#include "frontend/ConstantOperands.h"
#include "frontend/Frontend.h"
#include "graph/Graph.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <onnx/onnx_pb.h>
#include <set>
#include <string>

namespace nhc::test {

inline HostTensor read_pb(const std::filesystem::path &file, std::string *name = nullptr) {
    onnx::TensorProto t;
    std::ifstream in(file, std::ios::binary);
    if (!t.ParseFromIstream(&in))
        throw std::runtime_error("cannot parse " + file.string());
    if (name)
        *name = t.name();
    return HostTensor::from_onnx(t, file.string());
}

/** The inputs stored in a test data set, bound to the graph's inputs by the stored name, else by
 *  position. A stored input whose name is not a runtime input of the graph (one frozen to its
 *  value at compile time) is left out. */
inline std::map<std::string, HostTensor> read_inputs(const Graph &g,
                                                     const std::filesystem::path &set) {
    std::map<std::string, HostTensor> inputs;
    for (size_t i = 0;; i++) {
        std::filesystem::path file = set / ("input_" + std::to_string(i) + ".pb");
        if (!std::filesystem::exists(file))
            break;
        std::string stored;
        HostTensor t = read_pb(file, &stored);
        bool runtime = std::find(g.inputs.begin(), g.inputs.end(), stored) != g.inputs.end();
        if (runtime)
            inputs[stored] = t;
        else if (!g.has_value(stored) && i < g.inputs.size()) // stored under another name
            inputs[g.inputs[i]] = t;
    }
    return inputs;
}

/** The runtime inputs of the case in `dir` that operands needed at compile time come from
 *  (frontend/ConstantOperands.h), each frozen to its stored test_data_set_0 value (by the stored
 * tensor's name, else by its position among the model's runtime inputs, as read_inputs binds them).
 */
inline std::vector<FrozenInput> frozen_test_inputs(const std::filesystem::path &dir) {
    std::string model = (dir / "model.onnx").string();
    onnx::ModelProto m = prepare_model(model, {}).proto;
    std::vector<std::string> names = inputs_to_freeze(m);
    if (names.empty())
        return {};
    std::set<std::string> initializers;
    for (const auto &t : m.graph().initializer())
        initializers.insert(t.name());
    std::vector<std::string> runtime;
    for (const auto &vi : m.graph().input())
        if (!initializers.count(vi.name()))
            runtime.push_back(vi.name());
    std::vector<FrozenInput> frozen;
    for (size_t i = 0; i < runtime.size(); i++) {
        std::filesystem::path file =
            dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
        if (!std::filesystem::exists(file))
            break;
        std::string stored;
        read_pb(file, &stored);
        std::string name = std::find(runtime.begin(), runtime.end(), stored) != runtime.end()
                               ? stored
                               : runtime[i];
        if (std::find(names.begin(), names.end(), name) != names.end())
            frozen.push_back({name, file.string()});
    }
    std::sort(frozen.begin(), frozen.end(),
              [](const FrozenInput &a, const FrozenInput &b) { return a.name < b.name; });
    return frozen;
}

/** The case's model through the front end. When it refuses an operand that comes from runtime
 *  inputs (NHC_EALG002), those inputs are frozen to their test values (listed in `frozen`) and
 *  the model is loaded again; a model without such operands goes through the front end once. */
inline Graph load_case_graph(const std::filesystem::path &dir,
                             std::vector<FrozenInput> *frozen = nullptr) {
    std::string model = (dir / "model.onnx").string();
    try {
        return run_frontend(model, {});
    } catch (const UserError &e) {
        if (e.code() != "NHC_EALG002" || !std::filesystem::exists(dir / "test_data_set_0"))
            throw;
    }
    FrontendOptions fe;
    fe.frozen_inputs = frozen_test_inputs(dir);
    if (frozen)
        *frozen = fe.frozen_inputs;
    return run_frontend(model, fe);
}

struct Comparison {
    bool ok = true;
    double max_abs_err = 0, rel_l2 = 0;
    std::string why;
};

/** allclose(rtol, atol) elementwise, plus the relative L2 error ||a-b|| / ||b||. */
inline Comparison compare(const HostTensor &got_in, const HostTensor &want_in, double rtol,
                          double atol) {
    Comparison c;
    const HostTensor &got = got_in;
    // ONNX's test data stores expected bfloat16 outputs as their uint16 bits: read those bits as
    // the bf16 numbers they are, so both sides compare as values (a tolerance on bit patterns is
    // no tolerance on numbers). The output is bf16, or float32 as neuron-halide-run writes it.
    if ((got.dtype() == DType::BFloat16 || got.dtype() == DType::Float32) &&
        want_in.dtype() == DType::UInt16) {
        HostTensor decoded(DType::BFloat16, want_in.shape());
        decoded.mutable_bytes() = want_in.bytes().to_vector();
        return compare(got_in, decoded, rtol, atol);
    }
    const HostTensor &want = want_in;
    if (got.shape() != want.shape()) {
        c.ok = false;
        c.why = "shape " + shape_str(got.shape()) + " != " + shape_str(want.shape());
        return c;
    }
    double num = 0, den = 0;
    for (int64_t i = 0; i < got.numel(); i++) {
        double a = got.get_f64(i), b = want.get_f64(i);
        if (std::isnan(a) && std::isnan(b))
            continue;
        double d = std::fabs(a - b);
        if (std::isinf(a) && a == b)
            d = 0;
        num += d * d;
        den += b * b;
        c.max_abs_err = std::max(c.max_abs_err, d);
        if (!(d <= atol + rtol * std::fabs(b)) && c.ok) {
            c.ok = false;
            c.why = "element " + std::to_string(i) + ": " + std::to_string(a) + " vs " +
                    std::to_string(b);
        }
    }
    c.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    return c;
}

/** The verdict on one case folder: "pass", why an output differs from the stored one (rtol 1e-3,
 *  atol 1e-5), or the error `run` raised. `run` maps the case's inputs to the graph's outputs. */
template <typename Run>
std::string check_case_outputs(const Graph &g, const std::filesystem::path &dir, Run run) {
    try {
        std::map<std::string, HostTensor> outs = run(read_inputs(g, dir / "test_data_set_0"));
        for (size_t i = 0; i < g.outputs.size(); i++) {
            HostTensor want =
                read_pb(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
            Comparison c = compare(outs.at(g.outputs[i]), want, 1e-3, 1e-5);
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

/** The command line of the case runners: `[--expected FILE] [--verbose] DIR...`. Runs
 *  `run_case` (returning "pass", "skip" or why it failed) on every case folder, sorted. A case
 *  listed in the expected-failures file may fail; any other failure, and any listed case that
 *  passes, makes the run fail (so the list stays true). Returns the exit status. */
template <typename RunCase>
int run_case_suite(int argc, char **argv, RunCase run_case, const char *skip_reason) {
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
        std::vector<std::filesystem::path> cases;
        for (const auto &e : std::filesystem::directory_iterator(d))
            if (std::filesystem::exists(e.path() / "model.onnx"))
                cases.push_back(e.path());
        std::sort(cases.begin(), cases.end());
        for (const auto &c : cases) {
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
              << " unexpected, " << skip << " skipped (" << skip_reason << ")\n";
    return bad == 0 ? 0 : 1;
}

} // namespace nhc::test

#endif
