#ifndef NHC_FRONTEND_CONVERTOPSET_H
#define NHC_FRONTEND_CONVERTOPSET_H

/** \file
 * Converts a model to the canonical opset with ONNX's version converter, so that operator
 * importers see one definition per operator. Where the converter has no adapter for some node
 * (or fails), the model keeps its own opset, a warning says so, and later stages read the opset
 * from the Graph. Assumes a checked model.
 */

#include <onnx/onnx_pb.h>

namespace nhc {

/** The opset everything is converted to: the newest the bundled ONNX 1.12 knows. */
constexpr int kCanonicalOpset = 17;

/** Returns the default-domain opset of `model` after the attempt. */
int convert_to_canonical_opset(onnx::ModelProto &model, int declared_opset);

} // namespace nhc

#endif
