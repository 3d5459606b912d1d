#include "runtime/Numerics.h"

#include "support/SmallFloat.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace nhc::rt {

namespace {

uint32_t bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}
float from_bits(uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}

template <typename T>
T saturate_int(float x) {
    if (std::isnan(x)) {
        return 0;
    }
    double r = std::nearbyint(double(x));
    if (r <= double(std::numeric_limits<T>::min())) {
        return std::numeric_limits<T>::min();
    }
    if (r >= double(std::numeric_limits<T>::max())) {
        return std::numeric_limits<T>::max();
    }
    return T(r);
}

template <typename T>
T load_raw(const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <typename T>
void store_raw(uint8_t *p, T v) {
    std::memcpy(p, &v, sizeof v);
}

} // namespace

uint16_t f32_to_bf16(float x) {
    uint32_t u = bits(x);
    if (std::isnan(x)) {
        return uint16_t((u >> 16) | 0x40); // keep sign and payload top, force quiet
    }
    u += 0x7fff + ((u >> 16) & 1); // RNE on the 16 dropped bits; overflow carries into inf
    return uint16_t(u >> 16);
}

float bf16_to_f32(uint16_t b) {
    return from_bits(uint32_t(b) << 16);
}

uint16_t f32_to_f16(float x) {
    return small_f32_to_f16(x);
}
float f16_to_f32(uint16_t h) {
    return small_f16_to_f32(h);
}

float round_to_tf32(float x) {
    uint32_t u = bits(x);
    if (std::isnan(x)) {
        return from_bits(u | 0x00400000);
    }
    u += 0xfff + ((u >> 13) & 1); // RNE on the 13 dropped mantissa bits
    return from_bits(u & ~0x1fffu);
}

float load_elem(neff::DType t, const uint8_t *p) {
    using neff::DType;
    switch (t) {
    case DType::F32:
    case DType::TF32:
        return load_raw<float>(p);
    case DType::BF16:
        return bf16_to_f32(load_raw<uint16_t>(p));
    case DType::F16:
        return f16_to_f32(load_raw<uint16_t>(p));
    case DType::FP8E4M3:
        return fp8e4m3_to_f32(*p);
    case DType::FP8E5M2:
        return fp8e5m2_to_f32(*p);
    case DType::I8:
        return float(load_raw<int8_t>(p));
    case DType::U8:
        return float(*p);
    case DType::I16:
        return float(load_raw<int16_t>(p));
    case DType::U16:
        return float(load_raw<uint16_t>(p));
    case DType::I32:
        return float(load_raw<int32_t>(p));
    case DType::U32:
        return float(load_raw<uint32_t>(p));
    case DType::F64: // model I/O and host segments only (neff/DType.h)
        return float(load_raw<double>(p));
    case DType::U64:
        return float(load_raw<uint64_t>(p));
    }
    return 0;
}

void store_elem(neff::DType t, uint8_t *p, float x) {
    using neff::DType;
    switch (t) {
    case DType::F32:
        store_raw<float>(p, x);
        break;
    case DType::TF32:
        store_raw<float>(p, round_to_tf32(x));
        break;
    case DType::BF16:
        store_raw<uint16_t>(p, f32_to_bf16(x));
        break;
    case DType::F16:
        store_raw<uint16_t>(p, f32_to_f16(x));
        break;
    case DType::FP8E4M3:
        *p = f32_to_fp8e4m3(x);
        break;
    case DType::FP8E5M2:
        *p = f32_to_fp8e5m2(x);
        break;
    case DType::I8:
        store_raw<int8_t>(p, saturate_int<int8_t>(x));
        break;
    case DType::U8:
        store_raw<uint8_t>(p, saturate_int<uint8_t>(x));
        break;
    case DType::I16:
        store_raw<int16_t>(p, saturate_int<int16_t>(x));
        break;
    case DType::U16:
        store_raw<uint16_t>(p, saturate_int<uint16_t>(x));
        break;
    case DType::I32:
        store_raw<int32_t>(p, saturate_int<int32_t>(x));
        break;
    case DType::U32:
        store_raw<uint32_t>(p, saturate_int<uint32_t>(x));
        break;
    case DType::F64:
        store_raw<double>(p, double(x));
        break;
    case DType::U64:
        store_raw<uint64_t>(p, saturate_int<uint64_t>(x));
        break;
    }
}

float round_through(neff::DType t, float x) {
    uint8_t buf[8];
    store_elem(t, buf, x);
    return load_elem(t, buf);
}

} // namespace nhc::rt
