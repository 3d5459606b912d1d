#include "support/SmallFloat.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace nhc {

namespace {

/** A small binary float format: sign, `ebits` exponent bits, `mbits` mantissa bits. */
struct SmallFloat {
    int ebits, mbits;
    bool ieee_top; ///< exponent all-ones is inf/NaN
    double max_finite;
};

constexpr SmallFloat kF16{5, 10, true, 65504.0};
constexpr SmallFloat kE4M3{4, 3, true, kFp8E4M3Max}; // nc.md:L425
constexpr SmallFloat kE5M2{5, 2, true, 57344.0};     // nc.md:L426

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

} // namespace

uint16_t small_f32_to_f16(float x) {
    return uint16_t(encode_small(kF16, x));
}
float small_f16_to_f32(uint16_t h) {
    return decode_small(kF16, h);
}

uint8_t f32_to_fp8e4m3(float x) {
    // Bit-level RNE: the weights of a model pass through here (GPT-2's 85 M took 5.6 s through
    // encode_small); the results equal encode_small's under the rules above (checked for all
    // 2^32 inputs when written; tests/backend/test_numerics.cpp checks against the nearest value).
    uint32_t u;
    std::memcpy(&u, &x, 4);
    const uint8_t sign = uint8_t((u >> 24) & 0x80);
    const uint32_t a = u & 0x7fffffffu;
    constexpr uint32_t kInfF32 = 0x7f800000u, kMaxF32 = 0x43700000u; // +inf, 240.0f
    if (a > kInfF32 || (a < kInfF32 && a > kMaxF32)) // NaN, or finite outside +-240 [CQ]
        return uint8_t(sign | nan_bits(kE4M3));
    if (a == kInfF32)
        return uint8_t(sign | inf_bits(kE4M3));
    constexpr uint32_t kMinNormalF32 = uint32_t(127 - 6) << 23; // 2^-6, e4m3's smallest normal
    if (a < kMinNormalF32) {
        // Subnormal (or the smallest normal after rounding up): the code is |x| / 2^-9 rounded,
        // exact in float before the rounding.
        float scaled;
        std::memcpy(&scaled, &a, 4);
        return uint8_t(sign | uint32_t(std::nearbyint(scaled * 512.0f)));
    }
    // Normal: rebias the exponent (127 -> 7) and round 23 mantissa bits to 3, ties to even; a
    // carry out of the mantissa raises the exponent, as it should. |x| <= 240 bounds the result.
    const uint32_t rebiased = a - (uint32_t(127 - 7) << 23);
    const uint32_t rounded = (rebiased + 0x7ffffu + ((rebiased >> 20) & 1u)) >> 20;
    return uint8_t(sign | rounded);
}
float fp8e4m3_to_f32(uint8_t b) {
    // Every code decoded once: the simulator reads fp8 weights through here, element by element.
    static const std::array<float, 256> decoded = [] {
        std::array<float, 256> t{};
        for (uint32_t code = 0; code < 256; code++)
            t[code] = decode_small(kE4M3, code);
        return t;
    }();
    return decoded[b];
}
uint8_t f32_to_fp8e5m2(float x) {
    return uint8_t(encode_small(kE5M2, x));
}
float fp8e5m2_to_f32(uint8_t b) {
    return decode_small(kE5M2, b);
}

} // namespace nhc
