#include "neff/DType.h"

namespace nhc::neff {

namespace {

struct DTypeRow {
    DType type;
    const char *name;
    const char *numpy;
    int size;
    bool is_float;
};

const DTypeRow kRows[kNumDTypes] = {
    {DType::F32, "f32", "float32", 4, true},
    {DType::BF16, "bf16", "bfloat16", 2, true},
    {DType::F16, "f16", "float16", 2, true},
    {DType::TF32, "tf32", "tfloat32", 4, true},
    {DType::FP8E4M3, "fp8e4m3", "float8_e4m3", 1, true},
    {DType::FP8E5M2, "fp8e5m2", "float8_e5m2", 1, true},
    {DType::I8, "i8", "int8", 1, false},
    {DType::U8, "u8", "uint8", 1, false},
    {DType::I16, "i16", "int16", 2, false},
    {DType::U16, "u16", "uint16", 2, false},
    {DType::I32, "i32", "int32", 4, false},
    {DType::U32, "u32", "uint32", 4, false},
    {DType::F64, "f64", "float64", 8, true},
    {DType::U64, "u64", "uint64", 8, false},
};

const DTypeRow &row(DType t) {
    return kRows[static_cast<int>(t)];
}

} // namespace

int dtype_size(DType t) {
    return row(t).size;
}
const char *dtype_name(DType t) {
    return row(t).name;
}
const char *dtype_numpy_name(DType t) {
    return row(t).numpy;
}
bool dtype_is_float(DType t) {
    return row(t).is_float;
}
bool dtype_is_16bit_float(DType t) {
    return t == DType::BF16 || t == DType::F16;
}

bool parse_dtype(const std::string &s, DType &out) {
    for (const auto &r : kRows) {
        if (s == r.name) {
            out = r.type;
            return true;
        }
    }
    return false;
}

bool parse_dtype_numpy_name(const std::string &s, DType &out) {
    for (const auto &r : kRows) {
        if (s == r.numpy) {
            out = r.type;
            return true;
        }
    }
    return false;
}

} // namespace nhc::neff
