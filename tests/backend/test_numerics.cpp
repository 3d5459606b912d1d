// Numeric conversions of the simulator: round-to-nearest-even ties, denormals, overflow and
// the fp8 range rules (src/runtime/Numerics.h).

#include "BackendTest.h"

#include <cmath>
#include <limits>

using namespace nhc;
using namespace nhc::rt;

namespace {

float f(uint32_t bits) {
    float x;
    std::memcpy(&x, &bits, 4);
    return x;
}
uint32_t bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}

} // namespace

TEST_CASE("bf16 rounds to nearest, ties to even") {
    CHECK(f32_to_bf16(f(0x3F808000)) == 0x3F80); // 1 + 2^-8: tie, 1.0 has an even mantissa
    CHECK(f32_to_bf16(f(0x3F818000)) == 0x3F82); // 1 + 3*2^-8: tie, rounds up to even
    CHECK(f32_to_bf16(f(0x3F808001)) == 0x3F81); // just above the tie
    CHECK(f32_to_bf16(f(0x3F807FFF)) == 0x3F80); // just below
    CHECK(f32_to_bf16(-1.0f) == 0xBF80);
    CHECK(f32_to_bf16(f(0x7F7FFFFF)) == 0x7F80); // FLT_MAX overflows to +inf
    CHECK(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
    CHECK(std::isinf(bf16_to_f32(f32_to_bf16(-INFINITY))));
}

TEST_CASE("bf16 keeps denormals and rounds them with ties to even") {
    CHECK(f32_to_bf16(f(0x00018000)) == 0x0002); // tie between 1 and 2 -> 2
    CHECK(f32_to_bf16(f(0x00008000)) == 0x0000); // tie between 0 and 1 -> 0
    CHECK(f32_to_bf16(f(0x00028000)) == 0x0002); // tie between 2 and 3 -> 2
    CHECK(f32_to_bf16(f(0x00000001)) == 0x0000); // smallest fp32 denormal rounds to zero
    CHECK(f32_to_bf16(f(0x007FFFFF)) == 0x0080); // largest denormal rounds to the smallest normal
    CHECK(bf16_to_f32(0x0001) == std::ldexp(1.0f, -133)); // bf16 denormals are not flushed
    CHECK(f32_to_bf16(f(0x80018000)) == 0x8002);          // negative denormal keeps its sign
}

TEST_CASE("fp16 rounding, subnormals and overflow") {
    CHECK(f16_to_f32(f32_to_f16(65504.0f)) == 65504.0f);
    CHECK(f16_to_f32(f32_to_f16(65519.0f)) == 65504.0f);
    CHECK(std::isinf(f16_to_f32(f32_to_f16(65520.0f))));           // tie rounds to even = overflow
    CHECK(f32_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);     // tie -> 1.0
    CHECK(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02); // tie -> even
    CHECK(f32_to_f16(std::ldexp(1.0f, -24)) == 0x0001);            // smallest subnormal
    CHECK(f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);            // tie -> 0
    CHECK(f32_to_f16(3 * std::ldexp(1.0f, -26)) == 0x0001);        // above the tie
    CHECK(f32_to_f16(-0.0f) == 0x8000);
    CHECK(f16_to_f32(0x7E00) != f16_to_f32(0x7E00)); // NaN
}

TEST_CASE("tf32 keeps 10 mantissa bits with RNE") {
    CHECK(round_to_tf32(1.0f + std::ldexp(1.0f, -11)) == 1.0f);
    CHECK(round_to_tf32(1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));
    CHECK((bits(round_to_tf32(1.2345678f)) & 0x1fff) == 0);
    CHECK(std::isnan(round_to_tf32(NAN)));
}

TEST_CASE("fp8_e4m3 (Neuron legacy): range +-240, NaN outside, RNE inside") {
    CHECK(fp8e4m3_to_f32(f32_to_fp8e4m3(240.0f)) == 240.0f);
    CHECK(f32_to_fp8e4m3(240.0f) == 0x77);
    CHECK(fp8e4m3_to_f32(f32_to_fp8e4m3(239.0f)) == 240.0f);
    CHECK(std::isnan(fp8e4m3_to_f32(f32_to_fp8e4m3(240.5f)))); // outside +-240 -> NaN
    CHECK(std::isnan(fp8e4m3_to_f32(f32_to_fp8e4m3(-1000.0f))));
    CHECK(std::isnan(fp8e4m3_to_f32(f32_to_fp8e4m3(NAN))));
    CHECK(fp8e4m3_to_f32(f32_to_fp8e4m3(INFINITY)) == INFINITY);
    CHECK(fp8e4m3_to_f32(f32_to_fp8e4m3(1.0625f)) == 1.0f);  // tie -> even mantissa 0
    CHECK(fp8e4m3_to_f32(f32_to_fp8e4m3(1.1875f)) == 1.25f); // tie -> even mantissa 2
    CHECK(f32_to_fp8e4m3(std::ldexp(1.0f, -9)) == 0x01);     // smallest subnormal
    CHECK(f32_to_fp8e4m3(std::ldexp(1.0f, -10)) == 0x00);    // tie -> 0
    CHECK(f32_to_fp8e4m3(-0.5f) == 0xB0);
}

namespace {

/** The fp8_e4m3 code nearest |x| <= 240 by value, ties to the even code (an oracle that knows
 *  nothing of the encoder's bit arithmetic: it compares against every finite code's value). */
uint8_t nearest_e4m3_magnitude(float x) {
    const double a = std::fabs(double(x));
    uint8_t best = 0;
    for (uint8_t code = 1; code <= 0x77; code++) {
        double d = std::fabs(fp8e4m3_to_f32(code) - a),
               d_best = std::fabs(fp8e4m3_to_f32(best) - a);
        if (d < d_best || (d == d_best && (code & 1) == 0))
            best = code;
    }
    return best;
}

void check_encodes_to_nearest(float x) {
    uint8_t expected = uint8_t((std::signbit(x) ? 0x80 : 0) | nearest_e4m3_magnitude(x));
    INFO("x = " << x << " (bits " << std::hex << bits(x) << ")");
    CHECK(int(f32_to_fp8e4m3(x)) == int(expected));
}

} // namespace

TEST_CASE("fp8_e4m3 encodes every value within +-240 to the nearest code, ties to even") {
    // Each code's value, the midpoints between neighbours and the floats either side of them:
    // where rounding decides.
    for (uint8_t code = 0; code < 0x77; code++) {
        float lo = fp8e4m3_to_f32(code), hi = fp8e4m3_to_f32(uint8_t(code + 1));
        float mid = 0.5f * (lo + hi); // exact: neighbours differ in the low bits only
        for (float x : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1000.0f), hi}) {
            check_encodes_to_nearest(x);
            check_encodes_to_nearest(-x);
        }
    }
    // A sweep of the float space below 240, down to float denormals.
    for (uint32_t u = 0; u <= bits(240.0f); u += 40009) {
        check_encodes_to_nearest(f(u));
        check_encodes_to_nearest(-f(u));
    }
}

TEST_CASE("fp8_e5m2: IEEE-like, max 57344, overflow to inf") {
    CHECK(fp8e5m2_to_f32(f32_to_fp8e5m2(57344.0f)) == 57344.0f);
    CHECK(fp8e5m2_to_f32(f32_to_fp8e5m2(60000.0f)) == 57344.0f);
    CHECK(std::isinf(fp8e5m2_to_f32(f32_to_fp8e5m2(61440.0f)))); // tie -> even -> inf
    CHECK(fp8e5m2_to_f32(f32_to_fp8e5m2(1.125f)) == 1.0f);       // tie -> even
}

TEST_CASE("fp32 to integer: RNE with saturation") {
    CHECK(round_through(neff::DType::I32, 2.5f) == 2.0f);
    CHECK(round_through(neff::DType::I32, 3.5f) == 4.0f);
    CHECK(round_through(neff::DType::I32, -2.5f) == -2.0f);
    CHECK(round_through(neff::DType::I8, 300.0f) == 127.0f);
    CHECK(round_through(neff::DType::I8, -300.0f) == -128.0f);
    CHECK(round_through(neff::DType::U8, -1.0f) == 0.0f);
    CHECK(round_through(neff::DType::U16, 70000.0f) == 65535.0f);
    CHECK(round_through(neff::DType::I32, 1e10f) == 2147483647.0f);
    CHECK(round_through(neff::DType::I32, NAN) == 0.0f);
}
