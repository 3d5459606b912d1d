#ifndef NHC_FRONTEND_DECOMPOSEEINSUM_H
#define NHC_FRONTEND_DECOMPOSEEINSUM_H

/** \file
 * Einsum as operators the device runs (issue 18, a device lowering of a host operator): torch
 * exports `torch.einsum` as an ONNX Einsum, which attention blocks written with it (q·kᵀ, the
 * weighted sum of v) and linear layers use. A contraction of one or two float operands whose
 * shapes are known becomes ReduceSum over the labels only one operand has and the output lacks,
 * Transposes and Reshapes that gather each operand's dims as [batch..., M, K] and [batch..., K, N],
 * one MatMul (whose batch dims broadcast as the ellipsis does), and a Reshape and Transpose into
 * the output's order: numerically a sum of products over the same labels, as the host evaluator
 * computes it. Left to the host evaluator: a label repeated within an operand (a diagonal or a
 * trace), three or more operands, integer operands, a summed label of extent 1 in one operand and
 * not in the other (a broadcast inside the sum), unknown shapes.
 *
 * Runs on the prepared model (shapes inferred: frontend/InferShapes.h), main graph only; its
 * Constant operands (shapes, axes) fold in the next inference round.
 */

#include <onnx/onnx_pb.h>

namespace nhc {

/** Rewrites the Einsum nodes of `model`'s main graph that it can; returns how many. */
int decompose_einsums(onnx::ModelProto &model);

} // namespace nhc

#endif
