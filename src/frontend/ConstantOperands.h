#ifndef NHC_FRONTEND_CONSTANTOPERANDS_H
#define NHC_FRONTEND_CONSTANTOPERANDS_H

/** \file
 * Operands that a static compile needs as values at compile time: Resize's scales, Slice's
 * bounds, ReduceSum's axes, Pad's pads, Compress's condition, ...
 * (the table in ConstantOperands.cpp lists each operator's). After folding, such an operand is
 * either a constant or computed from runtime inputs of the model; the latter is refused with
 * NHC_EALG002, naming the node, the operand and the inputs its value comes from, so that the
 * user can freeze them (`--freeze-input`, FreezeInputs.h).
 *
 * Operands whose value the static shapes already fix are not listed: the compiler reads the
 * inferred output shapes instead (Reshape's and Expand's shape, Squeeze's axes, Split's sizes,
 * Tile's repeats, OneHot's depth, Resize's sizes, ConstantOfShape's shape), so the NEFF is
 * specialised to them as to every other shape. Values reached only through
 * Shape or Size depend on shapes, not on runtime data, and do not count.
 */

#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace nhc {

struct RuntimeOperand {
    std::string node;                ///< "Resize 'r'"
    int index;                       ///< the operand's input position
    std::string operand;             ///< its tensor name
    std::vector<std::string> inputs; ///< the runtime inputs its value comes from, sorted
};

/** Every listed operand of `model`'s nodes whose value comes from runtime inputs. */
std::vector<RuntimeOperand> find_runtime_operands(const onnx::ModelProto &model);

/** The runtime inputs that the operands of find_runtime_operands come from, sorted. */
std::vector<std::string> inputs_to_freeze(const onnx::ModelProto &model);

/** NHC_EALG002 for the first operand find_runtime_operands reports. */
void check_constant_operands(const onnx::ModelProto &model);

} // namespace nhc

#endif
