#ifndef NHC_FRONTEND_DECOMPOSEEINSUM_H
#define NHC_FRONTEND_DECOMPOSEEINSUM_H

/** \file
 * Einsum as operators the device runs (issue 18, a device lowering of a host operator): torch
 * exports `torch.einsum` as an ONNX Einsum, which attention blocks written with it (q·kᵀ, the
 * weighted sum of v) and linear layers use. A contraction of float operands whose shapes are
 * known becomes, per product of two operands, ReduceSum over the labels only one operand has and
 * nothing else needs, Transposes and Reshapes that gather each operand's dims as
 * [batch..., M, K] and [batch..., K, N], one MatMul (whose batch dims broadcast as the ellipsis
 * does) and a Reshape; three or more operands are multiplied two at a time, in the order with
 * the fewest multiply-adds (every order tried up to six operands), each product keeping the
 * labels the output or another operand has; a Transpose puts the last into the output's order.
 * Numerically a sum of products over the same labels, as the host evaluator computes it, summed in
 * another order. Left to the host evaluator: a label repeated within an operand (a diagonal or a
 * trace), integer operands, a summed label of extent 1 in one operand and not in the other (a
 * broadcast inside the sum), unknown shapes.
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
