#ifndef NHC_GRAPH_FLATTENCHANNELSCALE_H
#define NHC_GRAPH_FLATTENCHANNELSCALE_H

/** \file
 * Computes an elementwise node whose runtime operand broadcasts over the trailing axes, a gate
 * x [N, C, H, W] * s [N, C, 1, 1] (squeeze-and-excitation in MobileNetV3 and EfficientNet), on
 * the views x [N*C, H*W] and s [N*C, 1], and views the result back. The elementwise schedule tiles
 * its output by rows of the second-to-last axis: in 4-D a tile holds H rows of one channel (7
 * partitions of 128 for a 7 x 7 image, three small DMAs per channel), in 2-D 128 channels. Views
 * alias HBM, so the rewrite moves no data. Only runtime broadcast operands qualify: a per-channel
 * constant (a BatchNorm's scale) stays, as it can join a convolution's epilogue.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of nodes rewritten. */
int flatten_channel_scales(Graph &g);

} // namespace nhc

#endif
