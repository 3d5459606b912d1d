#ifndef NHC_GRAPH_REMOVEDEADNODES_H
#define NHC_GRAPH_REMOVEDEADNODES_H

/** \file
 * Removes the nodes whose outputs nothing reads: no node left, and no graph output. Rewrites
 * leave such nodes behind (graph/FlattenElementwise rewires a residual Add to read its Gemm's
 * 2-D output and leaves the views it read through, unread). A node left behind is compiled, or,
 * if it is a view, still reads its input, so that a group whose output it reads is cut there
 * (driver/FormGroups' split_escaping: ViT's attention output Gemm and its residual Add stayed
 * two groups). ONNX nodes have no side effects, so removing one changes no value.
 *
 * Assumes the graph's topological order (Graph::nodes).
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of nodes removed. */
int remove_dead_nodes(Graph &g);

} // namespace nhc

#endif
