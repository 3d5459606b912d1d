#ifndef NHC_FRONTEND_MODELSIZE_H
#define NHC_FRONTEND_MODELSIZE_H

/** \file
 * Refuses a model past the compiler's size limits (graph/GraphLimits.h) before ONNX's checker or
 * shape inference walks it: more nodes than kMaxModelNodes, counting the graph, the graphs nested
 * in node attributes, the model-local functions' bodies, and each call of a local function as the
 * nodes its body expands to (shape inference walks a function's body at every call), or more graph
 * inputs and outputs than kMaxGraphInputsOutputs (NHC_EONX011); a local function that calls
 * itself, directly or through others, or is declared twice (NHC_EONX012: ONNX 1.12's inference
 * recursed until the stack overflowed). Assumes nothing of the model but that protobuf parsed it
 * (its parser bounds how deep graphs nest); no recursion follows function calls.
 */

#include <onnx/onnx_pb.h>

namespace nhc {

void check_model_size(const onnx::ModelProto &model);

} // namespace nhc

#endif
