#include "frontend/FreezeInputs.h"

#include "support/Error.h"
#include "support/Log.h"
#include "support/TensorFile.h"

#include <set>

namespace nhc {

FrozenInput parse_frozen_input(const std::string &spec) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
        user_error("NHC_EARG014", "--freeze-input '", spec,
                   "' is malformed; expected name=file (a .npy or .pb tensor file)");
    return {spec.substr(0, eq), spec.substr(eq + 1)};
}

namespace {

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); i++)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

/** NHC_EARG016 unless `t` has the declared element type and every fixed dim of `vi`. */
void check_matches(const onnx::ValueInfoProto &vi, const NpyTensor &t, const FrozenInput &f) {
    const auto &tt = vi.type().tensor_type();
    if (tt.elem_type() != onnx_data_type(t.dtype))
        user_error("NHC_EARG016", "--freeze-input ", f.name, ": '", f.file, "' holds ", t.dtype,
                   ", the input is declared as ",
                   onnx::TensorProto::DataType_Name(
                       static_cast<onnx::TensorProto::DataType>(tt.elem_type())));
    if (!tt.has_shape())
        return;
    bool same = tt.shape().dim_size() == static_cast<int>(t.shape.size());
    for (int i = 0; same && i < tt.shape().dim_size(); i++)
        same = !tt.shape().dim(i).has_dim_value() ||
               tt.shape().dim(i).dim_value() == t.shape[static_cast<size_t>(i)];
    if (!same)
        user_error("NHC_EARG016", "--freeze-input ", f.name, ": '", f.file, "' has shape ",
                   shape_text(t.shape), ", which the input's declared shape does not allow");
}

} // namespace

void freeze_inputs(onnx::ModelProto &model, const std::vector<FrozenInput> &frozen) {
    onnx::GraphProto &g = *model.mutable_graph();
    std::set<std::string> initializers;
    for (const auto &t : g.initializer())
        initializers.insert(t.name());
    for (const FrozenInput &f : frozen) {
        const onnx::ValueInfoProto *input = nullptr;
        std::string names;
        for (const auto &vi : g.input()) {
            if (initializers.count(vi.name()))
                continue;
            names += (names.empty() ? "'" : ", '") + vi.name() + "'";
            if (vi.name() == f.name)
                input = &vi;
        }
        if (!input)
            user_error("NHC_EARG015", "--freeze-input names '", f.name,
                       "', which is not a runtime input of the model; its inputs are ",
                       names.empty() ? "(none)" : names);
        NpyTensor t = read_tensor_file(f.file);
        // A bfloat16 input given as the uint16 bits of its numbers: ONNX's test data stores
        // bfloat16 tensors so, and NumPy has no bfloat16 type (runtime/TensorFiles.h).
        if (t.dtype == "uint16" &&
            input->type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
            t.dtype = "bfloat16";
        check_matches(*input, t, f);
        onnx::TensorProto *init = g.add_initializer();
        init->set_name(f.name);
        init->set_data_type(onnx_data_type(t.dtype));
        for (int64_t d : t.shape)
            init->add_dims(d);
        init->set_raw_data(std::string(t.data.begin(), t.data.end()));
        initializers.insert(f.name);
        log_info("input '", f.name, "' frozen to the ", shape_text(t.shape), " ", t.dtype,
                 " tensor of '", f.file, "'");
    }
}

} // namespace nhc
