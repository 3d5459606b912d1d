#ifndef NHC_FRONTEND_FREEZEINPUTS_H
#define NHC_FRONTEND_FREEZEINPUTS_H

/** \file
 * `--freeze-input name=file`: a runtime input of the model becomes a constant holding the tensor
 * in `file` (.npy or .pb), before shape inference and folding. This is how a static compile takes
 * an operand it needs at compile time (Resize's scales, Slice's bounds, ReduceSum's axes, Trilu's
 * k; see ConstantOperands.h) when the model passes it as a graph input: the NEFF is specialised
 * to that value and no longer has the input. neuronx-cc gets the same by tracing the framework
 * model with example inputs (../shared/reference/neuron-compiler.md §1).
 *
 * Assumes a model that passed the ONNX checker. The initializer is added and the input entry
 * kept, which is how IR < 4 models list weights; the importer takes it as a constant.
 */

#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace nhc {

struct FrozenInput {
    std::string name;
    std::string file;
};

/** Parses "name=file"; NHC_EARG014 when malformed. */
FrozenInput parse_frozen_input(const std::string &spec);

/** Freezes each input to its file's tensor. Errors: NHC_EARG015 for a name that is not a runtime
 *  input (the message lists them), NHC_EARG016 for a tensor whose type or shape is not the
 *  input's; NHC_ERT013 for a file that cannot be read. */
void freeze_inputs(onnx::ModelProto &model, const std::vector<FrozenInput> &frozen);

} // namespace nhc

#endif
