#ifndef NHC_GRAPH_FLATTENELEMENTWISE_H
#define NHC_GRAPH_FLATTENELEMENTWISE_H

/** \file
 * Moves the views that the linear-layer pass puts after a 2-D Gemm ([B*S, N] -> [B, S, N]) past
 * the row-wise nodes that consume them (elementwise, and LayerNormalization or Softmax over the
 * last axis): a node with an input in 2-D form is rewritten to compute on [B*S, N] when each other
 * input is a constant that broadcasts along the last axis or a runtime value of the output's
 * shape (a residual), which is then read through a new flattening view (free: views alias HBM).
 * The view is re-inserted only where a node that was not rewritten, or the graph, reads the N-D
 * value. A chain such as erf-GELU after the FFN's first Gemm, or the residual Add and LayerNorm
 * after the attention output's, then has the Gemm's output shape and can join its epilogue.
 * A chain also starts, without a 2-D input, at a node whose runtime input of the output's shape
 * comes (through views and row-wise nodes) from an operator other than a matmul, such as a
 * convolution's [N, C, H, W] output: computed as [N*C*H, W] its tiles fill the partitions rather
 * than holding H rows each. Chains from matmuls keep their shapes (attention's fusion needs them),
 * and so do chains from a ConvTaps whose output channels fill the partitions enough for the chain
 * to join its group (conv_epilogue_joins).
 */

#include "graph/ConvIm2Col.h"
#include "graph/Graph.h"
#include "graph/ValueIndex.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nhc {

/** Returns the number of nodes rewritten. */
int flatten_elementwise_after_views(Graph &g, const ConvLimits &conv_limits);

/** Operators that only view their first input (ONNX's default domain). */
bool is_view_op(const std::string &op_type);

/** Whether a node reading `v` joins a ConvTaps' group (driver/FormGroups): back from v, only
 *  elementwise nodes, each value read by the next node alone, up to a ConvTaps whose output
 *  channels are enough (conv_epilogue_joins). Such a node keeps the convolution's shape. */
bool joins_conv_group(const Graph &g, const ValueIndex &x, std::string v,
                      const ConvLimits &conv_limits);
/** Whether `v` is computed from a node other than a matmul: looking back through views and
 *  row-wise nodes (their first runtime input), its chain starts at another operator (not at a
 *  graph input). Chains from matmuls keep their shapes for the attention fusion. */
bool computed_away_from_matmuls(const Graph &g, const ValueIndex &x, std::string v);

/** Elementwise operators (one output, ONNX broadcasting, no reduction). */
bool is_elementwise_op(const std::string &op_type);
const std::set<std::string> &elementwise_op_types();

} // namespace nhc

#endif
