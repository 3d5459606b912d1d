#ifndef NHC_FRONTEND_CONSTANTEVALUATOR_H
#define NHC_FRONTEND_CONSTANTEVALUATOR_H

/** \file
 * Host evaluation of the ONNX operators that PyTorch exports leave in constant subgraphs (shape
 * arithmetic, masks, scalar powers): Constant, Shape, Size, Gather, Slice, Concat, Unsqueeze,
 * Squeeze, Reshape, Flatten, Transpose, Identity, ConstantOfShape, Cast, Range, Expand, Where,
 * Add/Sub/Mul/Div/Pow/Mod/Min/Max, Equal/Less/Greater/And/Or/Not,
 * Neg/Abs/Sqrt/Reciprocal/Floor/Ceil and the attribute-free math functions (Exp, Log, Tanh,
 * Sigmoid, Relu, Erf, the trigonometric and hyperbolic ones), the Reduce* family,
 * Softmax/LogSoftmax, ArgMax/ArgMin, TopK/NonMaxSuppression/CumSum, RNN/GRU/LSTM,
 * NonZero/Unique, and the host-only operators of the ConstantEvaluator*.cpp files; the same
 * evaluators run a host segment (runtime/HostSegment.h). Float arithmetic is done in
 * double and rounded once into the output dtype (exact for +,-,*,/,sqrt of float32 operands). Used
 * by FoldConstants; knows nothing about graphs.
 */

#include "graph/HostTensor.h"

#include <functional>
#include <onnx/onnx_pb.h>
#include <optional>
#include <vector>

namespace nhc {

/** True if `op_type` (default domain) has a host evaluator (If, Loop and Scan through
 *  evaluate_node_in_scope only). */
bool can_evaluate(const std::string &op_type);

/** Evaluates `node` on constant inputs (nullptr for an omitted optional input). Returns nullopt
 *  when the node cannot be folded (an attribute form not handled, or an output larger than the
 *  folding limit); throws NHC_EFLD001 when the inputs are invalid for the operator. */
std::optional<std::vector<HostTensor>> evaluate_node(const onnx::NodeProto &node,
                                                     const std::vector<const HostTensor *> &inputs,
                                                     int opset);

/** What the values around a node hold, by name (nullptr for a name not held): what the subgraphs
 *  of If, Loop and Scan read from outside them. */
using ValueScope = std::function<const HostTensor *(const std::string &)>;

/** evaluate_node for a node whose subgraphs may read `outer`: If, Loop and Scan run here
 * (evaluate_node has no scope and leaves them unfolded), any other node as evaluate_node does. A
 * Loop past kMaxFoldedElements iterations, or a subgraph reading a name nothing holds, is
 * NHC_EFLD001. */
std::optional<std::vector<HostTensor>>
evaluate_node_in_scope(const onnx::NodeProto &node, const std::vector<const HostTensor *> &inputs,
                       int opset, const ValueScope &outer);

/** Shape and Size: they need only their input's shape, which the folder may know from shape
 *  inference when the input itself is not constant. */
HostTensor evaluate_shape_query(const onnx::NodeProto &node, const Shape &input_shape);

/** Outputs larger than this many elements are not folded (they stay as nodes): folding must not
 *  turn a small model file into gigabytes of constants. */
constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

/** MatMul and Gemm over more multiply-adds than this are not evaluated (a constant one stays a
 *  node for the device; a float64 one in a host segment is NHC_ERT024): at about a second of
 *  one host core (a choice of this evaluator, which reads each operand into doubles once and
 *  sums in row order), folding must not stall a compile. */
constexpr int64_t kMaxHostMultiplyAdds = int64_t(1) << 30;

} // namespace nhc

#endif
