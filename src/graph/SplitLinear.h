#ifndef NHC_GRAPH_SPLITLINEAR_H
#define NHC_GRAPH_SPLITLINEAR_H

/** \file
 * Exporters often compute attention's Q, K and V as one linear layer over a weight of 3·D
 * columns and then cut its output along the last axis. torchvision's nn.MultiheadAttention cuts
 * with three Slices, and each Slice is a group of its own that copies its piece through HBM by
 * DMA (ViT-B/16: 36 such copies, 1.4 ms of its 8.3 ms critical path at -O2), which residency
 * does not keep on chip. This pass unfuses such a layer instead: each piece becomes a MatMul (or
 * Gemm) of the same input with the weight's columns of that piece (and its bias), computed
 * straight into the piece's value, so no copy remains; the input is read once per piece.
 *
 * Matched: a MatMul of a constant 2-D weight [K, N] (optionally followed by an Add of a constant
 * bias [N], its only reader), or a Gemm (alpha = beta = 1, no transA, constant B and C [N]),
 * optionally viewed by a Reshape that keeps the last axis, whose result is read only by Slices of
 * the last axis (constant starts and ends, step 1) and is not a graph output. Columns no Slice
 * reads are not computed. Runs before graph/LinearLayers, which makes each piece a 2-D Gemm.
 *
 * A Split of the last axis (GPT-2's c_attn, SD's attention) is matched only with `cut_splits`,
 * a move of --model-type unet-inference: unfused, GPT-2 at -O2 gained 3% (fp32) and 0.5% (bf16),
 * but dev_gpt_block lost 23%, its three piece groups each paying the transfers' fixed latency on
 * the chain, while sd_unet_64 gains (bf16 1,401.3 -> 1,380.8 us). Which to do is a measured
 * decision this rule does not make for every model. A move of -O2 and -O3 (driver/GraphPasses).
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of linear layers split into their pieces; with `cut_splits`, layers cut
 *  by a Split too. */
int split_sliced_linear_layers(Graph &g, bool cut_splits = false);

} // namespace nhc

#endif
