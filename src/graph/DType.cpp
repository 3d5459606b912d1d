#include "graph/DType.h"

#include "support/Error.h"
#include "support/SmallFloat.h"

#include <cfloat>
#include <onnx/onnx_pb.h>

namespace nhc {

int dtype_size(DType t) {
    switch (t) {
    case DType::Float64:
    case DType::Int64:
    case DType::UInt64:
        return 8;
    case DType::Float32:
    case DType::TFloat32:
    case DType::Int32:
    case DType::UInt32:
        return 4;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int16:
    case DType::UInt16:
        return 2;
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool:
    case DType::Float8E4M3:
        return 1;
    }
    nhc_assert(false, "unknown dtype");
}

const char *dtype_name(DType t) {
    switch (t) {
    case DType::Float32:
        return "f32";
    case DType::Float16:
        return "f16";
    case DType::BFloat16:
        return "bf16";
    case DType::Float64:
        return "f64";
    case DType::Int8:
        return "i8";
    case DType::Int16:
        return "i16";
    case DType::Int32:
        return "i32";
    case DType::Int64:
        return "i64";
    case DType::UInt8:
        return "u8";
    case DType::UInt16:
        return "u16";
    case DType::UInt32:
        return "u32";
    case DType::UInt64:
        return "u64";
    case DType::Bool:
        return "bool";
    case DType::TFloat32:
        return "tf32";
    case DType::Float8E4M3:
        return "fp8e4m3";
    }
    nhc_assert(false, "unknown dtype");
}

double dtype_largest_finite(DType t) {
    switch (t) {
    case DType::BFloat16:
        return 3.3895313892515355e38; // 0x7F7F: 1.1111111b x 2^127
    case DType::Float16:
        return 65504.0;
    case DType::Float8E4M3:
        return kFp8E4M3Max;
    case DType::Float64:
        return DBL_MAX;
    default:
        return double(FLT_MAX);
    }
}

bool dtype_is_float(DType t) {
    return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16 ||
           t == DType::Float64 || t == DType::TFloat32 || t == DType::Float8E4M3;
}

bool dtype_is_signed_int(DType t) {
    return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}

std::optional<DType> dtype_from_onnx(int e) {
    using TP = onnx::TensorProto;
    switch (e) {
    case TP::FLOAT:
        return DType::Float32;
    case TP::FLOAT16:
        return DType::Float16;
    case TP::BFLOAT16:
        return DType::BFloat16;
    case TP::DOUBLE:
        return DType::Float64;
    case TP::INT8:
        return DType::Int8;
    case TP::INT16:
        return DType::Int16;
    case TP::INT32:
        return DType::Int32;
    case TP::INT64:
        return DType::Int64;
    case TP::UINT8:
        return DType::UInt8;
    case TP::UINT16:
        return DType::UInt16;
    case TP::UINT32:
        return DType::UInt32;
    case TP::UINT64:
        return DType::UInt64;
    case TP::BOOL:
        return DType::Bool;
    default:
        return std::nullopt;
    }
}

int dtype_to_onnx(DType t) {
    using TP = onnx::TensorProto;
    switch (t) {
    case DType::Float32:
    case DType::TFloat32: // stored as a float
        return TP::FLOAT;
    case DType::Float16:
        return TP::FLOAT16;
    case DType::BFloat16:
        return TP::BFLOAT16;
    case DType::Float64:
        return TP::DOUBLE;
    case DType::Int8:
        return TP::INT8;
    case DType::Int16:
        return TP::INT16;
    case DType::Int32:
        return TP::INT32;
    case DType::Int64:
        return TP::INT64;
    case DType::UInt8:
        return TP::UINT8;
    case DType::UInt16:
        return TP::UINT16;
    case DType::UInt32:
        return TP::UINT32;
    case DType::UInt64:
        return TP::UINT64;
    case DType::Bool:
        return TP::BOOL;
    case DType::Float8E4M3: // ONNX's float8 types came in 1.14; only the compiler makes these
        break;
    }
    nhc_assert(false, "no ONNX 1.12 type holds " << dtype_name(t));
}

std::string onnx_elem_type_name(int e) {
    if (onnx::TensorProto::DataType_IsValid(e))
        return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(e));
    return "type#" + std::to_string(e);
}

} // namespace nhc
