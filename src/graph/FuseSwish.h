#ifndef NHC_GRAPH_FUSESWISH_H
#define NHC_GRAPH_FUSESWISH_H

/** \file
 * Recognises SiLU as PyTorch exports it, Mul(x, Sigmoid(x)) in either operand order, and
 * replaces it by one Swish node (an internal node, alpha = 1: x * sigmoid(alpha * x)), which the
 * code generator computes as ACT's silu, one instruction (neuroncore.md L351 lists silu among
 * ACT's functions) where the pair took four (exp, add, reciprocal, multiply). The Sigmoid's
 * output must be read by the Mul alone and not be a graph output; x must be float32 of the Mul's
 * shape.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of patterns replaced. */
int fuse_swish_patterns(Graph &g);

} // namespace nhc

#endif
