#include "frontend/InferShapes.h"

#include "frontend/GuardInference.h"
#include "support/Error.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

namespace nhc {

bool ValueType::is_static() const {
    if (!is_tensor || elem_type == 0 || !has_shape)
        return false;
    for (int64_t d : shape)
        if (d < 0)
            return false;
    return true;
}

void infer_shapes(onnx::ModelProto &model) {
    install_inference_guards();
    // Node-level inference errors are not thrown (error_mode 0): ops without an inference
    // function simply leave their outputs unknown, which the importer reports by tensor name.
    // Conflicts between declared and inferred types are still thrown.
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/0,
                                        /*data_prop=*/true);
    try {
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception &e) {
        user_error("NHC_EONX004", "ONNX shape inference failed on model '", model.graph().name(),
                   "': ", e.what());
    }
    check_guarded_nodes(model.graph());
}

static ValueType type_of(const onnx::TypeProto &t) {
    ValueType v;
    if (!t.has_tensor_type()) {
        v.is_tensor = t.value_case() == onnx::TypeProto::VALUE_NOT_SET;
        return v;
    }
    const auto &tt = t.tensor_type();
    v.elem_type = tt.elem_type();
    v.has_shape = tt.has_shape();
    for (const auto &d : tt.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() >= 0) {
            v.shape.push_back(d.dim_value());
        } else {
            if (v.symbol_of_first_unknown.empty() && d.has_dim_param())
                v.symbol_of_first_unknown = d.dim_param();
            v.shape.push_back(-1);
        }
    }
    return v;
}

std::map<std::string, ValueType> collect_value_types(const onnx::GraphProto &g) {
    std::map<std::string, ValueType> types;
    for (const auto &vi : g.value_info())
        types[vi.name()] = type_of(vi.type());
    for (const auto &vi : g.output())
        types[vi.name()] = type_of(vi.type());
    for (const auto &vi : g.input())
        types[vi.name()] = type_of(vi.type());
    for (const auto &t : g.initializer()) {
        ValueType v;
        v.elem_type = t.data_type();
        v.has_shape = true;
        v.shape.assign(t.dims().begin(), t.dims().end());
        types[t.name()] = v;
    }
    return types;
}

} // namespace nhc
