#ifndef NHC_FRONTEND_CHECKMODEL_H
#define NHC_FRONTEND_CHECKMODEL_H

/** \file
 * Refuses models past the compiler's size limits (frontend/ModelSize.h), then runs ONNX's own model
 * checker (onnx::checker::check_model) on a loaded, self-contained model and turns its complaint
 * into NHC_EONX002; rejects graph inputs/outputs that are not tensors (NHC_EDTY001) and opsets
 * newer than this compiler's ONNX library knows (NHC_EONX003). Returns the default-domain opset the
 * model declares.
 */

#include <onnx/onnx_pb.h>

namespace nhc {

int check_model(const onnx::ModelProto &model);

/** The newest default-domain opset that the linked ONNX library (1.12) defines. */
int newest_known_opset();

} // namespace nhc

#endif
