#ifndef NHC_FRONTEND_FRONTEND_H
#define NHC_FRONTEND_FRONTEND_H

/** \file
 * The front end: ONNX file -> Graph IR with static shapes (DESIGN.md §1). Its steps, each timed:
 * load (large weights and external data left in their mapped files: frontend/LoadModel), check,
 * freeze the --freeze-input inputs, convert to the canonical opset, apply --input-shape overrides,
 * shape inference with data propagation alternating with constant folding, Einsum contractions as
 * MatMuls (frontend/DecomposeEinsum.h), check that compile-time operands are constants
 * (NHC_EALG002), import.
 */

#include "frontend/FreezeInputs.h"
#include "frontend/InputShapes.h"
#include "frontend/LoadModel.h"
#include "graph/Graph.h"

#include <string>
#include <vector>

namespace nhc {

struct FrontendOptions {
    std::vector<InputShapeOverride> input_shapes;
    std::vector<FrozenInput> frozen_inputs;
};

Graph run_frontend(const std::string &model_path, const FrontendOptions &options);

/** The front end's steps up to folding: the model as import would take it, for tools that
 *  inspect it (the conformance runner asks which inputs to freeze). The opsets are returned
 *  through the pointers when given. */
LoadedModel prepare_model(const std::string &model_path, const FrontendOptions &options,
                          int *opset = nullptr, int *declared_opset = nullptr);

/** The front end's last steps on a prepared model: check that compile-time operands are
 *  constants, import. run_frontend is prepare_model, then this. */
Graph import_prepared_model(LoadedModel &model, int opset, int declared_opset);

} // namespace nhc

#endif
