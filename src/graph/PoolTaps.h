#ifndef NHC_GRAPH_POOLTAPS_H
#define NHC_GRAPH_POOLTAPS_H

/** \file
 * MaxPool and AveragePool (1-D and 2-D) as PoolTaps (domain "nhc"), the pooling counterpart of
 * graph/ConvIm2Col's ConvTaps: x [N, C, H, W] (1-D: H = 1), for AveragePool a constant
 * [Ho, Wo] of 1 / (the taps each output averages: inside the input, or inside the explicitly
 * padded input with count_include_pad); attributes mode ("max" or "avg"), kernel, strides,
 * dilations, pads_begin, output_spatial (2 each). Its algorithm (algorithms/Pool.cpp) stages the
 * image padded with the reduction's identity (-inf or 0) on chip, channels on partitions, and
 * combines one shifted, strided window per kernel tap into the output tile (a max or an add per
 * tap), so the input crosses HBM once. The output shape (ceil_mode included) is the one shape
 * inference gave. NHC_EALG001 for forms not covered: 3-D pooling, MaxPool's Indices output.
 */

#include "graph/ConvIm2Col.h"

namespace nhc {

/** Rewrites every MaxPool and AveragePool; returns how many. */
int lower_pools(Graph &g, const ConvLimits &limits);

} // namespace nhc

#endif
