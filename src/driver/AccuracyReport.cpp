#include "driver/AccuracyReport.h"

#include "driver/Compile.h"
#include "runtime/Numerics.h"
#include "runtime/Runtime.h"
#include "support/Log.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <stdlib.h>

namespace nhc {

namespace {

/** The reference NEFF's folder (mkdtemp), removed with everything in it when done. */
class ScratchFolder {
public:
    ScratchFolder() {
        std::string pattern = (std::filesystem::temp_directory_path() / "nhc-accuracy-XXXXXX");
        if (mkdtemp(pattern.data()) == nullptr)
            user_error("NHC_EIO002",
                       "--accuracy-report: cannot make a folder for the reference "
                       "NEFF under '",
                       std::filesystem::temp_directory_path().string(), "'");
        path_ = pattern;
    }
    ~ScratchFolder() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string file(const std::string &name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

/** The made-up inputs (AccuracyReport.h): floats uniform in [-1, 1) from a fixed seed, in the
 *  order the NEFF lists its inputs; everything else zeros. */
std::map<std::string, rt::Tensor> made_up_inputs(const rt::Model &model) {
    uint64_t state = 0x9e3779b97f4a7c15ull; // a fixed seed: the same inputs on every run
    auto next_unit = [&state] {             // splitmix64, then 24 bits into [-1, 1)
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return float(z >> 40) / float(1 << 23) - 1.0f;
    };
    std::map<std::string, rt::Tensor> inputs;
    for (const rt::TensorInfo &t : model.tensors()) {
        if (!t.is_input)
            continue;
        rt::Tensor x{t.dtype, t.shape, std::vector<uint8_t>(size_t(t.size), 0)};
        const bool is_bool =
            model.program().vars.at(size_t(model.program().var_index(t.name))).holds_bool;
        if (neff::dtype_is_float(t.dtype) && !is_bool)
            for (size_t at = 0; at < x.data.size(); at += size_t(neff::dtype_size(t.dtype)))
                rt::store_elem(t.dtype, x.data.data() + at, next_unit());
        inputs[t.name] = std::move(x);
    }
    return inputs;
}

struct OutputError {
    int64_t elements = 0;
    double max_abs = 0, rel_l2 = 0;
};

/** `got`'s error against `want` (elements as fp32, rt::load_elem). */
OutputError error_of(const rt::Tensor &got, const rt::Tensor &want) {
    OutputError e;
    const size_t step = size_t(neff::dtype_size(got.dtype)),
                 want_step = size_t(neff::dtype_size(want.dtype));
    double diff2 = 0, want2 = 0;
    for (size_t i = 0; i * step < got.data.size() && i * want_step < want.data.size(); i++) {
        double a = rt::load_elem(got.dtype, got.data.data() + i * step);
        double b = rt::load_elem(want.dtype, want.data.data() + i * want_step);
        e.max_abs = std::max(e.max_abs, std::fabs(a - b));
        diff2 += (a - b) * (a - b);
        want2 += b * b;
        e.elements++;
    }
    // An all-zero reference: the norm of the difference itself.
    e.rel_l2 = want2 > 0 ? std::sqrt(diff2 / want2) : std::sqrt(diff2);
    return e;
}

/** Runs `neff` functionally on `inputs` (made from it when empty). */
rt::ExecResult run_functional(const std::string &neff, const std::string &what,
                              std::map<std::string, rt::Tensor> &inputs) {
    TimedStep step("accuracy report: run " + what);
    std::unique_ptr<rt::Model> model = rt::Model::load_file(neff);
    if (inputs.empty())
        inputs = made_up_inputs(*model);
    return model->execute(inputs);
}

} // namespace

void report_accuracy(const CompileOptions &options) {
    if (options.auto_cast == "none") {
        std::cout << "accuracy report: no auto-cast (--auto-cast none): the NEFF computes in the "
                     "model's own types, nothing to compare\n";
        return;
    }
    ScratchFolder scratch;
    CompileOptions reference = options;
    reference.auto_cast = "none";
    reference.accuracy_report = false;
    reference.dump_schedules.clear(); // the user's file holds the cast NEFF's schedules
    reference.output = scratch.file("reference.neff");
    log_info("accuracy report: compiling the model again without auto-cast, the reference");
    compile_model(reference);

    std::map<std::string, rt::Tensor> inputs;
    rt::ExecResult cast = run_functional(options.output, "the NEFF", inputs);
    rt::ExecResult exact = run_functional(reference.output, "the reference", inputs);

    std::cout << "accuracy report: --auto-cast " << options.auto_cast << " to "
              << options.auto_cast_type
              << " against the model compiled without auto-cast, on made-up inputs (floats "
                 "uniform in [-1, 1) from a fixed seed; integers and bools 0)\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %-32s %12s %12s %12s\n", "output", "elements", "max |diff|",
                  "rel L2");
    std::cout << line;
    for (const auto &[name, want] : exact.outputs) {
        const rt::Tensor &got = cast.outputs.at(name);
        if (got.shape != want.shape) { // a length known only at run time (NonMaxSuppression's)
            std::cout << "  " << name << ": shape " << rt::shape_str(got.shape) << " against "
                      << rt::shape_str(want.shape)
                      << " without auto-cast: the cast changed a data-dependent length\n";
            continue;
        }
        OutputError e = error_of(got, want);
        std::snprintf(line, sizeof line, "  %-32s %12lld %12.3e %12.3e\n", name.c_str(),
                      static_cast<long long>(e.elements), e.max_abs, e.rel_l2);
        std::cout << line;
    }
    std::cout << std::flush;
}

} // namespace nhc
