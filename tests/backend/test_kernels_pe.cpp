// Hand-written Tensor-engine kernels against an fp64 reference: a tiled matmul accumulating in
// PSUM over K > 128, fp32 and fp8 matmuls, the PE transpose (v2 and v3 semantics) and the PE
// rule violations.

#include "BackendTest.h"

#include <cmath>

using namespace nhc;
using namespace nhc::test;
using neff::DType;

namespace {

/** C[M,N] = At[K,M].T @ B[K,N] in K/128 tiles accumulated in one PSUM bank. */
std::string tiled_matmul(const char *dt, int es, int K, int M, int N) {
    int kt = K / 128;
    std::string s = std::string(".target trn1\n.name tiled\n") + ".var at input " + dt + " [" +
                    std::to_string(K) + "," + std::to_string(M) + "]\n.var b input " + dt + " [" +
                    std::to_string(K) + "," + std::to_string(N) + "]\n.var c output f32 [" +
                    std::to_string(M) + "," + std::to_string(N) + "]\n.engine sp\n";
    int64_t a_base = 0, b_base = int64_t(kt) * M * es, c_base = b_base + int64_t(kt) * N * es;
    for (int k = 0; k < kt; k++) {
        s += "  dma queue=" + std::to_string(k % 4) +
             " dst=" + sb(dt, 0, 128, a_base + k * M * es, M) +
             " src=" + hbm2d(dt, "at", 128, M, es, k * 128) + " signal=s0\n";
        s += "  dma queue=" + std::to_string(4 + k % 4) +
             " dst=" + sb(dt, 0, 128, b_base + k * N * es, N) +
             " src=" + hbm2d(dt, "b", 128, N, es, k * 128) + " signal=s0\n";
    }
    s += "  dma queue=8 dst=" + hbm2d("f32", "c", M, N, 4) + " src=" + sb("f32", 0, M, c_base, N) +
         " wait=s2>=1\n.engine pe\n";
    for (int k = 0; k < kt; k++) {
        s += "  matmul dst=" + sb("f32", 0, M, 0, N, "psum") +
             " stationary=" + sb(dt, 0, 128, a_base + k * M * es, M) +
             " moving=" + sb(dt, 0, 128, b_base + k * N * es, N) + (k ? " accumulate" : "") +
             (k == 0 ? " wait=s0>=" + std::to_string(2 * kt) : "") +
             (k == kt - 1 ? " signal=s1" : "") + "\n";
    }
    s += ".engine act\n  activation dst=" + sb("f32", 0, M, c_base, N) +
         " src=" + sb("f32", 0, M, 0, N, "psum") + " func=copy wait=s1>=1 signal=s2\n";
    return s;
}

void check_matmul(DType dt, const char *dts, int es, int K, int M, int N, double rel_tol) {
    auto a = rounded(dt, random_floats(size_t(K * M), 1));
    auto b = rounded(dt, random_floats(size_t(K * N), 2));
    auto r = run_text(tiled_matmul(dts, es, K, M, N),
                      {{"at", make_tensor(dt, {K, M}, a)}, {"b", make_tensor(dt, {K, N}, b)}});
    auto c = values(r.outputs.at("c"));
    double worst = 0;
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                ref += double(a[size_t(k * M + m)]) * b[size_t(k * N + n)];
                mag += std::fabs(double(a[size_t(k * M + m)]) * b[size_t(k * N + n)]);
            }
            worst = std::max(worst, std::fabs(c[size_t(m * N + n)] - ref) / mag);
        }
    }
    MESSAGE("worst |c - ref| / sum|a*b| = " << worst);
    CHECK(worst <= rel_tol);
    CHECK(r.summary.flops == 2.0 * K * M * N);
}

} // namespace

TEST_CASE("tiled bf16 matmul accumulates over K = 384 in PSUM (fp64 reference)") {
    // fp32 accumulation of K products: error bound K * 2^-24 relative to sum |a*b|.
    check_matmul(DType::BF16, "bf16", 2, 384, 128, 512, 384 * std::ldexp(1.0, -24));
}

TEST_CASE("fp32, fp16 and fp8 matmuls against fp64") {
    check_matmul(DType::F32, "f32", 4, 256, 64, 96, 256 * std::ldexp(1.0, -24));
    check_matmul(DType::F16, "f16", 2, 128, 128, 128, 128 * std::ldexp(1.0, -24));
    check_matmul(DType::FP8E4M3, "fp8e4m3", 1, 128, 32, 64, 128 * std::ldexp(1.0, -24));
}

TEST_CASE("a missing accumulate flag overwrites PSUM") {
    // Same kernel, but the second matmul overwrites: the result is the last k-tile only.
    std::string s = tiled_matmul("bf16", 2, 256, 128, 128);
    size_t pos = s.find(" accumulate");
    REQUIRE(pos != std::string::npos);
    s.erase(pos, 11);
    auto a = rounded(DType::BF16, random_floats(256 * 128, 3));
    auto b = rounded(DType::BF16, random_floats(256 * 128, 4));
    auto c = values(run_text(s, {{"at", make_tensor(DType::BF16, {256, 128}, a)},
                                 {"b", make_tensor(DType::BF16, {256, 128}, b)}})
                        .outputs.at("c"));
    double ref = 0;
    for (int k = 128; k < 256; k++) {
        ref += double(a[size_t(k * 128 + 5)]) * b[size_t(k * 128 + 7)];
    }
    CHECK(c[5 * 128 + 7] == doctest::Approx(ref).epsilon(1e-5));
}

namespace {

std::string transpose_kernel(const char *target) {
    return std::string(".target ") + target + R"(
.var x input f32 [128,96]
.var y output f32 [96,128]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,96]] src=hbm.f32[x,0][[384,128],[4,96]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[512,96],[4,128]] src=sbuf.f32[0:96,1024][[1,128]] wait=s2>=1
.engine pe
  transpose dst=psum.f32[0:96,0][[1,128]] src=sbuf.f32[0:128,0][[1,96]] wait=s0>=1 signal=s1
.engine dve
  tensor_copy dst=sbuf.f32[0:96,1024][[1,128]] src=psum.f32[0:96,0][[1,128]] wait=s1>=1 signal=s2
)";
}

} // namespace

TEST_CASE("PE transpose: exact values; v2 spreads NaN/Inf along the row and drops -0") {
    auto x = random_floats(128 * 96, 5, -100, 100);
    x[3 * 96 + 10] = INFINITY; // column 10 -> output row 10
    x[7 * 96 + 20] = -0.0f;    // column 20
    for (const char *t : {"trn1", "trn2"}) {
        auto y =
            values(run_text(transpose_kernel(t), {{"x", make_tensor(DType::F32, {128, 96}, x)}})
                       .outputs.at("y"));
        bool v2 = std::string(t) == "trn1";
        for (int f = 0; f < 96; f++) {
            for (int p = 0; p < 128; p++) {
                float got = y[size_t(f * 128 + p)], want = x[size_t(p * 96 + f)];
                if (f == 10 && v2) {
                    CHECK(std::isnan(got)); // the matmul with the identity poisons the row
                } else if (!(got == want)) {
                    CHECK(got == want);
                }
            }
        }
        CHECK(std::signbit(y[20 * 128 + 7]) == !v2); // -0 survives only v3's exact transpose
        CHECK(std::isnan(y[10 * 128 + 3]) == v2);
    }
}

TEST_CASE("PE rule violations are coded runtime errors") {
    auto one = [](const std::string &mm) {
        std::string s = ".target trn1\n.engine pe\n  " + mm + "\n";
        return run_text(s, {});
    };
    const std::string st = " stationary=sbuf.bf16[0:128,0][[1,128]]";
    const std::string mv = " moving=sbuf.bf16[0:128,256][[1,512]]";
    CHECK_CODE(one("matmul dst=psum.f32[0:128,1024][[1,512]]" + st + mv), "NHC_ERT006"); // bank
    CHECK_CODE(one("matmul dst=psum.f32[0:128,14336][[1,1024]]" + st + mv), "NHC_ERT006");
    CHECK_CODE(one("matmul dst=sbuf.f32[0:128,0][[1,512]]" + st + mv), "NHC_ERT009");
    CHECK_CODE(one("matmul dst=psum.bf16[0:128,0][[1,512]]" + st + mv), "NHC_ERT010");
    CHECK_CODE(
        one("matmul dst=psum.f32[0:128,0][[1,512]]" + st + " moving=sbuf.f32[0:128,256][[1,512]]"),
        "NHC_ERT010"); // fp32 must pair with fp32
    CHECK_CODE(
        one("matmul dst=psum.f32[0:128,0][[1,512]] stationary=sbuf.i8[0:128,0][[1,128]]" + mv),
        "NHC_ERT010");
    CHECK_CODE(
        one("matmul dst=psum.f32[0:128,0][[1,512]] stationary=sbuf.bf16[0:128,0][[1,256]]" + mv),
        "NHC_ERT011"); // M > 128
    CHECK_CODE(one("matmul dst=psum.f32[0:128,0][[1,1024]]" + st +
                   " moving=sbuf.bf16[0:128,256][[1,1024]]"),
               "NHC_ERT011"); // N > 512 (checked before the bank)
    CHECK_CODE(
        one("matmul dst=psum.f32[0:128,0][[1,512]]" + st + " moving=sbuf.bf16[0:64,256][[1,512]]"),
        "NHC_ERT008"); // K differs
    CHECK_CODE(one("matmul dst=psum.f32[0:128,0][[1,512]]" + st +
                   " moving=sbuf.bf16[0:128,180000][[1,512]]"),
               "NHC_ERT004"); // past the usable SBUF of a partition
    CHECK_CODE(one("transpose dst=psum.f32[0:64,0][[1,128]] src=sbuf.f32[0:128,0][[1,32]]"),
               "NHC_ERT008");
}
