#ifndef NHC_GRAPH_CAUSALMASK_H
#define NHC_GRAPH_CAUSALMASK_H

/** \file
 * A decoder's causal mask as PyTorch exports it (GPT-2's `torch.where(bias[:, :, :s, :s], w,
 * finfo.min)`): Where(cond, x, fill) whose cond is a constant that keeps, in every row of its
 * last two axes, exactly the columns j <= i + k for one diagonal k (and the same pattern along
 * every leading axis), and whose fill is a scalar constant. It becomes one TriangularWhere
 * (domain "nhc") of x alone, attributes `diagonal` (k) and `fill`, whose algorithm compares the
 * indices instead of reading the mask (algorithms/Elementwise.cpp): the code generator then
 * selects one affine_select on GpSimd per tile (neuroncore.md L313: "causal masks"), where the
 * Where loaded the mask by DMA, converted it and selected on DVE. x must have the Where's shape
 * and be float32; a mask of all-kept or all-masked rows is left alone.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of Where nodes replaced. */
int lower_triangular_masks(Graph &g);

/** Whether `n` is a TriangularWhere: elementwise, so it joins a matmul's epilogue as a Where
 *  does (driver/FormGroups), but its index test needs its rows and columns as they are, so the
 *  passes that reshape elementwise nodes leave it alone. */
inline bool is_triangular_where(const Node &n) {
    return n.op_type == "TriangularWhere" && n.domain == "nhc";
}

/** Whether the masked terms of a TriangularWhere are exactly 0 in a softmax of its output with
 *  or without the scale s folded in: every row keeps a column (diagonal >= 0), so the row's
 *  maximum M is at least a kept score, and the fill is so far below it that exp(fill - s*M) and
 *  exp(s*(fill - M)) both underflow to 0 (fp32's exp is 0 below -104) for any kept score above
 *  fill / 2: fill * min(s, 1) / 2 at most -128 (GPT-2's finfo.min with s = 1/8: -2.1e37;
 *  the -1e4 of older exports: -625), or a fill of -inf. A row whose every kept score lies below
 *  fill / 2 is outside this (its softmax then weighs the masked columns too). */
bool masked_terms_vanish(const Node &triangular_where, double s);

} // namespace nhc

#endif
