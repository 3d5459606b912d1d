#include "frontend/GuardInference.h"

#include "frontend/InferShapes.h"
#include "support/Error.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <onnx/defs/schema.h>
#include <string>

namespace nhc {

namespace {

/** Two operands whose ranks an inference function indexes by: the convolutions' inference
 *  (`convPoolShapeInference`, `convTransposeShapeInference`) takes the kernel's rank from the
 *  weight and the spatial rank from the data (finding 6, an out-of-bounds read); Gemm-6's takes
 *  dimension 1 of B whatever its rank (finding 9, SEGV). */
struct RankRule {
    const char *op_type;
    size_t first, second; ///< the operands
    int64_t rank;         ///< the rank each must have, or -1: the same rank as each other
    const char *expected; ///< what the refusal says the operands are
};
constexpr const char *kConvolutionRanks =
    "a convolution's weight has the rank of its input (2 + its spatial dimensions)";
constexpr RankRule kRankRules[] = {{"Conv", 0, 1, -1, kConvolutionRanks},
                                   {"ConvInteger", 0, 1, -1, kConvolutionRanks},
                                   {"QLinearConv", 0, 3, -1, kConvolutionRanks},
                                   {"ConvTranspose", 0, 1, -1, kConvolutionRanks},
                                   {"Gemm", 0, 1, 2, "Gemm's A and B are matrices, of rank 2"}};

/** Operators whose window attributes inference divides by: a stride of 0 in a MaxPool was a
 *  division by zero in `convPoolShapeInference` (finding 10, SIGFPE). */
constexpr const char *kWindowOperators[] = {"AveragePool",   "Conv",       "ConvInteger",
                                            "ConvTranspose", "LpPool",     "MaxPool",
                                            "MaxUnpool",     "QLinearConv"};
constexpr const char *kWindowAttributes[] = {"dilations", "kernel_shape", "strides"};

/** What the guards ask of a node: its operands' ranks as inference knows them (-1 if not) and
 *  names for them, and its attributes. */
struct NodeView {
    std::function<int64_t(size_t)> input_rank;
    std::function<std::string(size_t)> input_name;
    std::function<const onnx::AttributeProto *(const std::string &)> attribute;
};

bool guarded(const std::string &op_type) {
    auto is = [&](const char *op) { return op_type == op; };
    return std::any_of(std::begin(kRankRules), std::end(kRankRules),
                       [&](const RankRule &r) { return is(r.op_type); }) ||
           std::any_of(std::begin(kWindowOperators), std::end(kWindowOperators), is);
}

/** Why a node of `op_type` breaks a guard, or "" when it breaks none. */
std::string broken_guard(const std::string &op_type, const NodeView &node) {
    for (const RankRule &rule : kRankRules) {
        if (op_type != rule.op_type)
            continue;
        int64_t first = node.input_rank(rule.first), second = node.input_rank(rule.second);
        bool broken = rule.rank < 0 ? first >= 0 && second >= 0 && first != second
                                    : (first >= 0 && first != rule.rank) ||
                                          (second >= 0 && second != rule.rank);
        if (broken)
            return node.input_name(rule.first) + " has rank " + std::to_string(first) + " and " +
                   node.input_name(rule.second) + " rank " + std::to_string(second) + "; " +
                   rule.expected;
    }
    if (std::find(std::begin(kWindowOperators), std::end(kWindowOperators), op_type) ==
        std::end(kWindowOperators))
        return "";
    for (const char *name : kWindowAttributes)
        if (const onnx::AttributeProto *a = node.attribute(name))
            for (int64_t v : a->ints())
                if (v < 1)
                    return std::string("attribute '") + name + "' holds " + std::to_string(v) +
                           "; strides, dilations and kernel sizes are at least 1";
    return "";
}

/** The rank of a tensor of this type if inference knows it, else -1. */
int64_t known_rank(const onnx::TypeProto *type) {
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
        return -1;
    return type->tensor_type().shape().dim_size();
}

} // namespace

void install_inference_guards() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (const onnx::OpSchema &schema :
             onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
            if (schema.domain() != onnx::ONNX_DOMAIN || !guarded(schema.Name()))
                continue;
            // The registry hands out const schemas; the object it owns is not const, and this
            // replaces its inference function once, before any inference runs.
            auto *registered = const_cast<onnx::OpSchema *>(onnx::OpSchemaRegistry::Schema(
                schema.Name(), schema.SinceVersion(), schema.domain()));
            onnx::InferenceFunction original = registered->GetTypeAndShapeInferenceFunction();
            std::string op_type = schema.Name();
            registered->TypeAndShapeInferenceFunction([op_type,
                                                       original](onnx::InferenceContext &ctx) {
                NodeView node{[&](size_t i) {
                                  return i < ctx.getNumInputs() ? known_rank(ctx.getInputType(i))
                                                                : -1;
                              },
                              [](size_t i) { return "input " + std::to_string(i); },
                              [&](const std::string &name) { return ctx.getAttribute(name); }};
                if (std::string why = broken_guard(op_type, node); !why.empty())
                    fail_shape_inference(op_type, ": ", why);
                if (original)
                    original(ctx);
            });
        }
    });
}

void check_guarded_nodes(const onnx::GraphProto &graph) {
    auto is_guarded = [](const onnx::NodeProto &n) {
        return n.domain().empty() && guarded(n.op_type());
    };
    if (std::none_of(graph.node().begin(), graph.node().end(), is_guarded))
        return; // no value types to collect: most graphs of each inference round
    std::map<std::string, ValueType> types = collect_value_types(graph);
    for (const onnx::NodeProto &n : graph.node()) {
        if (!is_guarded(n))
            continue;
        NodeView node{[&](size_t i) -> int64_t {
                          if (int(i) >= n.input_size())
                              return -1;
                          auto it = types.find(n.input(int(i)));
                          return it == types.end() || !it->second.has_shape
                                     ? -1
                                     : int64_t(it->second.shape.size());
                      },
                      [&](size_t i) { return "input '" + n.input(int(i)) + "'"; },
                      [&](const std::string &name) -> const onnx::AttributeProto * {
                          for (const auto &a : n.attribute())
                              if (a.name() == name)
                                  return &a;
                          return nullptr;
                      }};
        if (std::string why = broken_guard(n.op_type(), node); !why.empty())
            user_error("NHC_EONX010", n.op_type(), " node '", n.name(), "': ", why);
    }
}

} // namespace nhc
