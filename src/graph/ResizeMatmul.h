#ifndef NHC_GRAPH_RESIZEMATMUL_H
#define NHC_GRAPH_RESIZEMATMUL_H

/** \file
 * Resize (opset 11-17; Upsample arrives converted to it) as matmuls on the PE. Every mode ONNX
 * defines (nearest with its four rounding modes, linear, cubic) is separable: along one axis,
 * output i is a weighted sum of a few input elements, the weights depending only on i. So the
 * resize along an axis is a contraction with a constant [out, in] interpolation matrix, and the
 * whole Resize is one contraction per axis whose size changes:
 *   last axis a:   y = MatMul(x, W_a^T)                        (a linear layer)
 *   other axis a:  y = MatMul(W_a, x viewed [outer, in_a, inner])  (W_a broadcast over outer)
 *                  (at -O2 and -O3, k outer items at once: resize_items_per_matmul)
 * Nearest-mode matrices are one-hot rows, so the fp32 contraction reproduces the input exactly;
 * the matmuls keep fp32 operands under auto-cast (Node::keep_precision). The weights follow the
 * ONNX reference implementation (onnx/backend/test/case/node/resize.py): coordinate transform,
 * neighbours of x_original clamped to the edge, exclude_outside renormalisation.
 * Nearest upsampling by integers of the last two axes alone (every output element a copy of one
 * input element) is no contraction: x viewed [outer, H, 1, W, 1] is expanded to
 * [outer, H, sh, W, sw] and viewed as the output, an Expand the default schedule computes with
 * `outer` on partitions (DefaultSchedule.cpp).
 * Assumes constant scales or sizes (NHC_EALG001 otherwise) and a static output shape;
 * tf_crop_and_resize is refused (NHC_EALG001).
 */

#include "graph/Graph.h"

namespace nhc {

/** The interpolation matrix of one axis: out x in, row-major. */
struct ResizeAxis {
    int64_t in = 0, out = 0;
    std::vector<double> weights;
    bool is_identity() const;
};

/** The per-axis matrices of Resize `n` from x's shape and its output's; `scales` or `sizes`
 *  is its constant input (either may be null). NHC_EALG001 for forms not covered. */
std::vector<ResizeAxis> resize_axes(const Node &n, const Shape &x, const Shape &out,
                                    const HostTensor *scales);

/** The outer items one contraction of a non-last axis takes at once (`pack_partitions` > 0, a
 *  move of -O2 and -O3): the largest divisor k of `outer` with k * in and k * out within
 *  `pack_partitions`, the matrix then block-diagonal, I_k (x) W_a, over [outer / k, k * in,
 *  inner] (the same bytes). Each batched item is then k items' matmul in one: dev_unet's
 *  2x upsampling of 64 channels of 8 rows takes 8 matmuls of K = 64 instead of 64 of K = 8.
 *  1 when `pack_partitions` is 0. */
int64_t resize_items_per_matmul(int64_t outer, const ResizeAxis &axis, int64_t pack_partitions);

/** Rewrites every Resize; returns how many. `pack_partitions`: resize_items_per_matmul's. */
int lower_resizes_to_matmuls(Graph &g, int64_t pack_partitions = 0);

} // namespace nhc

#endif
