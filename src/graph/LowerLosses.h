#ifndef NHC_GRAPH_LOWERLOSSES_H
#define NHC_GRAPH_LOWERLOSSES_H

/** \file
 * Operators that pick elements by runtime indices along one axis, decomposed (as ONNX function
 * bodies are) into operators the compiler has: a one-hot mask built by comparing the indices with
 * a constant iota along the axis, multiplied in and summed over the axis. Exact in fp32 (each sum
 * holds one nonzero term) for finite data; no indirect DMA is needed.
 *  - Gather from a 1-D table with runtime indices (a class weight per target);
 *  - GatherElements(data, indices, axis): indices of data's rank and, off the axis, data's dims;
 *    negative indices count from the end.
 *  - NegativeLogLikelihoodLoss(input [N, C, D...], target [N, D...], weight [C]?): reduction
 *    none, sum or mean (the sum over the weights of the picked, not ignored, classes);
 *    ignore_index masks its targets out.
 *  - Hardmax: the one-hot of ArgMax along the axis (the first maximum);
 *  - ScatterND with indices [..., 1] (slices along axis 0), reduction none or add, float32: the
 *    one-hot of the indices times the updates (a MatMul kept fp32), taken where a row was hit
 *    or added;
 *  - SoftmaxCrossEntropyLoss: LogSoftmax over the classes (its optional log_prob output), then the
 *    loss above.
 * NHC_EALG001 for forms not covered.
 */

#include "graph/Graph.h"

namespace nhc {

/** Decomposes every 1-D-table Gather, GatherElements, NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss, Hardmax and ScatterND; returns how many. */
int decompose_index_picks(Graph &g);

} // namespace nhc

#endif
