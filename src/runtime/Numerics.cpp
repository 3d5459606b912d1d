#include "runtime/Numerics.h"

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

/** A small binary float format: sign, `ebits` exponent bits, `mbits` mantissa bits. */
struct SmallFloat {
    int ebits, mbits;
    bool ieee_top; ///< exponent all-ones is inf/NaN
    double max_finite;
};

constexpr SmallFloat kF16{5, 10, true, 65504.0};
constexpr SmallFloat kE4M3{4, 3, true, 240.0};   // nc.md:L425
constexpr SmallFloat kE5M2{5, 2, true, 57344.0}; // nc.md:L426

int bias(const SmallFloat &f) {
    return (1 << (f.ebits - 1)) - 1;
}

uint32_t inf_bits(const SmallFloat &f) {
    return uint32_t((1 << f.ebits) - 1) << f.mbits;
}
uint32_t nan_bits(const SmallFloat &f) {
    return inf_bits(f) | (1u << (f.mbits - 1));
}

/** RNE encoding of |a| (finite, not NaN); returns the magnitude bits or inf bits on overflow. */
uint32_t encode_magnitude(const SmallFloat &f, double a) {
    if (a == 0) {
        return 0;
    }
    int emin = 1 - bias(f);
    int e;
    std::frexp(a, &e);
    e -= 1; // a in [2^e, 2^(e+1))
    int qexp = std::max(e, emin) - f.mbits;
    double q = std::ldexp(a, -qexp); // exact: a has 24 significant bits
    double r = std::nearbyint(q);    // default rounding mode: to nearest, ties to even
    double v = std::ldexp(r, qexp);
    if (v > f.max_finite) {
        return inf_bits(f);
    }
    if (v < std::ldexp(1.0, emin)) {
        return uint32_t(r); // subnormal: exponent field 0
    }
    int ev;
    std::frexp(v, &ev);
    ev -= 1;
    uint32_t mant = uint32_t(std::ldexp(v, f.mbits - ev)) - (1u << f.mbits);
    return (uint32_t(ev + bias(f)) << f.mbits) | mant;
}

double decode_magnitude(const SmallFloat &f, uint32_t m) {
    uint32_t exp = m >> f.mbits, mant = m & ((1u << f.mbits) - 1);
    if (f.ieee_top && exp == uint32_t((1 << f.ebits) - 1)) {
        return mant ? std::numeric_limits<double>::quiet_NaN()
                    : std::numeric_limits<double>::infinity();
    }
    if (exp == 0) {
        return std::ldexp(double(mant), 1 - bias(f) - f.mbits);
    }
    return std::ldexp(double(mant | (1u << f.mbits)), int(exp) - bias(f) - f.mbits);
}

uint32_t encode_small(const SmallFloat &f, float x) {
    uint32_t sign = std::signbit(x) ? 1u << (f.ebits + f.mbits) : 0;
    if (std::isnan(x)) {
        return sign | nan_bits(f);
    }
    if (std::isinf(x)) {
        return sign | inf_bits(f);
    }
    return sign | encode_magnitude(f, std::fabs(double(x)));
}

float decode_small(const SmallFloat &f, uint32_t b) {
    uint32_t sign_bit = 1u << (f.ebits + f.mbits);
    double m = decode_magnitude(f, b & (sign_bit - 1));
    return float((b & sign_bit) ? -m : m);
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
    return uint16_t(encode_small(kF16, x));
}
float f16_to_f32(uint16_t h) {
    return decode_small(kF16, h);
}

float round_to_tf32(float x) {
    uint32_t u = bits(x);
    if (std::isnan(x)) {
        return from_bits(u | 0x00400000);
    }
    u += 0xfff + ((u >> 13) & 1); // RNE on the 13 dropped mantissa bits
    return from_bits(u & ~0x1fffu);
}

uint8_t f32_to_fp8e4m3(float x) {
    // Neuron legacy e4m3: finite values outside +-240 give NaN [CQ] (see file comment).
    if (std::isfinite(x) && std::fabs(x) > kE4M3.max_finite) {
        return uint8_t((std::signbit(x) ? 0x80 : 0) | nan_bits(kE4M3));
    }
    return uint8_t(encode_small(kE4M3, x));
}
float fp8e4m3_to_f32(uint8_t b) {
    return decode_small(kE4M3, b);
}
uint8_t f32_to_fp8e5m2(float x) {
    return uint8_t(encode_small(kE5M2, x));
}
float fp8e5m2_to_f32(uint8_t b) {
    return decode_small(kE5M2, b);
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
    }
}

float round_through(neff::DType t, float x) {
    uint8_t buf[4];
    store_elem(t, buf, x);
    return load_elem(t, buf);
}

} // namespace nhc::rt
