#ifndef NHC_GRAPH_DTYPE_H
#define NHC_GRAPH_DTYPE_H

/** \file
 * Element types of the Graph IR. The set mirrors the ONNX tensor element types that a model can
 * carry; which of them the code generator accepts is decided later, per operator.
 */

#include <cstdint>
#include <optional>
#include <string>

namespace nhc {

enum class DType {
    Float32,
    Float16,
    BFloat16,
    Float64,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Bool,
    /** fp32 storage with the mantissa rounded to 10 bits: an auto-cast operand type (the PE runs
     *  it at the bf16 rate); no ONNX tensor has it. */
    TFloat32,
    /** Neuron's legacy fp8_e4m3 (1/4/3, max 240, support/SmallFloat.h): the type
     *  `--auto-cast-type fp8_e4m3` stores linear layers' weights in; no ONNX 1.12 tensor has it. */
    Float8E4M3,
};

/** Bytes per element. */
int dtype_size(DType t);
/** Short lower-case name used in dumps and messages: f32, f16, bf16, f64, i8 ... u64, bool, tf32,
 *  fp8e4m3. */
const char *dtype_name(DType t);
bool dtype_is_float(DType t);
/** The largest finite value of a float type: bf16 0x7F7F, fp16 65504, fp8_e4m3 240, else
 *  float32's (tf32 is held in float32's bytes). */
double dtype_largest_finite(DType t);
bool dtype_is_signed_int(DType t);

/** Maps an ONNX TensorProto::DataType number; nullopt for types the Graph IR cannot hold
 *  (string, complex, undefined). */
std::optional<DType> dtype_from_onnx(int onnx_elem_type);
int dtype_to_onnx(DType t);
/** The ONNX spelling (FLOAT, INT64, ...) of an ONNX element type number, for messages. */
std::string onnx_elem_type_name(int onnx_elem_type);

} // namespace nhc

#endif
