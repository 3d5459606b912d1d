#ifndef NHC_DRIVER_GRAPHPASSES_H
#define NHC_DRIVER_GRAPHPASSES_H

/** \file
 * The graph passes between the frontend and code generation (DESIGN.md §2), in their order: int64
 * narrowing, decompositions, fused patterns (LayerNorm, GELU, group norm), convolutions, pooling
 * and Resize as matmuls and windows, linear layers, elementwise flattening, transpose folding,
 * weight layout and auto-cast (`--auto-cast matmult`). Each logs what it rewrote.
 */

#include "driver/Options.h"
#include "graph/Graph.h"

namespace nhc {

/** Rewrites `g` with the graph passes the options ask for. */
void apply_graph_passes(Graph &g, const CompileOptions &options);

} // namespace nhc

#endif
