#ifndef NHC_GRAPH_WEIGHTLAYOUT_H
#define NHC_GRAPH_WEIGHTLAYOUT_H

/** \file
 * Chooses the HBM layout of constant matmul operands at compile time. The matmul reads both
 * operands with the contraction K on partitions, so a weight stored with K outermost is loaded by
 * DMA in long contiguous rows, while one stored the other way needs one descriptor row per element
 * (4 bytes at a time, ../shared/reference/neuroncore.md §2.3: rows under 256 B are
 * overhead-bound). For Gemm, a constant B with transB = 1 is stored transposed (transB becomes 0),
 * and a constant A with transA = 0 likewise (transA becomes 1). The node computes the same thing.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of operands re-laid out. */
int layout_matmul_weights(Graph &g);

} // namespace nhc

#endif
