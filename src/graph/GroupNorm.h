#ifndef NHC_GRAPH_GROUPNORM_H
#define NHC_GRAPH_GROUPNORM_H

/** \file
 * Group normalisation, as PyTorch exports it (Reshape x [N, C, S...] to [N, G, -1] ->
 * InstanceNormalization -> Reshape back -> Mul gamma[C] -> Add beta[C]), recognised as one, and
 * InstanceNormalization on its own (G = C), rewritten so that its rows fill the partitions.
 * Normalising each of the N * G groups as one row (the LayerNorm form) leaves most partitions
 * idle and puts long rows in SBUF; here x is viewed as R = N * C * k rows of W = prod(S) / k
 * elements (each row in one channel, k chosen so that R fits the partitions), and the per-group
 * sums are combined across the rows of a group by a matmul with a constant block-diagonal matrix
 * B (B[i, j] = 1 / (elements per group) when rows i and j are in the same group):
 *   mean = B . ReduceSum(x_rows)        d = x_rows - mean
 *   var  = B . ReduceSumSquare(d)       y = d * (rsqrt(var + eps) * scale_row) + bias_row
 * with scale_row and bias_row folding the InstanceNormalization's scale and bias with gamma and
 * beta per row. The statistics matmuls keep fp32 operands (Node::keep_precision).
 * When N * C exceeds the partitions, or rows that fill them are still wider than `max_width`
 * elements, each channel is cut into as few rows as keep a row within `max_width` elements (rows
 * beyond the partitions are tiled like any other), and B, which would grow with the square of the
 * rows, gives way to the row sums viewed [N * G, rows per group] and summed again per group,
 * broadcast back over the group's rows. Assumes constant scale, bias, gamma and beta and float32;
 * other forms are left to graph/ReduceLastAxis (InstanceNormalization as a LayerNorm of [N * C,
 * S]).
 *
 * With `one_group_width` (a move of --model-type unet-inference), a normalisation is instead one
 * node, nhc.GroupNormRows(x viewed [tiles, T, W], B [T, T], scale_row, bias_row) -> y [tiles, T,
 * W], where each tile of T rows holds whole groups (rows of at most `one_group_width` elements):
 * its code generator group computes the statistics of a tile on chip, B on the PE, and reads x
 * once. Normalisations whose groups cannot be tiled so take the form above.
 */

#include "graph/Graph.h"

namespace nhc {

/** Whether `n` is the one-group form's node, nhc.GroupNormRows. */
inline bool is_group_norm_rows(const Node &n) {
    return n.domain == "nhc" && n.op_type == "GroupNormRows";
}

/** Rewrites the group and instance normalisations it covers; returns how many. */
int lower_group_norms(Graph &g, int64_t partitions, int64_t max_width, int64_t one_group_width = 0);

} // namespace nhc

#endif
