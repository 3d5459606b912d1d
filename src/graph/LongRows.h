#ifndef NHC_GRAPH_LONGROWS_H
#define NHC_GRAPH_LONGROWS_H

/** \file
 * Normalisations over rows too long to be computed whole in one tile (issue 15: a Softmax over
 * GPT-2's 50,257-word vocabulary, a LayerNorm over 16,384 features). Softmax, LogSoftmax and
 * LayerNormalization whose normalised row exceeds `max_row` elements are decomposed into row
 * reductions and elementwise nodes over the [rows, W] view of x, which the default schedules
 * compute in chunks of columns (schedules/RowChunks.cpp):
 *   Softmax:     m = ReduceMax(x)    d = x - m    l = ReduceLogSumExp(d)    y = Exp(x - (m + l))
 *   LogSoftmax:  m, d and l as above                                        y = d - l
 *   LayerNorm:   mean = ReduceMean(x)    d = x - mean    v = ReduceSumSquare(d) / W
 *                y = d * (1 / sqrt(v + eps)) * gamma + beta
 * The fused forms need each row whole (exp(x - m) is read by its sum and by the output); these
 * read x again instead (Softmax: x three times and d twice). Softmax's exp(x - m) / s is
 * computed as exp(x - (m + log s)), which differs from it by the rounding of m + log s in fp32.
 * When the rows fill less than half the partitions (one token's logits), Softmax and LogSoftmax
 * work on the view [R * k, W / k] (k the largest divisor of W with R * k within the partitions):
 * max and log-sum-exp per piece, then over each row's k pieces, broadcast back by an Expand; and
 * so does a Reduce* over the last axis of such rows (ReduceSum over [8, 262,144] as 128 partial
 * sums, then 8 sums of 16; ReduceL2 as sums of squares, then Sqrt).
 * Assumes graph/ReduceLastAxis ran (the normalised axes are the last ones) and float32 values;
 * a LayerNormalization with its Mean or InvStdDev outputs, or with a gamma or beta that
 * broadcasts within the row, is left to the whole-row form.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of nodes decomposed. */
int decompose_long_rows(Graph &g, int64_t max_row, int64_t partitions);

} // namespace nhc

#endif
