#ifndef NHC_GRAPH_FOLDTRANSPOSE_H
#define NHC_GRAPH_FOLDTRANSPOSE_H

/** \file
 * Folds a Transpose that feeds a MatMul into the MatMul's read of that operand
 * (Node::input_perm). Attention exports transpose Q, K and V between Reshape and MatMul
 * (`[b, s, h, d] -> [b, h, s, d]`, and K to `[b, h, d, s]`); as separate nodes those are HBM-to-HBM
 * copies whose innermost axis moves, one descriptor row per element. Folded, the matmul's operand
 * staging reads the original layout (natural rows, a PE transpose where K is innermost). A
 * Transpose is folded only when that MatMul is its only reader and its output is not a graph
 * output; it is then removed.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of Transpose nodes removed. */
int fold_transposes_into_matmuls(Graph &g);

} // namespace nhc

#endif
