#ifndef NHC_GRAPH_CONVIM2COL_H
#define NHC_GRAPH_CONVIM2COL_H

/** \file
 * Convolutions as matmuls on the PE: Conv(x [N, Ci, S...], w [Co, Ci, K...], b) becomes
 *   cols = Im2Col(x)              [Ci * prod(K), N * prod(O)]  (domain "nhc": one copy per tap)
 *   y    = MatMul(w viewed [Co, Ci * prod(K)], cols)   [Co, N * prod(O)]
 *   y    = Add(y, b viewed [Co, 1])                     (when there is a bias)
 * and the result viewed as [Co, N, O...], then transposed to [N, Co, O...] (a view when N = 1).
 * The contraction runs over channels and kernel taps with K on partitions; im2col's rows are the
 * output positions of one tap, so the copy moves rows of the input (the code generator fills the
 * padding with zeros). A grouped (or depthwise) convolution is one convolution per group on
 * Slices of its input, weights and bias, concatenated; auto_pad SAME/VALID resolve to pads.
 */

#include "graph/Graph.h"

namespace nhc {

/** A convolution's geometry from its attributes and shapes (per spatial axis). */
struct ConvGeometry {
    std::vector<int64_t> kernel, stride, dilation, pad_begin, out;
};

/** The geometry of Conv `node`; NHC_EALG001 naming the node for forms not supported yet. */
ConvGeometry conv_geometry(const Node &node, const Shape &x, const Shape &w);

/** Rewrites every Conv; returns how many. */
int lower_convs_to_matmuls(Graph &g);

} // namespace nhc

#endif
