#ifndef NHC_RUNTIME_TENSORFILES_H
#define NHC_RUNTIME_TENSORFILES_H

/** \file
 * Between tensor files (.npy, .pb: support/TensorFile.h) and a NEFF's inputs and outputs, as
 * neuron-halide-run binds and writes them, so that a model's own test files feed the NEFF the
 * compiler wrote for it (issue 20):
 * - int64 data goes to the int32 a NEFF holds it as (the compiler's int64 downcast), each value
 *   checked to fit;
 * - bool data (one byte per element, 0 or 1, as ONNX and NumPy store it) goes to an input that
 *   holds an ONNX bool (neff::Variable::holds_bool), and such an output comes back as bool;
 * - uint16 data goes to a bfloat16 input as the bits of its numbers: ONNX's test data stores
 *   bfloat16 tensors so, and NumPy has no bfloat16 type; bfloat16, tf32 and fp8 outputs come
 *   back widened to float32, exactly (NumPy reads that).
 * Anything else must have the variable's own type; a mismatch is NHC_ERT003 naming the input, its
 * type and shape, and what the NEFF takes.
 */

#include "runtime/Runtime.h"
#include "support/Npy.h"

namespace nhc::rt {

/** Whether a file of NumPy type `file_dtype` holds `var`'s bytes as they are: its own type, bool
 *  for a variable holding a bool, the uint16 bits of a bfloat16 one. */
bool holds_bytes_of(const std::string &file_dtype, const neff::Variable &var);

/** The tensor for input `var` from a file's contents `file` (see the file comment). */
Tensor input_from_file(const NpyTensor &file, const neff::Variable &var);

/** Output `t` of variable `var` as a file holds it (see the file comment). */
NpyTensor output_for_file(const Tensor &t, const neff::Variable &var);

/** The tensor for `model`'s input `name` from a file's contents; NHC_ERT002 when the model has
 *  no input of that name. */
Tensor input_from_file(const NpyTensor &file, const Model &model, const std::string &name);

/** `model`'s output `name`, `t`, as a file holds it. */
NpyTensor output_for_file(const Tensor &t, const Model &model, const std::string &name);

} // namespace nhc::rt

#endif
