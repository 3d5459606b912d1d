// The calibration of the timing model (issue 4, docs/timing.md): timing-only mode, the DMA row
// efficiency, the calibration kernels' values, and the calibrated bands of the four NKI matmul
// tutorial versions (calibration.md card MM) at full size. Simulated time is deterministic, so
// the bands are asserted exactly; the simulator's host speed is a benchmark (calibration_bench).

#include "BackendTest.h"

#include "calibration_mm.h"
#include "target/CostModel.h"
#include "target/Target.h"

#include <cmath>

using namespace nhc;
using namespace nhc::test;
using bench::MmVersion;
using neff::DType;

namespace {

rt::ExecResult run_mm(MmVersion v, const bench::MmShape &s,
                      const std::map<std::string, rt::Tensor> &in, bool timing_only) {
    auto m = rt::Model::load_program(bench::build_mm(v, s));
    rt::ExecOptions o;
    o.timing_only = timing_only;
    o.check_races = true;
    return m->execute(in, o);
}

} // namespace

TEST_CASE("DMA row efficiency: flat up to 1 KiB, saturated from 4 KiB, fitted on card MM") {
    const auto &t = target::target_by_name("trn1");
    double e = t.dma.small_row_efficiency;
    // The fit: MM0-MM2's pooled 12.15 GB in 116.83 ms over 16 x 17 B/ns (Target.cpp).
    CHECK(e == doctest::Approx(11584.0 * 1024 * 1024 / 116.83e6 / 272).epsilon(1e-9));
    CHECK(e == doctest::Approx(0.382).epsilon(0.002));
    CHECK(target::dma_row_efficiency(t, 256) == doctest::Approx(e));
    CHECK(target::dma_row_efficiency(t, 1024) == doctest::Approx(e));
    CHECK(target::dma_row_efficiency(t, 2048) == doctest::Approx(e + (1 - e) / 2));
    CHECK(target::dma_row_efficiency(t, 4096) == 1);
    CHECK(target::dma_row_efficiency(t, 65536) == 1);
    // A 64 B row costs as much as a 256 B row (nc.md:L256).
    target::DmaShare tiny{0, 8 * 64, 8}, small{0, 8 * 256, 8};
    CHECK(target::dma_engine_ns(t, tiny) == doctest::Approx(target::dma_engine_ns(t, small)));
    CHECK(target::dma_engine_ns(t, small) == doctest::Approx(8 * 256 / (17 * e)));
}

TEST_CASE("timing-only mode: same summary as a functional run, no values, inputs optional") {
    const bench::MmShape s{2048, 1024, 1024};
    auto lhsT = random_floats(size_t(s.k * s.m), 70), rhs = random_floats(size_t(s.k * s.n), 71);
    std::map<std::string, rt::Tensor> in = {{"lhsT", make_tensor(DType::BF16, {s.k, s.m}, lhsT)},
                                            {"rhs", make_tensor(DType::BF16, {s.k, s.n}, rhs)}};
    for (int v = 0; v < bench::kNumMmVersions; v++) {
        std::string name = bench::mm_name(MmVersion(v));
        CAPTURE(name);
        auto f = run_mm(MmVersion(v), s, in, false);
        auto t = run_mm(MmVersion(v), s, {}, true);
        CHECK(t.outputs.empty());
        CHECK(t.summary.total_ns == f.summary.total_ns);
        CHECK(t.summary.dma_bytes == f.summary.dma_bytes);
        CHECK(t.summary.flops == f.summary.flops);
        for (int e = 0; e < neff::kNumEngines; e++) {
            CHECK(t.summary.busy_ns[e] == f.summary.busy_ns[e]);
        }
        // The kernel computes result = lhsT.T @ rhs (bf16 in, fp32 PSUM, bf16 out).
        std::vector<float> y = values(f.outputs.at("result"));
        auto a = rounded(DType::BF16, lhsT), b = rounded(DType::BF16, rhs);
        double worst = 0;
        for (int64_t m = 0; m < s.m; m += 97) {
            for (int64_t n = 0; n < s.n; n += 31) {
                double ref = 0;
                for (int64_t k = 0; k < s.k; k++) {
                    ref += double(a[size_t(k * s.m + m)]) * b[size_t(k * s.n + n)];
                }
                // Relative to one bf16 rounding of the result (half an ulp is 2^-9 relative).
                double err =
                    std::fabs(y[size_t(m * s.n + n)] - ref) / std::max(std::fabs(ref), 1.0);
                worst = std::max(worst, err);
            }
        }
        CHECK(worst < 1.0 / 256);
    }
}

TEST_CASE("timing-only mode still checks every instruction") {
    const char *text = R"(.target trn1
.engine pe
  matmul dst=psum.f32[0:128,1024][[1,512]] stationary=sbuf.bf16[0:128,0][[1,128]] moving=sbuf.bf16[0:128,256][[1,512]]
)";
    auto m = rt::Model::load_program(neff::parse_program(text));
    rt::ExecOptions o;
    o.timing_only = true;
    CHECK_CODE(m->execute({}, o), "NHC_ERT006"); // crosses a PSUM bank
}

TEST_CASE("calibration: the NKI matmul tutorial versions land in their bands on trn1") {
    // Full size (M = 4096, K = 8192, N = 8192), timing only: well under a second each.
    double sim[bench::kNumMmVersions], pub[bench::kNumMmVersions];
    for (int v = 0; v < bench::kNumMmVersions; v++) {
        std::string name = bench::mm_name(MmVersion(v));
        CAPTURE(name);
        rt::Summary s = run_mm(MmVersion(v), {}, {}, true).summary;
        sim[v] = s.total_ns / 1e6;
        pub[v] = bench::mm_published_ms(MmVersion(v));
        MESSAGE(name, ": simulated ", sim[v], " ms, published ", pub[v]);
        CHECK(s.flops == doctest::Approx(549.76e9).epsilon(1e-4));
        CHECK(sim[v] >= 0.75 * pub[v]);
        CHECK(sim[v] <= 1.25 * pub[v]);
    }
    // Ordering, and each ratio of consecutive versions within 25% of the published ratio.
    for (int v = 0; v + 1 < bench::kNumMmVersions; v++) {
        CHECK(sim[v] > sim[v + 1]);
        double r = (sim[v] / sim[v + 1]) / (pub[v] / pub[v + 1]);
        CHECK(r == doctest::Approx(1.0).epsilon(0.25));
    }
    // MM3 runs near the TensorE floor of 5.99 ms (32,768 x 512 cycles at 2.8 GHz).
    CHECK(sim[3] > 5.99);
}
