#ifndef NHC_FRONTEND_FRONTEND_H
#define NHC_FRONTEND_FRONTEND_H

/** \file
 * The front end: ONNX file -> Graph IR with static shapes (DESIGN.md §1). Its steps, each timed:
 * load (with external data), check, convert to the canonical opset, apply --input-shape
 * overrides, shape inference with data propagation alternating with constant folding, import.
 */

#include "frontend/InputShapes.h"
#include "graph/Graph.h"

#include <string>
#include <vector>

namespace nhc {

struct FrontendOptions {
    std::vector<InputShapeOverride> input_shapes;
};

Graph run_frontend(const std::string &model_path, const FrontendOptions &options);

} // namespace nhc

#endif
