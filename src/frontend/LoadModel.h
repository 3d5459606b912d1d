#ifndef NHC_FRONTEND_LOADMODEL_H
#define NHC_FRONTEND_LOADMODEL_H

/** \file
 * Reads an ONNX model file into a ModelProto and inlines its external-data tensors (files beside
 * the model, ONNX's `external_data` location/offset/length keys) as raw_data, so that every later
 * step sees a self-contained model. Assumes nothing about the file: unreadable, truncated or
 * non-protobuf content is a user error (NHC_EIO001, NHC_EONX001, NHC_EONX005), and an external
 * data location that leaves the model's directory (absolute, through "..", or by a symbolic link)
 * is refused before any file is opened (NHC_EONX009).
 */

#include <onnx/onnx_pb.h>
#include <string>

namespace nhc {

onnx::ModelProto load_model_file(const std::string &path);

/** Inlines external data of initializers and Constant-node tensors; `model_dir` is the folder
 *  the locations are relative to. Exposed for tests. */
void inline_external_data(onnx::ModelProto &model, const std::string &model_dir);

} // namespace nhc

#endif
