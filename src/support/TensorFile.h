#ifndef NHC_SUPPORT_TENSORFILE_H
#define NHC_SUPPORT_TENSORFILE_H

/** \file
 * Tensor files by extension: `.npy` (Npy.h) and `.pb` (a serialized onnx::TensorProto, the format
 * of the ONNX backend test data). Errors are NHC_ERT013 naming the file.
 */

#include "support/Npy.h"

#include <string>

namespace nhc {

NpyTensor read_tensor_file(const std::string &path);
/** The ONNX TensorProto data type of a NumPy dtype name (Npy.h), or 0 (UNDEFINED). */
int onnx_data_type(const std::string &dtype);
/** Writes a .npy file (NHC_ERT013 if it cannot be written). */
void write_npy_file(const std::string &path, const NpyTensor &t);

} // namespace nhc

#endif
