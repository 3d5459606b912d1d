#ifndef NHC_GRAPH_FUSELAYERNORM_H
#define NHC_GRAPH_FUSELAYERNORM_H

/** \file
 * Recognises the decomposed LayerNorm that exports before opset 17 produce and replaces it by one
 * LayerNormalization node (axis -1):
 *   m = ReduceMean(x, axes=[-1]); d = Sub(x, m); v = ReduceMean(Pow(d, 2), axes=[-1]);
 *   y = Add(Mul(Div(d, Sqrt(Add(v, eps))), gamma), beta)
 * with eps a one-element constant and gamma, beta constants of the last axis' size. Every
 * intermediate must be read only inside the pattern. The replaced node computes the same thing
 * with one reduction pass less per row and one group instead of nine.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of patterns replaced. */
int fuse_decomposed_layer_norms(Graph &g);

} // namespace nhc

#endif
