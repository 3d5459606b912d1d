#ifndef NHC_FRONTEND_IMPORTGRAPH_H
#define NHC_FRONTEND_IMPORTGRAPH_H

/** \file
 * Builds the Graph IR from a checked, shape-inferred and folded ONNX model. This is where the
 * static-shape promise is enforced: a value whose type or shape is still unknown or symbolic is
 * NHC_EMOD025 (like neuronx-cc's NCC_EMOD025), naming the tensor and, for a symbolic graph input,
 * the `--input-shape` option that fixes it. Control flow (graph-valued attributes) is NHC_EUOC003,
 * tensors the IR cannot hold are NHC_EDTY001.
 */

#include "frontend/LoadModel.h"
#include "graph/Graph.h"

namespace nhc {

/** The Graph of `model`. An initializer whose bytes stay in the model file becomes a constant
 *  viewing them; any other initializer's bytes are taken out of `model` (its raw data freed) once
 *  copied into the graph, so that the next weight's copy can reuse that memory rather than fault
 *  in fresh pages: the model is spent afterwards. */
Graph import_graph(LoadedModel &model, int opset, int original_opset);

} // namespace nhc

#endif
