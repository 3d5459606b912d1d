#ifndef NHC_GRAPH_FLATTENELEMENTWISE_H
#define NHC_GRAPH_FLATTENELEMENTWISE_H

/** \file
 * Moves the views that the linear-layer pass puts after a 2-D Gemm ([B*S, N] -> [B, S, N]) past
 * the elementwise nodes that consume them: an elementwise node whose tensor inputs all have a 2-D
 * form (and whose other inputs are constants that broadcast along the last axis) is rewritten to
 * compute on [B*S, N]. The view is re-inserted only where a node that was not rewritten, or the
 * graph, reads the N-D value. A chain such as erf-GELU after the FFN's first Gemm then has the
 * Gemm's output shape and can join its epilogue.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of nodes rewritten. */
int flatten_elementwise_after_views(Graph &g);

/** Elementwise operators (one output, ONNX broadcasting, no reduction). */
bool is_elementwise_op(const std::string &op_type);

} // namespace nhc

#endif
