#ifndef NHC_GRAPH_DEPTHTOSPACE_H
#define NHC_GRAPH_DEPTHTOSPACE_H

/** \file
 * DepthToSpace and SpaceToDepth as their ONNX definitions: a Reshape to 6-D, a Transpose and a
 * Reshape back (the views are free; the Transpose is one layout group). DepthToSpace takes both
 * modes (DCR, CRD).
 */

#include "graph/Graph.h"

namespace nhc {

/** Rewrites every DepthToSpace and SpaceToDepth; returns how many. */
int lower_depth_space(Graph &g);

} // namespace nhc

#endif
