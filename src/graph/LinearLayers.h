#ifndef NHC_GRAPH_LINEARLAYERS_H
#define NHC_GRAPH_LINEARLAYERS_H

/** \file
 * Canonicalises PyTorch's linear layers into 2-D Gemms. torch exports `nn.Linear` on a [B, S, K]
 * input as MatMul(x, W[K, N]) followed by Add(bias, y); as such it is a batched matmul whose batch
 * dims only broadcast the weight, and a separate elementwise node that reads the whole output back
 * from HBM. This pass views x as [B*S, K] (a Reshape, which costs nothing: views alias in HBM),
 * multiplies as one Gemm with the bias folded in (the bias becomes the PSUM evacuation's add), and
 * views the result back as [B, S, N]. The Add is folded only when it is the MatMul's one reader
 * and the bias is a constant that broadcasts along the last axis. An x that a Transpose swapped
 * from [1.., K, M] (its other axes of extent 1), read by the layer alone, is read as that value
 * viewed [K, M] with transA, and the Transpose is removed: K outer is the PE's layout, where the
 * Transpose would be an HBM copy moving the innermost axis (a U-Net attention block's
 * [1, C, H*W] input).
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of MatMul nodes rewritten. */
int canonicalize_linear_layers(Graph &g);

} // namespace nhc

#endif
