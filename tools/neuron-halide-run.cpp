// neuron-halide-run: load a NEFF and run it once on the NeuronCore simulator.
//   neuron-halide-run model.neff --input name=file.npy|.pb ... [--output-dir DIR]
//                     [--profile trace.json] [--profile-dir DIR] [--summary-json FILE]
//                     [--target T] [--timing-only]
//                     [--check-races] [--max-instructions N]
// Prints a summary of the outputs, the simulated latency and the engine utilisation; writes each
// output as DIR/<output name>.npy (bf16, tf32 and fp8 outputs are widened to float32, which NumPy
// reads; bool outputs are bool). Inputs are bound as runtime/TensorFiles.h says (int64 to int32,
// bool, bfloat16 given as its uint16 bits). --timing-only times every instruction from its
// operands' shapes without computing any value (inputs optional, no outputs): for large kernels,
// see docs/timing.md. Exit status: 0 on success, 1 on a user error (a coded message and the
// NRT-like status on stderr), 70 on an internal error.

#include "neff/NeffFile.h"
#include "runtime/Numerics.h"
#include "runtime/Profile.h"
#include "runtime/ProfileReport.h"
#include "runtime/Runtime.h"
#include "runtime/TensorFiles.h"
#include "support/Error.h"
#include "support/MallocTunables.h"
#include "support/TensorFile.h"

#include <llvm/Support/CommandLine.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace cl = llvm::cl;
using namespace nhc;

namespace {

cl::opt<std::string> neff_path(cl::Positional, cl::desc("<model.neff>"), cl::Required);
cl::list<std::string> inputs("input", cl::desc("bind an input: name=file (.npy or .pb)"),
                             cl::value_desc("name=file"));
cl::opt<std::string> output_dir("output-dir", cl::desc("write each output as DIR/<name>.npy"),
                                cl::value_desc("DIR"));
/** Groups listed in the profile table printed with --profile (the rest summed on one line). */
constexpr size_t kProfileRows = 15;

cl::opt<std::string> profile("profile",
                             cl::desc("write a Chrome/Perfetto trace JSON, and print where the "
                                      "time goes per group of ONNX nodes"),
                             cl::value_desc("trace.json"));
cl::opt<std::string> profile_dir(
    "profile-dir",
    cl::desc("write into DIR the trace (trace.json), a timeline picture (timeline.svg) and where "
             "the time goes per group of ONNX nodes (nodes.md, nodes.json)"),
    cl::value_desc("DIR"));
cl::opt<std::string> summary("summary-json", cl::desc("write the run summary as JSON"),
                             cl::value_desc("FILE"));
cl::opt<std::string> device("target", cl::desc("device target (default: the NEFF's own)"),
                            cl::value_desc("trn1|trn1n|inf2|trn2"));

cl::opt<bool> timing_only("timing-only",
                          cl::desc("time the NEFF without computing values (no outputs)"));
cl::opt<int64_t> max_instructions("max-instructions",
                                  cl::desc("refuse to run a NEFF of more instructions than this "
                                           "(NHC_ERT022); 0: no limit"),
                                  cl::value_desc("N"), cl::init(0));
cl::opt<bool> check_races("check-races",
                          cl::desc("stop at the first pair of accesses to the same bytes, one a "
                                   "write, that no semaphore orders (NHC_ERT019)"));

constexpr int kExitUserError = 1;
constexpr int kExitInternalError = 70;

std::string describe(const std::string &name, const rt::Tensor &t, const neff::Variable &var) {
    size_t es = size_t(neff::dtype_size(t.dtype)), n = t.data.size() / es;
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    size_t nan = 0;
    for (size_t i = 0; i < n; i++) {
        double v = rt::load_elem(t.dtype, t.data.data() + i * es);
        if (std::isnan(v)) {
            nan++;
            continue;
        }
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        sum += v;
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, "output %s: %s %s min %.6g max %.6g mean %.6g%s", name.c_str(),
                  var.holds_bool ? "bool" : neff::dtype_name(t.dtype),
                  rt::shape_str(t.shape).c_str(), lo, hi, n ? sum / double(n) : 0.0,
                  nan ? (" nan " + std::to_string(nan)).c_str() : "");
    return buf;
}

void write_text(const std::string &path, const std::string &text) {
    neff::write_file_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

int run() {
    std::unique_ptr<rt::Model> model;
    rt::LoadOptions lo;
    lo.target = device;
    lo.timing_only = timing_only; // the weights are not even read
    rt::Result r = rt::nrt_load_file(neff_path, lo, model);
    if (!r.ok()) {
        throw UserError(r.code, r.message + " (" + rt::nrt_status_name(r.status) + ")");
    }
    std::map<std::string, rt::Tensor> bound;
    for (const std::string &arg : inputs) {
        size_t eq = arg.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
            user_error("NHC_ERT015", "--input '", arg, "' is not of the form name=file");
        }
        std::string name = arg.substr(0, eq);
        bound[name] = rt::input_from_file(read_tensor_file(arg.substr(eq + 1)), *model, name);
    }
    rt::ExecOptions eo;
    eo.trace = !profile.empty() || !profile_dir.empty();
    eo.timing_only = timing_only;
    eo.check_races = check_races;
    eo.max_instructions = max_instructions;
    rt::ExecResult res;
    r = rt::nrt_execute(*model, bound, eo, res);
    if (!r.ok()) {
        throw UserError(r.code, r.message + " (" + rt::nrt_status_name(r.status) + ")");
    }
    if (!output_dir.empty() && !res.outputs.empty()) {
        std::error_code ec; // a folder that cannot be made is reported when the file is written
        std::filesystem::create_directories(std::string(output_dir), ec);
    }
    for (const auto &[name, t] : res.outputs) {
        const neff::Variable &var = model->program().vars[model->program().var_index(name)];
        std::cout << describe(name, t, var) << "\n";
        if (!output_dir.empty()) {
            // ONNX names may contain '/', which must not become folders.
            std::string file = name;
            std::replace(file.begin(), file.end(), '/', '_');
            write_npy_file(output_dir + "/" + file + ".npy", rt::output_for_file(t, *model, name));
        }
    }
    if (timing_only) {
        std::cout << "timing only: no values were computed\n";
    }
    std::cout << rt::summary_text(res.summary, model->target());
    if (!summary.empty()) {
        write_text(summary, rt::summary_json(res.summary, model->target()));
    }
    if (!profile.empty()) {
        write_text(profile, rt::trace_json(res.trace, model->program().name));
        std::cout << rt::profile_table(res.trace, kProfileRows);
    }
    if (!profile_dir.empty()) {
        rt::write_profile_dir(profile_dir, res.trace, res.summary.total_ns, model->program().name);
        std::cout << "profile: " << profile_dir << "/timeline.svg, nodes.md, nodes.json, "
                  << "trace.json\n";
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    nhc::reexec_with_malloc_tunables(argv);
    // --help lists this tool's options, not every option LLVM's libraries register.
    static cl::OptionCategory options("neuron-halide-run options");
    neff_path.addCategory(options);
    inputs.addCategory(options);
    output_dir.addCategory(options);
    profile.addCategory(options);
    profile_dir.addCategory(options);
    summary.addCategory(options);
    device.addCategory(options);
    timing_only.addCategory(options);
    check_races.addCategory(options);
    max_instructions.addCategory(options);
    cl::HideUnrelatedOptions(options);
    cl::ParseCommandLineOptions(argc, argv, "run a NEFF on the NeuronCore simulator\n");
    try {
        return run();
    } catch (const UserError &e) {
        std::cerr << "error: " << e.formatted() << "\n";
        return kExitUserError;
    } catch (const std::exception &e) {
        std::cerr << "internal error (this is a bug in neuron-halide-run): " << e.what() << "\n";
        return kExitInternalError;
    }
}
