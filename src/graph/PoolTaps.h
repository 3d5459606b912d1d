#ifndef NHC_GRAPH_POOLTAPS_H
#define NHC_GRAPH_POOLTAPS_H

/** \file
 * MaxPool and AveragePool (1-D and 2-D), and depthwise convolutions, as PoolTaps (domain "nhc"),
 * the per-channel counterpart of graph/ConvIm2Col's ConvTaps: x [N, C, H, W] (1-D: H = 1), for
 * AveragePool a constant [Ho, Wo] of 1 / (the taps each output averages: inside the input, or
 * inside the explicitly padded input with count_include_pad), for a depthwise convolution the
 * weights [C, KH, KW] and the bias [C] if any; attributes mode ("max", "avg" or "conv": a
 * multiply-add of a weight per channel and tap), kernel, strides,
 * dilations, pads_begin, output_spatial (2 each). Its algorithm (algorithms/Pool.cpp) stages the
 * image padded with the reduction's identity (-inf or 0) on chip, channels on partitions, and
 * combines one shifted, strided window per kernel tap into the output tile (a max or an add per
 * tap), so the input crosses HBM once. The output shape (ceil_mode included) is the one shape
 * inference gave. NHC_EALG001 for forms not covered: 3-D pooling, MaxPool's Indices output.
 */

#include "graph/ConvIm2Col.h"

namespace nhc {

/** A depthwise convolution (group = input channels = output channels, 1-D or 2-D) as PoolTaps
 *  of mode "conv": x, the weights viewed [C, KH, KW], the bias if any; false, having changed
 *  nothing, if `n` is not one or the padded rows one output row reads do not fit. */
bool lower_depthwise_conv(Graph &g, const Node &n, const ConvGeometry &geo,
                          const ConvLimits &limits, std::vector<Node> &out);

/** Rewrites every MaxPool and AveragePool; returns how many. */
int lower_pools(Graph &g, const ConvLimits &limits);

} // namespace nhc

#endif
