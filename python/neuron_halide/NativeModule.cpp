// neuron_halide._native: the compiler and the simulator for the Python module (issue 18). Kept
// to what Python cannot do itself: compile with the command line's options (parsed as the CLI
// parses them, so every option, default and error is the CLI's), load a NEFF, and run it on
// tensors passed as (dtype name, shape, bytes) triples, which neuron_halide/__init__.py makes
// from and into NumPy arrays. A user error raises neuron_halide.Error(code, message).

#include "driver/Compile.h"
#include "driver/Options.h"
#include "driver/ToolMain.h"
#include "runtime/Profile.h"
#include "runtime/ProfileReport.h"
#include "runtime/Runtime.h"
#include "runtime/TensorFiles.h"
#include "support/Error.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>

namespace py = pybind11;
using namespace nhc;

namespace {

/** (dtype name, shape, bytes): a tensor as it crosses to Python. */
using PyTensor = std::tuple<std::string, std::vector<int64_t>, py::bytes>;

void compile(const std::vector<std::string> &args) {
    std::vector<const char *> argv = {"neuron-halide-cc", "compile"};
    for (const std::string &a : args)
        argv.push_back(a.c_str());
    ParsedCommandLine cmd = parse_command_line(int(argv.size()), argv.data());
    py::gil_scoped_release unlocked; // a compile takes seconds: other Python threads run
    // One compile at a time: the log (Logger) is the process's.
    static std::mutex one_at_a_time;
    std::lock_guard<std::mutex> lock(one_at_a_time);
    start_logging(cmd.options);
    compile_model(cmd.options);
}

/** A loaded NEFF and what its inputs and outputs are. */
class LoadedModel {
public:
    explicit LoadedModel(const std::string &path) { model_ = rt::Model::load_file(path); }

    /** (name, dtype, shape) of each input, or output, in the NEFF's order. */
    std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>
    tensors(bool inputs) const {
        std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>> out;
        for (const neff::Variable &v : model_->program().vars)
            if (v.kind == (inputs ? neff::VarKind::Input : neff::VarKind::Output))
                out.emplace_back(v.name, neff::dtype_name(v.dtype), v.shape);
        return out;
    }

    /** Runs on `inputs` by name; the outputs by name, the summary JSON, the per-node table. */
    std::tuple<std::map<std::string, PyTensor>, std::string, std::string>
    run(const std::map<std::string, PyTensor> &inputs, bool timing_only) const {
        std::map<std::string, rt::Tensor> bound;
        for (const auto &[name, t] : inputs) {
            NpyTensor npy{std::get<0>(t), std::get<1>(t), {}};
            std::string bytes = std::get<2>(t);
            npy.data.assign(bytes.begin(), bytes.end());
            bound[name] = rt::input_from_file(npy, *model_, name);
        }
        rt::ExecOptions eo;
        eo.timing_only = timing_only;
        eo.trace = true;
        rt::ExecResult res;
        {
            py::gil_scoped_release unlocked;
            res = model_->execute(bound, eo);
        }
        std::map<std::string, PyTensor> outputs;
        for (const auto &[name, t] : res.outputs) {
            NpyTensor npy = rt::output_for_file(t, *model_, name);
            outputs[name] = {
                npy.dtype, npy.shape,
                py::bytes(reinterpret_cast<const char *>(npy.data.data()), npy.data.size())};
        }
        std::vector<rt::NodeTimeRow> rows = rt::node_time_rows(res.trace, res.summary.total_ns);
        return {outputs, rt::summary_json(res.summary, model_->target()),
                rt::node_table_json(rows, res.summary.total_ns)};
    }

private:
    std::unique_ptr<rt::Model> model_;
};

} // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() =
        "neuron-halide-cc's compiler and NeuronCore simulator (use the neuron_halide package)";
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p)
                std::rethrow_exception(p);
        } catch (const UserError &e) {
            py::object error = py::module_::import("neuron_halide").attr("Error");
            PyErr_SetObject(error.ptr(), error(e.code(), e.what()).ptr());
        }
    });
    m.def("compile", &compile, "compile with the command line's arguments after `compile`");
    py::class_<LoadedModel>(m, "LoadedModel")
        .def(py::init<const std::string &>())
        .def("tensors", &LoadedModel::tensors)
        .def("run", &LoadedModel::run);
}
