#include "frontend/InferShapes.h"

#include "frontend/EinsumEquation.h"
#include "frontend/GuardInference.h"
#include "support/Error.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <optional>

namespace nhc {

bool ValueType::is_static() const {
    if (!is_tensor || elem_type == 0 || !has_shape)
        return false;
    for (int64_t d : shape)
        if (d < 0)
            return false;
    return true;
}

namespace {

/** The output shape of an Einsum whose operands' shapes are known, or nothing (an operand's
 *  shape unknown, or an equation the host evaluator will refuse with its reason). */
std::optional<Shape> einsum_shape(const onnx::NodeProto &n,
                                  const std::map<std::string, ValueType> &types) {
    std::vector<Shape> shapes;
    for (const std::string &in : n.input()) {
        auto it = types.find(in);
        if (it == types.end() || !it->second.is_static())
            return std::nullopt;
        shapes.push_back(it->second.shape);
    }
    std::optional<EinsumEquation> eq = einsum_of(n, shapes);
    return eq ? std::optional<Shape>(einsum_output_shape(*eq)) : std::nullopt;
}

/** ONNX 1.12's Einsum inference gives the output's rank alone (onnx/defs/math/defs.cc; its own
 *  inference tests expect every dim unknown), so whatever follows an Einsum has unknown dims and
 *  cannot run on the device. Writes the shapes of the main graph's Einsum outputs that are not
 *  known into value_info; returns how many it wrote. */
int complete_einsum_shapes(onnx::GraphProto &g) {
    const std::map<std::string, ValueType> types = collect_value_types(g);
    int written = 0;
    for (const onnx::NodeProto &n : g.node()) {
        if (n.op_type() != "Einsum" || !(n.domain().empty() || n.domain() == "ai.onnx"))
            continue;
        auto out = types.find(n.output(0));
        if (out != types.end() && out->second.is_static())
            continue;
        std::optional<Shape> shape = einsum_shape(n, types);
        if (!shape)
            continue;
        onnx::ValueInfoProto *vi = nullptr;
        for (auto &v : *g.mutable_value_info())
            if (v.name() == n.output(0))
                vi = &v;
        if (!vi) {
            vi = g.add_value_info();
            vi->set_name(n.output(0));
        }
        auto *tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(types.at(n.input(0)).elem_type);
        tt->clear_shape();
        for (int64_t d : *shape)
            tt->mutable_shape()->add_dim()->set_dim_value(d);
        written++;
    }
    return written;
}

void run_onnx_inference(onnx::ModelProto &model) {
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
}

} // namespace

void infer_shapes(onnx::ModelProto &model) {
    install_inference_guards();
    run_onnx_inference(model);
    // Each round completes at least one Einsum, so their count bounds the rounds (an Einsum
    // whose operands another one computes waits for the round after it).
    for (int round = 0; round < model.graph().node_size(); round++)
        if (complete_einsum_shapes(*model.mutable_graph()) == 0)
            break;
        else
            run_onnx_inference(model);
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
