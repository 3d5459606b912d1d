// Hand-written ACT / DVE / Pool kernels against fp64 (or exactly rounded fp32) references: every
// activation function with scale, bias and accumulate; tensor_tensor, tensor_scalar, reductions,
// select, iota, affine_select, partition_reduce, memset and casts.

#include "VectorKernel.h"

#include <cmath>

using namespace nhc;
using namespace nhc::test;
using neff::ActFunc;
using neff::DType;

namespace {

constexpr int P = 128, F = 64;

double ref_act(ActFunc f, double x) {
    auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    auto sp = [](double v) { return std::log(1 + std::exp(v)); };
    switch (f) {
    case ActFunc::Copy:
        return x;
    case ActFunc::Square:
        return x * x;
    case ActFunc::Sigmoid:
        return sig(x);
    case ActFunc::Relu:
        return std::max(x, 0.0);
    case ActFunc::Prelu:
        return x > 0 ? x : 0.25 * x;
    case ActFunc::Gelu:
        return x * 0.5 * std::erfc(-x / std::sqrt(2.0));
    case ActFunc::GeluDx:
        return 0.5 * std::erfc(-x / std::sqrt(2.0)) +
               x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
    case ActFunc::GeluApprxTanh:
        return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case ActFunc::GeluApprxSigmoid:
        return x * sig(1.702 * x);
    case ActFunc::GeluApprxSigmoidDx: {
        double s = sig(1.702 * x);
        return s + 1.702 * x * s * (1 - s);
    }
    case ActFunc::Silu:
        return x * sig(x);
    case ActFunc::SiluDx:
        return sig(x) * (1 + x * (1 - sig(x)));
    case ActFunc::Tanh:
        return std::tanh(x);
    case ActFunc::Softplus:
        return sp(x);
    case ActFunc::Mish:
        return x * std::tanh(sp(x));
    case ActFunc::Erf:
        return std::erf(x);
    case ActFunc::ErfDx:
        return 2 / std::sqrt(M_PI) * std::exp(-x * x);
    case ActFunc::Exp:
        return std::exp(x);
    case ActFunc::Sign:
        return (x > 0) - (x < 0);
    case ActFunc::Abs:
        return std::fabs(x);
    case ActFunc::Log:
        return std::log(x);
    case ActFunc::Sin:
        return std::sin(x);
    case ActFunc::Arctan:
        return std::atan(x);
    case ActFunc::Sqrt:
        return std::sqrt(x);
    case ActFunc::Rsqrt:
        return 1 / std::sqrt(x);
    case ActFunc::Reciprocal:
        return 1 / x;
    }
    return 0;
}

bool positive_domain(ActFunc f) {
    return f == ActFunc::Log || f == ActFunc::Sqrt || f == ActFunc::Rsqrt ||
           f == ActFunc::Reciprocal;
}

} // namespace

TEST_CASE("every activation function: func(x * scale + bias) with a free-axis accumulate") {
    for (int fi = 0; fi < neff::kNumActFuncs; fi++) {
        ActFunc f = ActFunc(fi);
        CAPTURE(neff::act_func_name(f));
        bool pos = positive_domain(f);
        // sin and arctan are only valid on [-pi, pi] and [-pi/2, pi/2] (nc.md §3.4).
        float lim = (f == ActFunc::Sin || f == ActFunc::Arctan) ? 2.5f : 6.0f;
        auto x = random_floats(P * F, uint32_t(10 + fi), pos ? 0.4f : -lim, pos ? 16.0f : lim);
        auto bias = random_floats(P * F, uint32_t(50 + fi), pos ? 0.05f : -0.5f, pos ? 0.1f : 0.5f);
        // Output row: F activations, then the accumulated sum at element F.
        std::string lines = "  activation dst=" + sb("f32", 0, P, 65536, F) +
                            " src=" + sb("f32", 0, P, 0, F) + " func=" + neff::act_func_name(f) +
                            " scale=0.5 bias=sbuf.f32[0:128,32768][[1,1]] alpha=0.25 accum=" +
                            sb("f32", 0, P, 65536 + 4 * F, 1) + "\n";
        auto y = run_vector("act", lines, P, F, x, bias, "f32", F + 1);
        double worst = 0, worst_sum = 0;
        for (int p = 0; p < P; p++) {
            double sum = 0, mag = 0;
            for (int i = 0; i < F; i++) {
                float in = x[size_t(p * F + i)] * 0.5f;
                in = in + bias[size_t(p * F)];
                double ref = ref_act(f, in);
                double got = y[size_t(p * (F + 1) + i)];
                worst = std::max(worst, std::fabs(got - ref) / std::max(1e-6, std::fabs(ref)));
                sum += ref;
                mag += std::fabs(ref);
            }
            worst_sum = std::max(worst_sum,
                                 std::fabs(y[size_t(p * (F + 1) + F)] - sum) / std::max(1e-6, mag));
        }
        CHECK(worst < 1e-6);
        CHECK(worst_sum < 1e-6);
    }
}

TEST_CASE("tensor_tensor operators in fp32, rounded RNE to a bf16 destination") {
    auto a = random_floats(P * F, 3, -4, 4), b = random_floats(P * F, 4, 0.5f, 3);
    struct Case {
        const char *op;
        float (*f)(float, float);
    };
    const Case cases[] = {
        {"add", [](float u, float v) { return u + v; }},
        {"subtract", [](float u, float v) { return u - v; }},
        {"mult", [](float u, float v) { return u * v; }},
        {"divide", [](float u, float v) { return u / v; }},
        {"max", [](float u, float v) { return std::max(u, v); }},
        {"min", [](float u, float v) { return std::min(u, v); }},
        {"pow", [](float u, float v) { return std::pow(std::fabs(u), v); }},
        {"is_gt", [](float u, float v) { return u > v ? 1.0f : 0.0f; }},
    };
    for (const auto &c : cases) {
        CAPTURE(c.op);
        std::string opnd =
            std::string(c.op) == "pow" ? "sbuf.f32[0:128,16384][[1,64]]" : sb("f32", 0, P, 0, F);
        std::string lines;
        if (std::string(c.op) == "pow") { // |a| first so that pow stays real
            lines +=
                "  tensor_scalar dst=sbuf.f32[0:128,16384][[1,64]] src=" + sb("f32", 0, P, 0, F) +
                " op0=abs_max s0=0\n";
        }
        lines += "  tensor_tensor dst=" + sb("bf16", 0, P, 65536, F) + " src=" + opnd +
                 " src1=" + sb("f32", 0, P, 32768, F) + " op=" + c.op + "\n";
        auto y = run_vector("dve", lines, P, F, a, b, "bf16", F);
        int bad = 0;
        for (size_t i = 0; i < y.size(); i++) {
            bad += y[i] != rt::round_through(DType::BF16, c.f(a[i], b[i]));
        }
        CHECK(bad == 0);
    }
}

TEST_CASE("tensor_scalar with per-partition and immediate scalars, reversed operands") {
    auto a = random_floats(P * F, 5, 0.5f, 4), s = random_floats(P * F, 6, -2, 2);
    std::string lines = "  tensor_scalar dst=" + sb("f32", 0, P, 65536, F) +
                        " src=" + sb("f32", 0, P, 0, F) +
                        " op0=mult s0=sbuf.f32[0:128,32768][[1,1]] op1=add s1=3\n";
    auto y = run_vector("dve", lines, P, F, a, s, "f32", F);
    int bad = 0;
    for (int p = 0; p < P; p++) {
        for (int i = 0; i < F; i++) {
            bad += y[size_t(p * F + i)] != a[size_t(p * F + i)] * s[size_t(p * F)] + 3.0f;
        }
    }
    CHECK(bad == 0);
    // 1 / x through reverse0 on the scalar engine (ACT allows mult/add only: use mult then DVE).
    lines = "  tensor_scalar dst=" + sb("f32", 0, P, 65536, F) + " src=" + sb("f32", 0, P, 0, F) +
            " op0=divide s0=1 reverse0\n";
    y = run_vector("pool", lines, P, F, a, s, "f32", F);
    bad = 0;
    for (size_t i = 0; i < y.size(); i++) {
        bad += y[i] != 1.0f / a[i];
    }
    CHECK(bad == 0);
    CHECK_CODE(run_vector("act",
                          "  tensor_scalar dst=" + sb("f32", 0, P, 65536, F) +
                              " src=" + sb("f32", 0, P, 0, F) + " op0=divide s0=2\n",
                          P, F, a, s, "f32", F),
               "NHC_ERT018");
}

TEST_CASE("tensor_reduce over trailing axes, with negate and a bf16 source") {
    auto a = random_floats(P * F, 7, -3, 3);
    // [P, 4, 16] -> add over the last axis -> [P, 4]
    std::string lines = "  tensor_reduce dst=" + sb("f32", 0, P, 65536, 4) +
                        " src=sbuf.f32[0:128,0][[16,4],[1,16]] op=add axes=1\n";
    auto y = run_vector("dve", lines, P, F, a, a, "f32", 4);
    double worst = 0;
    for (int p = 0; p < P; p++) {
        for (int g = 0; g < 4; g++) {
            double ref = 0;
            for (int k = 0; k < 16; k++) {
                ref += a[size_t(p * F + g * 16 + k)];
            }
            worst = std::max(worst, std::fabs(y[size_t(p * 4 + g)] - ref));
        }
    }
    CHECK(worst < 1e-5);
    // max over all free elements, negated
    lines = "  tensor_reduce dst=" + sb("f32", 0, P, 65536, 1) + " src=" + sb("f32", 0, P, 0, F) +
            " op=max negate\n";
    y = run_vector("dve", lines, P, F, a, a, "f32", 1);
    for (int p = 0; p < P; p += 17) {
        float mx = *std::max_element(a.begin() + p * F, a.begin() + (p + 1) * F);
        CHECK(y[size_t(p)] == -mx);
    }
    // bf16 in and out: the sum of bf16 values, rounded once to bf16
    lines = "  tensor_copy dst=" + sb("bf16", 0, P, 16384, F) + " src=" + sb("f32", 0, P, 0, F) +
            "\n  tensor_reduce dst=" + sb("bf16", 0, P, 65536, 1) +
            " src=" + sb("bf16", 0, P, 16384, F) + " op=add\n";
    y = run_vector("dve", lines, P, F, a, a, "bf16", 1);
    auto ab = rounded(DType::BF16, a);
    float s0 = 0;
    for (int i = 0; i < F; i++) {
        s0 += ab[size_t(i)];
    }
    CHECK(y[0] == rt::round_through(DType::BF16, s0));
    CHECK_CODE(run_vector("dve",
                          "  tensor_reduce dst=" + sb("f32", 0, P, 65536, 1) +
                              " src=" + sb("f32", 0, P, 0, F) + " op=divide\n",
                          P, F, a, a, "f32", 1),
               "NHC_ERT018");
}

TEST_CASE("select, memset, iota, affine_select, partition_reduce and casting copies") {
    auto a = random_floats(P * F, 8, -3, 3), b = random_floats(P * F, 9, -3, 3);
    // select(a > b ? a : b) == max(a, b)
    std::string lines = "  tensor_tensor dst=" + sb("u8", 0, P, 16384, F) +
                        " src=" + sb("f32", 0, P, 0, F) + " src1=" + sb("f32", 0, P, 32768, F) +
                        " op=is_gt\n  select dst=" + sb("f32", 0, P, 65536, F) +
                        " pred=" + sb("u8", 0, P, 16384, F) + " on_true=" + sb("f32", 0, P, 0, F) +
                        " on_false=" + sb("f32", 0, P, 32768, F) + "\n";
    auto y = run_vector("dve", lines, P, F, a, b, "f32", F);
    int bad = 0;
    for (size_t i = 0; i < y.size(); i++) {
        bad += y[i] != std::max(a[i], b[i]);
    }
    CHECK(bad == 0);

    y = run_vector("pool", "  memset dst=" + sb("f32", 0, P, 65536, F) + " value=-2.5\n", P, F, a,
                   b, "f32", F);
    CHECK(std::count(y.begin(), y.end(), -2.5f) == P * F);

    // iota: value = 3 + 100 * p + 2 * i, written as int32
    y = run_vector("pool", "  iota dst=" + sb("i32", 0, P, 65536, F) + " pattern=[3,100,[2]]\n", P,
                   F, a, b, "i32", F);
    CHECK(y[0] == 3);
    CHECK(y[size_t(5 * F + 7)] == 3 + 500 + 14);

    // causal mask: keep where p - i >= 0, else -inf
    y = run_vector("pool",
                   "  affine_select dst=" + sb("f32", 0, P, 65536, F) + " src=" +
                       sb("f32", 0, P, 0, F) + " pattern=[0,1,[-1]] cmp=is_ge fill=-inf\n",
                   P, F, a, b, "f32", F);
    CHECK(y[size_t(10 * F + 10)] == a[size_t(10 * F + 10)]);
    CHECK(y[size_t(10 * F + 11)] == -INFINITY);

    // partition_reduce: max over the 128 partitions into one row
    y = run_vector("pool",
                   "  partition_reduce dst=sbuf.f32[0:1,65536][[1,64]] src=" +
                       sb("f32", 0, P, 0, F) + " op=max\n",
                   P, F, a, b, "f32", F);
    for (int i = 0; i < F; i += 9) {
        float mx = -INFINITY;
        for (int p = 0; p < P; p++) {
            mx = std::max(mx, a[size_t(p * F + i)]);
        }
        CHECK(y[size_t(i)] == mx);
    }

    // fp32 -> int8 copy: RNE with saturation
    auto big = random_floats(P * F, 10, -400, 400);
    y = run_vector("dve",
                   "  tensor_copy dst=" + sb("i8", 0, P, 65536, F) +
                       " src=" + sb("f32", 0, P, 0, F) + "\n",
                   P, F, big, b, "i8", F);
    bad = 0;
    for (size_t i = 0; i < y.size(); i++) {
        bad += y[i] != std::max(-128.0f, std::min(127.0f, std::nearbyint(big[i])));
    }
    CHECK(bad == 0);
}

TEST_CASE("vector rule violations are coded runtime errors") {
    auto a = random_floats(P * F, 11);
    auto vec = [&](const std::string &engine, const std::string &line) {
        return run_vector(engine, "  " + line + "\n", P, F, a, a, "f32", F);
    };
    // both inputs in PSUM
    CHECK_CODE(
        vec("dve", "tensor_tensor dst=" + sb("f32", 0, P, 65536, F) +
                       " src=psum.f32[0:128,0][[1,64]] src1=psum.f32[0:128,2048][[1,64]] op=add"),
        "NHC_ERT009");
    // GpSimd cannot reach PSUM
    CHECK_CODE(vec("pool", "memset dst=psum.f32[0:128,0][[1,64]] value=0"), "NHC_ERT009");
    // shape mismatch
    CHECK_CODE(vec("dve", "tensor_copy dst=" + sb("f32", 0, P, 65536, F) +
                              " src=" + sb("f32", 0, P, 0, 32)),
               "NHC_ERT008");
    // 33 partitions must start at 0 or 64; 129 partitions do not exist
    CHECK_CODE(vec("dve", "memset dst=sbuf.f32[32:33,0][[1,4]] value=0"), "NHC_ERT005");
    CHECK_CODE(vec("dve", "memset dst=sbuf.f32[0:129,0][[1,4]] value=0"), "NHC_ERT005");
    CHECK_CODE(vec("dve", "memset dst=sbuf.f32[0:128,180220][[1,2]] value=0"), "NHC_ERT004");
    CHECK_CODE(vec("dve", "memset dst=psum.f32[0:128,2000][[1,32]] value=0"), "NHC_ERT006");
    // Partitions, counts and steps past what 32 or 64 bits hold (a NEFF from a stranger): refused,
    // not wrapped into range (found by tests/fuzz's NEFF target).
    CHECK_CODE(vec("dve", "memset dst=sbuf.f32[2147483647:2147483647,0][[1,4]] value=0"),
               "NHC_ERT005");
    CHECK_CODE(vec("dve", "memset dst=sbuf.f32[0:128,0][[4611686018427387904,3]] value=0"),
               "NHC_ERT004");
    CHECK_CODE(vec("dve", "memset dst=psum.f32[0:128,0][[-4611686018427387904,3]] value=0"),
               "NHC_ERT006");
    // an immediate bias needs NeuronCore-v3
    CHECK_CODE(vec("act", "activation dst=" + sb("f32", 0, P, 65536, F) +
                              " src=" + sb("f32", 0, P, 0, F) + " func=exp bias=1"),
               "NHC_ERT018");
    CHECK_NOTHROW(run_vector("act",
                             "  activation dst=" + sb("f32", 0, P, 65536, F) +
                                 " src=" + sb("f32", 0, P, 0, F) + " func=exp bias=1\n",
                             P, F, a, a, "f32", F, "trn2"));
    // bitvec operators are not implemented yet
    CHECK_CODE(vec("dve", "tensor_tensor dst=" + sb("f32", 0, P, 65536, F) +
                              " src=" + sb("f32", 0, P, 0, F) + " src1=" + sb("f32", 0, P, 0, F) +
                              " op=bitwise_and"),
               "NHC_ERT012");
}
