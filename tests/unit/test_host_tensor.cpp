#include "graph/HostTensor.h"

#include <cmath>
#include <cstring>
#include <doctest/doctest.h>

using namespace nhc;

TEST_CASE("half conversion rounds to nearest even and saturates to infinity") {
    CHECK(float_to_half(1.0f) == 0x3c00);
    CHECK(half_to_float(0x3c00) == 1.0f);
    // 1 + 2^-11 is exactly halfway between 1 and the next half (1 + 2^-10): ties go to even (1).
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
    // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even): rounds up.
    CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
    CHECK(float_to_half(65504.0f) == 0x7bff);
    CHECK(float_to_half(65520.0f) == 0x7c00); // rounds past the largest finite half
    CHECK(float_to_half(-1e9f) == 0xfc00);
    CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001); // smallest subnormal
    CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
    CHECK(std::isnan(half_to_float(float_to_half(NAN))));
}

TEST_CASE("bfloat16 conversion rounds to nearest even") {
    CHECK(float_to_bf16(1.0f) == 0x3f80);
    CHECK(bf16_to_float(0x3f80) == 1.0f);
    // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
    CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);
    CHECK(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
    CHECK(std::isnan(bf16_to_float(float_to_bf16(NAN))));
}

TEST_CASE("host tensor element access converts between dtypes") {
    HostTensor t(DType::Int32, {2, 3});
    CHECK(t.numel() == 6);
    CHECK(t.bytes().size() == 24);
    t.set_f64(4, -7.9);
    CHECK(t.get_i64(4) == -7); // float -> int truncates toward zero, as ONNX Cast does
    HostTensor b(DType::Bool, {1});
    b.set_i64(0, 42);
    CHECK(b.get_i64(0) == 1);
    CHECK(shape_str({1, 64, 256}) == "[1,64,256]");
}

TEST_CASE("converted() gives what element-wise set_f64(get_f64) gives, float32 or not") {
    // Rounding ties, both infinities, a NaN, subnormals and values past the fp16 range.
    const std::vector<float> values = {1.0f,
                                       1.0f + std::ldexp(1.0f, -8),
                                       1.0f + 3 * std::ldexp(1.0f, -8),
                                       1.0f + std::ldexp(1.0f, -11),
                                       -3.14159f,
                                       65520.0f,
                                       -1e9f,
                                       std::ldexp(1.0f, -140),
                                       INFINITY,
                                       -INFINITY,
                                       NAN,
                                       0.0f};
    HostTensor src(DType::Float32, {int64_t(values.size())});
    for (size_t i = 0; i < values.size(); i++)
        src.set_f64(int64_t(i), values[i]);
    HostTensor ints(DType::Int32, {3});
    for (int i = 0; i < 3; i++)
        ints.set_i64(i, i * 1000003 - 7);
    for (const HostTensor *from : {&src, &ints})
        for (DType to : {DType::BFloat16, DType::Float16, DType::TFloat32, DType::Float32}) {
            CAPTURE(dtype_name(from->dtype()));
            CAPTURE(dtype_name(to));
            HostTensor expected(to, from->shape());
            for (int64_t i = 0; i < from->numel(); i++)
                expected.set_f64(i, from->get_f64(i));
            HostTensor got = from->converted(to);
            CHECK(got.dtype() == to);
            CHECK(got.shape() == from->shape());
            CHECK(got.bytes() == expected.bytes());
        }
}

TEST_CASE("converted() to bf16 is float_to_bf16 on every bit pattern kind") {
    // Signalling and negative NaNs with payloads, the largest float (rounds to infinity), ties
    // to even both ways, subnormals, then a sweep of patterns from a fixed seed.
    std::vector<uint32_t> bits = {0x7f800001u, 0xffc00001u, 0x7fbfffffu, 0x7f7fffffu, 0x3f808000u,
                                  0x3f818000u, 0x00000001u, 0x807fffffu, 0x7f800000u, 0u};
    uint32_t x = 2024;
    for (int i = 0; i < 100000; i++) {
        x = x * 1664525u + 1013904223u;
        bits.push_back(x);
    }
    HostTensor src(DType::Float32, {int64_t(bits.size())});
    std::memcpy(src.mutable_bytes().data(), bits.data(), 4 * bits.size());
    HostTensor got = src.converted(DType::BFloat16);
    for (size_t i = 0; i < bits.size(); i++) {
        float f;
        std::memcpy(&f, &bits[i], 4);
        uint16_t expected = float_to_bf16(f), actual;
        std::memcpy(&actual, got.bytes().data() + 2 * i, 2);
        CAPTURE(bits[i]);
        REQUIRE(actual == expected);
    }
}

TEST_CASE("converted_when_read() is converted() made on first read; read_bytes makes any range") {
    auto source = std::make_shared<HostTensor>(DType::Float32, Shape{5, 7});
    HostTensor &f = *source;
    for (int64_t i = 0; i < f.numel(); i++)
        f.set_f64(i, std::ldexp(1.0 + double(i) / 37, int(i % 9) - 4) * (i % 3 ? 1 : -1));
    for (DType to : {DType::BFloat16, DType::Float16, DType::TFloat32}) {
        CAPTURE(dtype_name(to));
        const HostTensor eager = f.converted(to);
        HostTensor lazy = HostTensor::converted_when_read(source, to);
        CHECK(lazy.dtype() == to);
        CHECK(lazy.shape() == f.shape());
        REQUIRE(lazy.conversion_pending());
        // Every range, whole elements or not, from the source while the conversion is pending.
        const size_t size = eager.bytes().size();
        for (size_t at = 0; at < size; at++)
            for (size_t n : {size_t(1), size_t(3), size - at}) {
                if (at + n > size)
                    continue;
                std::vector<uint8_t> got(n);
                lazy.read_bytes(at, n, got.data());
                CHECK(std::memcmp(got.data(), eager.bytes().data() + at, n) == 0);
            }
        CHECK(lazy.conversion_pending());
        // A copy shares the conversion: reading one makes it for both.
        HostTensor copy = lazy;
        CHECK(copy.get_f64(11) == eager.get_f64(11));
        CHECK_FALSE(lazy.conversion_pending());
        CHECK(lazy.bytes() == eager.bytes());
        // Writing takes bytes of its own; the shared conversion stays as it was.
        copy.set_f64(0, 2.0);
        CHECK(copy.get_f64(0) == 2.0);
        CHECK(lazy.get_f64(0) == eager.get_f64(0));
    }
    // Not from float32: converted at once.
    auto ints = std::make_shared<HostTensor>(HostTensor::from_i64({1, 2, 3}, DType::Int32));
    CHECK_FALSE(HostTensor::converted_when_read(ints, DType::Float32).conversion_pending());
    // The source is shared, not copied: the pending tensor reads it where it is.
    HostTensor shared = HostTensor::converted_when_read(source, DType::BFloat16);
    CHECK(source.use_count() == 2);
}
