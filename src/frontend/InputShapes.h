#ifndef NHC_FRONTEND_INPUTSHAPES_H
#define NHC_FRONTEND_INPUTSHAPES_H

/** \file
 * `--input-shape name=d0,d1,...`: parsing the option value, and applying the overrides to the
 * graph inputs of a model before shape inference. A symbolic dim (dim_param) bound by an override
 * is bound to the same value in every other input and output that uses the same symbol, so one
 * `--input-shape ids=4,128` also fixes `batch` and `seq` in the attention mask.
 */

#include "graph/HostTensor.h"

#include <onnx/onnx_pb.h>
#include <string>
#include <utility>
#include <vector>

namespace nhc {

struct InputShapeOverride {
    std::string name;
    Shape shape;
};

/** Parses "name=d0,d1,..." (dims positive integers); NHC_EARG011 when malformed. */
InputShapeOverride parse_input_shape(const std::string &spec);

/** Applies overrides (the right-most one for an input wins). Errors: NHC_EARG012 for a
 *  name that is not a graph input, NHC_EARG013 for a rank or fixed-dim mismatch. */
void apply_input_shapes(onnx::ModelProto &model, const std::vector<InputShapeOverride> &overrides);

} // namespace nhc

#endif
