#include "frontend/InferShapes.h"

#include "support/Error.h"

#include <mutex>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

namespace nhc {

namespace {

/** A convolution's data and weight inputs: ONNX 1.12's convolution shape inference
 *  (`convPoolShapeInference`, `convTransposeShapeInference`) takes the kernel's rank from the
 *  weight and the spatial rank from the data, and indexes one by the other without comparing
 *  them; a model whose two ranks differ makes it read out of bounds (the fuzz target's finding 6,
 *  tests/fuzz/corpus/onnx_frontend). */
struct ConvOperands {
    const char *op_type;
    size_t data, weight;
};
constexpr ConvOperands kConvolutions[] = {
    {"Conv", 0, 1}, {"ConvInteger", 0, 1}, {"QLinearConv", 0, 3}, {"ConvTranspose", 0, 1}};

/** The rank of a tensor of this type if inference knows it, else -1. */
int64_t known_rank(const onnx::TypeProto *type) {
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
        return -1;
    return type->tensor_type().shape().dim_size();
}

/** The rank of the node's input `i` if inference knows it, else -1. */
int64_t input_rank(onnx::InferenceContext &ctx, size_t i) {
    return i < ctx.getNumInputs() ? known_rank(ctx.getInputType(i)) : -1;
}

/** Puts a rank check in front of every version of every convolution's inference function, so
 *  that it runs node by node with the ranks inference has reached (intermediate values too, and
 *  nodes in subgraphs). A failed check is an inference error of the node: its outputs stay
 *  unknown, and `check_convolution_ranks` names the node. */
void guard_convolution_inference() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (const onnx::OpSchema &schema :
             onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
            for (const ConvOperands &conv : kConvolutions) {
                if (schema.Name() != conv.op_type || schema.domain() != onnx::ONNX_DOMAIN)
                    continue;
                // The registry hands out const schemas; the object it owns is not const, and this
                // replaces its inference function once, before any inference runs.
                auto *registered = const_cast<onnx::OpSchema *>(onnx::OpSchemaRegistry::Schema(
                    schema.Name(), schema.SinceVersion(), schema.domain()));
                onnx::InferenceFunction original = registered->GetTypeAndShapeInferenceFunction();
                registered->TypeAndShapeInferenceFunction(
                    [conv, original](onnx::InferenceContext &ctx) {
                        int64_t data = input_rank(ctx, conv.data),
                                weight = input_rank(ctx, conv.weight);
                        if (data >= 0 && weight >= 0 && data != weight)
                            fail_shape_inference(conv.op_type, ": input rank ", data,
                                                 ", weight rank ", weight);
                        if (original)
                            original(ctx);
                    });
            }
        }
    });
}

/** NHC_EONX010 for the first convolution of the main graph whose data and weight ranks differ. */
void check_convolution_ranks(const onnx::GraphProto &graph) {
    std::map<std::string, ValueType> types = collect_value_types(graph);
    auto rank_of = [&](const onnx::NodeProto &node, size_t i) -> int64_t {
        if (int(i) >= node.input_size())
            return -1;
        auto it = types.find(node.input(int(i)));
        return it == types.end() || !it->second.has_shape ? -1 : int64_t(it->second.shape.size());
    };
    for (const onnx::NodeProto &node : graph.node()) {
        for (const ConvOperands &conv : kConvolutions) {
            if (node.op_type() != conv.op_type || !node.domain().empty())
                continue;
            int64_t data = rank_of(node, conv.data), weight = rank_of(node, conv.weight);
            if (data >= 0 && weight >= 0 && data != weight)
                user_error("NHC_EONX010", node.op_type(), " node '", node.name(), "': input '",
                           node.input(int(conv.data)), "' has rank ", data, " and weight '",
                           node.input(int(conv.weight)), "' rank ", weight,
                           "; a convolution's weight has the rank of its input (2 + its spatial "
                           "dimensions)");
        }
    }
}

} // namespace

bool ValueType::is_static() const {
    if (!is_tensor || elem_type == 0 || !has_shape)
        return false;
    for (int64_t d : shape)
        if (d < 0)
            return false;
    return true;
}

void infer_shapes(onnx::ModelProto &model) {
    guard_convolution_inference();
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
    check_convolution_ranks(model.graph());
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
