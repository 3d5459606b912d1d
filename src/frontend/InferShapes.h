#ifndef NHC_FRONTEND_INFERSHAPES_H
#define NHC_FRONTEND_INFERSHAPES_H

/** \file
 * Runs ONNX shape inference with data propagation (so that Shape -> Gather -> Concat -> Reshape
 * chains resolve, as in torch exports of GroupNorm) and collects what is known about every value:
 * element type and shape, with -1 for a dimension that is unknown or symbolic. ONNX 1.12's own
 * inference functions crash on some malformed nodes: those found so far are guarded
 * (frontend/GuardInference.h). Where ONNX infers an Einsum's rank alone, its shape is computed
 * from the equation (frontend/EinsumEquation.h) and inference runs again past it.
 */

#include "graph/HostTensor.h"

#include <map>
#include <onnx/onnx_pb.h>
#include <string>

namespace nhc {

struct ValueType {
    int elem_type = 0; ///< ONNX TensorProto::DataType; 0 when unknown
    bool has_shape = false;
    Shape shape;                         ///< -1 marks an unknown dim
    std::string symbol_of_first_unknown; ///< dim_param of the first symbolic dim, if any
    bool is_tensor = true;               ///< false for sequence/map/optional types
    bool is_static() const;
};

/** Infers shapes in place (value_info is rewritten); NHC_EONX004 if ONNX reports a conflict,
 *  NHC_EONX010 for a node that breaks a guard of GuardInference.h. */
void infer_shapes(onnx::ModelProto &model);

/** Types of graph inputs, outputs, value_info and initializers, by name. */
std::map<std::string, ValueType> collect_value_types(const onnx::GraphProto &g);

} // namespace nhc

#endif
