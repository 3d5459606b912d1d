#include "runtime/Runtime.h"

#include "runtime/Partition.h"
#include "support/Error.h"

#include <algorithm>
#include <cstring>

namespace nhc::rt {

using neff::VarKind;

std::string shape_str(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); i++) {
        s += (i ? "," : "") + std::to_string(shape[i]);
    }
    return s + "]";
}

std::unique_ptr<Model> Model::load(const std::vector<uint8_t> &bytes, const LoadOptions &opt) {
    return from_contents(neff::read_neff(bytes, {!opt.timing_only}), opt);
}

std::unique_ptr<Model> Model::load_file(const std::string &path, const LoadOptions &opt) {
    return from_contents(neff::read_neff_file(path, {!opt.timing_only}), opt);
}

Model::Model() = default;
Model::~Model() = default;

namespace {

/** The target of `p`; NHC_ENEFF009 when it is not `opt`'s or not one this runtime knows. */
const target::TargetInfo *program_target(const neff::Program &p, const LoadOptions &opt) {
    if (!opt.target.empty() && opt.target != p.target) {
        user_error("NHC_ENEFF009", "NEFF '", p.name, "' was compiled for target ", p.target,
                   ", this runtime runs ", opt.target);
    }
    const target::TargetInfo *t = nullptr;
    for (const auto &ti : target::all_targets()) {
        t = ti.name == p.target ? &ti : t;
    }
    if (!t) {
        user_error("NHC_ENEFF009", "NEFF '", p.name, "' targets unknown '", p.target,
                   "': this runtime supports ", target::target_names());
    }
    return t;
}

} // namespace

std::unique_ptr<Model> Model::from_contents(neff::NeffContents c, const LoadOptions &opt) {
    if (c.partition_json.empty()) {
        auto m = load_program(std::move(c.program), opt);
        m->header_ = c.header;
        return m;
    }
    auto m = std::unique_ptr<Model>(new Model());
    m->target_ = program_target(c.program, opt);
    std::shared_ptr<const Partition> partition = load_partition(c, opt);
    m->program_ = std::move(c.program);
    m->program_.vars = partition->io;
    for (const auto &v : partition->io) {
        bool known = std::all_of(v.shape.begin(), v.shape.end(), [](int64_t d) { return d >= 0; });
        m->tensors_.push_back(
            {v.name, v.kind == VarKind::Input, v.dtype, v.shape, known ? v.size_bytes() : -1});
    }
    m->partition_ = std::move(partition);
    m->header_ = c.header;
    return m;
}

std::unique_ptr<Model> Model::load_program(neff::Program p, const LoadOptions &opt) {
    const target::TargetInfo *t = program_target(p, opt);
    neff::validate_program(p);
    auto m = std::unique_ptr<Model>(new Model());
    m->target_ = t;
    for (const auto &v : p.vars) {
        if (v.kind == VarKind::Input || v.kind == VarKind::Output) {
            m->tensors_.push_back(
                {v.name, v.kind == VarKind::Input, v.dtype, v.shape, v.size_bytes()});
        }
    }
    m->program_ = std::move(p);
    return m;
}

const TensorInfo &Model::tensor_info(const std::string &name) const {
    for (const auto &t : tensors_) {
        if (t.name == name) {
            return t;
        }
    }
    user_error("NHC_ERT014", "model '", program_.name, "' has no input or output named '", name,
               "'");
}

ExecResult Model::execute(const std::map<std::string, Tensor> &inputs,
                          const ExecOptions &opt) const {
    if (partition_)
        return execute_partition(*partition_, inputs, opt);
    for (const auto &[name, t] : inputs) {
        int v = program_.var_index(name);
        if (v < 0 || program_.vars[size_t(v)].kind != VarKind::Input) {
            user_error("NHC_ERT002", "unknown input '", name, "': model '", program_.name,
                       "' has no input of that name");
        }
    }
    if (!opt.timing_only && !program_.weights_loaded) {
        user_error("NHC_ERT021", "model '", program_.name,
                   "' was loaded for timing only (its weights were not read): run it timing only, "
                   "or load it without LoadOptions::timing_only");
    }
    int64_t instructions = 0;
    for (const auto &stream : program_.streams)
        instructions += int64_t(stream.size());
    if (opt.max_instructions > 0 && instructions > opt.max_instructions) {
        user_error("NHC_ERT022", "model '", program_.name, "' has ", instructions,
                   " instructions; the run may execute at most ", opt.max_instructions,
                   " (--max-instructions)");
    }
    Machine machine(*target_, program_, !opt.timing_only);
    for (size_t v = 0; v < program_.vars.size(); v++) {
        const neff::Variable &var = program_.vars[v];
        if (var.kind != VarKind::Input) {
            continue;
        }
        auto it = inputs.find(var.name);
        if (it == inputs.end() && opt.timing_only) {
            continue; // values do not matter to the timing model
        }
        if (it == inputs.end()) {
            user_error("NHC_ERT001", "missing input '", var.name, "' (",
                       neff::dtype_name(var.dtype), " ", shape_str(var.shape), ")");
        }
        const Tensor &t = it->second;
        if (t.dtype != var.dtype || t.shape != var.shape ||
            int64_t(t.data.size()) != var.size_bytes()) {
            user_error("NHC_ERT003", "input '", var.name, "' is ", neff::dtype_name(t.dtype), " ",
                       shape_str(t.shape), " (", t.data.size(), " bytes): expected ",
                       neff::dtype_name(var.dtype), " ", shape_str(var.shape), " (",
                       var.size_bytes(), " bytes)");
        }
        if (machine.functional()) {
            std::memcpy(machine.hbm_var(int(v)), t.data.data(), t.data.size());
        }
    }
    SimOptions so;
    so.trace = opt.trace;
    so.check_races = opt.check_races;
    SimResult r = simulate(machine, so);
    ExecResult out;
    out.summary = r.summary;
    out.trace = std::move(r.trace);
    for (size_t v = 0; v < program_.vars.size(); v++) {
        const neff::Variable &var = program_.vars[v];
        if (var.kind == VarKind::Output && machine.functional()) {
            Tensor t{var.dtype, var.shape, {}};
            const uint8_t *b = machine.hbm_var(int(v));
            t.data.assign(b, b + var.size_bytes());
            out.outputs[var.name] = std::move(t);
        }
    }
    return out;
}

namespace {

/** `load()` into `out` with its error as a Result (`out` empty then). */
template <typename Load>
Result load_result(Load load, std::unique_ptr<Model> &out) {
    try {
        out = load();
        return Result{};
    } catch (const UserError &e) {
        out.reset();
        return result_from(e);
    }
}

} // namespace

Result nrt_load(const std::vector<uint8_t> &neff, const LoadOptions &opt,
                std::unique_ptr<Model> &out) {
    return load_result([&] { return Model::load(neff, opt); }, out);
}

Result nrt_load_file(const std::string &path, const LoadOptions &opt, std::unique_ptr<Model> &out) {
    return load_result([&] { return Model::load_file(path, opt); }, out);
}

Result nrt_get_tensor_info(const Model &m, const std::string &name, TensorInfo &out) {
    try {
        out = m.tensor_info(name);
        return Result{};
    } catch (const UserError &e) {
        return result_from(e);
    }
}

Result nrt_execute(const Model &m, const std::map<std::string, Tensor> &inputs,
                   const ExecOptions &opt, ExecResult &out) {
    try {
        out = m.execute(inputs, opt);
        return Result{};
    } catch (const UserError &e) {
        return result_from(e);
    }
}

void nrt_unload(std::unique_ptr<Model> &m) {
    m.reset();
}

} // namespace nhc::rt
