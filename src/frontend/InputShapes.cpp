#include "frontend/InputShapes.h"

#include "support/Error.h"
#include "support/Log.h"

#include <algorithm>
#include <map>
#include <set>

namespace nhc {

InputShapeOverride parse_input_shape(const std::string &spec) {
    size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0)
        user_error("NHC_EARG011", "--input-shape '", spec,
                   "' is malformed; expected name=d0,d1,... (for example input_ids=1,128)");
    InputShapeOverride o{spec.substr(0, eq), {}};
    std::string dims = spec.substr(eq + 1);
    size_t pos = 0;
    while (pos <= dims.size()) {
        size_t comma = dims.find(',', pos);
        std::string tok =
            dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        bool digits = !tok.empty() && tok.size() <= 12 &&
                      tok.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || std::stoll(tok) <= 0)
            user_error("NHC_EARG011", "--input-shape '", spec, "' has dimension '", tok,
                       "'; expected a positive integer");
        o.shape.push_back(std::stoll(tok));
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return o;
}

namespace {

std::vector<std::string> runtime_input_names(const onnx::GraphProto &g) {
    std::set<std::string> inits;
    for (const auto &t : g.initializer())
        inits.insert(t.name());
    std::vector<std::string> names;
    for (const auto &vi : g.input())
        if (!inits.count(vi.name()))
            names.push_back(vi.name());
    return names;
}

std::string join(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v)
        s += (s.empty() ? "'" : ", '") + x + "'";
    return s.empty() ? "(none)" : s;
}

void override_one(onnx::ValueInfoProto &vi, const Shape &shape,
                  std::map<std::string, int64_t> &bindings) {
    auto *tensor_type = vi.mutable_type()->mutable_tensor_type();
    if (tensor_type->has_shape()) {
        const auto &dims = tensor_type->shape().dim();
        if (dims.size() != static_cast<int>(shape.size()))
            user_error("NHC_EARG013", "--input-shape gives input '", vi.name(), "' rank ",
                       shape.size(), " but the model declares rank ", dims.size());
        for (int i = 0; i < dims.size(); i++) {
            if (dims[i].has_dim_value() && dims[i].dim_value() != shape[i])
                user_error("NHC_EARG013", "--input-shape gives input '", vi.name(), "' dimension ",
                           i, " = ", shape[i], " but the model fixes it to ", dims[i].dim_value());
            if (dims[i].has_dim_param())
                bindings[dims[i].dim_param()] = shape[i];
        }
    }
    auto *s = tensor_type->mutable_shape();
    s->clear_dim();
    for (int64_t d : shape)
        s->add_dim()->set_dim_value(d);
}

// Replaces bound symbols in a value's declared shape.
void bind_symbols(onnx::ValueInfoProto &vi, const std::map<std::string, int64_t> &bindings) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
        return;
    for (auto &dim : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
        if (!dim.has_dim_param())
            continue;
        auto it = bindings.find(dim.dim_param());
        if (it != bindings.end())
            dim.set_dim_value(it->second);
    }
}

} // namespace

void apply_input_shapes(onnx::ModelProto &model, const std::vector<InputShapeOverride> &overrides) {
    onnx::GraphProto &g = *model.mutable_graph();
    std::vector<std::string> inputs = runtime_input_names(g);
    // Right-most wins: a repeated --input-shape for the same input replaces the earlier one.
    std::vector<InputShapeOverride> last;
    for (const InputShapeOverride &o : overrides) {
        auto same = [&](const InputShapeOverride &x) { return x.name == o.name; };
        last.erase(std::remove_if(last.begin(), last.end(), same), last.end());
        last.push_back(o);
    }
    std::map<std::string, int64_t> bindings;
    for (const InputShapeOverride &o : last) {
        onnx::ValueInfoProto *target = nullptr;
        for (auto &vi : *g.mutable_input())
            if (vi.name() == o.name &&
                std::find(inputs.begin(), inputs.end(), o.name) != inputs.end())
                target = &vi;
        if (!target)
            user_error("NHC_EARG012", "--input-shape names '", o.name,
                       "', which is not an input of the model; its inputs are ", join(inputs));
        if (!target->type().has_tensor_type())
            user_error("NHC_EARG012", "--input-shape names '", o.name,
                       "', which is not a tensor input");
        override_one(*target, o.shape, bindings);
        log_info("input '", o.name, "' shape set to ", shape_str(o.shape));
    }
    for (auto &vi : *g.mutable_input())
        bind_symbols(vi, bindings);
    for (auto &vi : *g.mutable_output())
        bind_symbols(vi, bindings);
}

} // namespace nhc
