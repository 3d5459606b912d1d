#ifndef NHC_FRONTEND_EINSUMEQUATION_H
#define NHC_FRONTEND_EINSUMEQUATION_H

/** \file
 * Einsum's equation read against its operands' shapes (ONNX Operators.md, Einsum): each
 * operand's dims as labels, the output's labels (explicit after "->", or implicit: the ellipsis
 * dims, then the letters used once in alphabetical order) and every label's extent. Shared by
 * the host evaluator (frontend/ConstantEvaluatorLinearAlgebra.cpp) and shape inference
 * (frontend/InferShapes.h), which ONNX 1.12 leaves at the output's rank.
 */

#include "graph/HostTensor.h"

#include <functional>
#include <map>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <vector>

namespace nhc {

/** Labels: letters are kEinsumFirstLetter + the character; the dims an ellipsis covers are
 *  -n..-1, right-aligned across operands as NumPy broadcasts them. */
constexpr int kEinsumFirstLetter = 1000;

struct EinsumEquation {
    std::vector<std::vector<int>> operands; ///< per operand, a label per dim
    std::vector<int> output;                ///< a label per output dim
    std::map<int, int64_t> extent;          ///< per label; an ellipsis dim of 1 broadcasts
};

/** `text` read against operands of `shapes`. `fail` is called (and must throw) with what is
 *  wrong: operand count, a rank the term does not suit, a character, an output label in no
 *  operand, labelled dims of different extents. */
EinsumEquation parse_einsum(const std::string &text, const std::vector<Shape> &shapes,
                            const std::function<void(const std::string &)> &fail);

/** The output's shape: its labels' extents. */
Shape einsum_output_shape(const EinsumEquation &eq);

/** The equation of Einsum node `n` read against its operands' `shapes`, or nothing when it has
 *  none or one that does not suit them (the host evaluator then says why). For the passes that
 *  look at an Einsum before it runs: shape inference and the device rewrite. */
std::optional<EinsumEquation> einsum_of(const onnx::NodeProto &n, const std::vector<Shape> &shapes);

} // namespace nhc

#endif
