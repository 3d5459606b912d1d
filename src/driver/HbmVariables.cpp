#include "driver/HbmVariables.h"

#include "driver/FormGroups.h"
#include "graph/ValueIndex.h"
#include "neff/SelectGroup.h"

namespace nhc {

using codegen_groups::is_view;

HbmVariables::HbmVariables(const Graph &g, const ValueIndex &values, neff::Program &prog,
                           bool without_weight_bytes)
    : g_(g), values_(values), prog_(prog), without_weight_bytes_(without_weight_bytes) {
    for (const std::string &in : g_.inputs)
        var_of_[in] = add_var(in, neff::VarKind::Input, g_.value(in));
    for (const std::string &out : g_.outputs) {
        graph_outputs_.insert(out);
        if (!var_of_.count(out))
            var_of_[out] = add_var(out, neff::VarKind::Output, g_.value(out));
    }
    // A view aliases its input's variable; a view that is a graph output still needs a copy
    // into the output variable, unless its value is computed there.
    for (const Node &n : g_.nodes)
        if (is_view(n) && !graph_outputs_.count(n.outputs[0]))
            alias_of_[n.outputs[0]] = n.inputs[0];
    plan_transposed_outputs();
    plan_outputs_written_in_place();
    std::set<std::string> taken(g_.inputs.begin(), g_.inputs.end());
    taken.insert(graph_outputs_.begin(), graph_outputs_.end());
    for (const auto &[value, v] : var_of_)
        taken.insert(value);
    for (const auto &[value, target] : alias_of_)
        taken.insert(value);
    for (const auto &[value, target] : transposed_into_)
        taken.insert(value);
    in_place_ = place_concat_inputs(g_, values_, taken);
}

// A Transpose that keeps the last axis, sole reader of a value computed here: the value's group
// writes it already transposed, into the Transpose's output (attention's heads merged back: [b,
// h, s, d] -> [b, s, h, d]), and the Transpose is no group.
void HbmVariables::plan_transposed_outputs() {
    std::set<std::string> computed;
    for (const Node &n : g_.nodes)
        if (!is_view(n) && n.op_type != "Transpose")
            computed.insert(n.outputs.begin(), n.outputs.end());
    for (const Node &n : g_.nodes) {
        if (n.op_type != "Transpose" || !n.domain.empty() || n.inputs.size() != 1)
            continue;
        std::vector<int64_t> perm = n.attr_ints("perm");
        const std::string &x = n.inputs[0];
        if (perm.empty() || perm.back() != static_cast<int64_t>(perm.size()) - 1 ||
            !computed.count(x) || values_.consumers_of(x).size() != 1 || graph_outputs_.count(x))
            continue;
        transposed_into_[x] = {n.outputs[0], perm};
        folded_.push_back(&n);
    }
}

// A graph output that views a value computed here (the flattened form of an output,
// graph/FlattenElementwise): the value is computed straight into the output's bytes.
void HbmVariables::plan_outputs_written_in_place() {
    std::set<std::string> graph_inputs(g_.inputs.begin(), g_.inputs.end());
    for (const Node &n : g_.nodes) {
        if (!is_view(n) || !graph_outputs_.count(n.outputs[0]))
            continue;
        const Value &in = g_.value(n.inputs[0]);
        // Not when the viewed value is itself a view (its bytes are another value's).
        if (in.is_constant() || graph_inputs.count(in.name) || graph_outputs_.count(in.name) ||
            var_of_.count(in.name) || alias_of_.count(in.name) ||
            in.dtype != g_.value(n.outputs[0]).dtype)
            continue;
        var_of_[in.name] = var_of_.at(n.outputs[0]);
        written_in_place_.insert(n.outputs[0]);
    }
}

int HbmVariables::add_var(const std::string &name, neff::VarKind kind, const Value &v) {
    neff::Variable var;
    var.name = name;
    var.kind = kind;
    var.dtype = codegen::isa_dtype_of(v.dtype, v.name);
    var.holds_bool = v.dtype == DType::Bool;
    var.shape = v.shape;
    if (kind == neff::VarKind::Weight && !without_weight_bytes_) {
        if (v.constant->conversion_pending()) { // converted as the NEFF is written
            std::shared_ptr<const HostTensor> c = v.constant;
            var.make_bytes_when_read(c->numel() * dtype_size(c->dtype()),
                                     [c](size_t offset, size_t size, uint8_t *dst) {
                                         c->read_bytes(offset, size, dst);
                                     });
        } else {
            var.share_bytes(v.constant->bytes(), v.constant);
        }
    }
    prog_.vars.push_back(std::move(var));
    return static_cast<int>(prog_.vars.size()) - 1;
}

int HbmVariables::add_weight(const std::string &name, const Value &v) {
    return var_of_[name] = add_var(name, neff::VarKind::Weight, v);
}

int HbmVariables::var(const std::string &value) {
    auto it = var_of_.find(value);
    if (it != var_of_.end())
        return it->second;
    if (auto t = transposed_into_.find(value); t != transposed_into_.end())
        return var_of_[value] = var(t->second.first);
    if (auto a = alias_of_.find(value); a != alias_of_.end())
        return var_of_[value] = var(a->second);
    if (auto p = in_place_.find(value); p != in_place_.end())
        return var_of_[value] = var(p->second.concat_output);
    const Value &v = g_.value(value);
    return var_of_[value] =
               add_var(value, v.is_constant() ? neff::VarKind::Weight : neff::VarKind::Scratch, v);
}

int HbmVariables::existing_var(const std::string &value) const {
    if (auto it = var_of_.find(value); it != var_of_.end())
        return it->second;
    if (auto t = transposed_into_.find(value); t != transposed_into_.end())
        return existing_var(t->second.first);
    if (auto a = alias_of_.find(value); a != alias_of_.end())
        return existing_var(a->second);
    if (auto p = in_place_.find(value); p != in_place_.end())
        return existing_var(p->second.concat_output);
    return -1;
}

codegen::HbmBinding HbmVariables::binding(const std::string &value) {
    int v = var(value);
    int64_t offset = offset_in_var(value);
    const neff::Variable &var = prog_.vars.at(static_cast<size_t>(v));
    if (offset == 0 && !in_place_.count(value))
        return {v, var.dtype, var.size_bytes()};
    return {v, var.dtype, shape_numel(g_.value(value).shape) * neff::dtype_size(var.dtype), offset};
}

bool HbmVariables::computed_in_place(std::string value) const {
    for (auto a = alias_of_.find(value); a != alias_of_.end(); a = alias_of_.find(value))
        value = a->second;
    return in_place_.count(value) != 0;
}

int64_t HbmVariables::offset_in_var(const std::string &value) const {
    if (auto p = in_place_.find(value); p != in_place_.end())
        return p->second.offset + offset_in_var(p->second.concat_output);
    if (auto t = transposed_into_.find(value); t != transposed_into_.end())
        return offset_in_var(t->second.first);
    if (auto a = alias_of_.find(value); a != alias_of_.end())
        return offset_in_var(a->second);
    return 0;
}

const std::vector<int64_t> *HbmVariables::transposed_perm(const std::string &value) const {
    auto t = transposed_into_.find(value);
    return t == transposed_into_.end() ? nullptr : &t->second.second;
}

} // namespace nhc
