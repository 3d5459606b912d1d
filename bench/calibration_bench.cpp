// The calibration suite (issue 4): simulates the four NKI matmul tutorial versions (calibration.md
// card MM) at full size on trn1 in timing-only mode and prints simulated against published time,
// the ratios between versions, and the simulator's host seconds per version. A benchmark: the
// bands themselves are asserted by tests/backend/test_calibration.cpp. Then the out-of-sample
// check of the one fitted constant (docs/timing.md "The fit"): the DMA row-efficiency level is
// fitted on three versions and the fourth is predicted with it, for each version in turn.
// Usage: calibration_bench [target]

#include "calibration_mm.h"

#include "runtime/Machine.h"
#include "runtime/Runtime.h"
#include "runtime/Simulator.h"
#include "target/Target.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace nhc;
using bench::MmVersion;

namespace {

/** Simulated ms of each version (timing only) with the target's row efficiency set to `eff`. */
std::vector<double> simulate_with_efficiency(const std::vector<neff::Program> &programs,
                                             const target::TargetInfo &base, double eff) {
    target::TargetInfo t = base;
    t.dma.small_row_efficiency = eff;
    std::vector<double> ms;
    for (const auto &p : programs) {
        rt::Machine m(t, p, /*functional=*/false);
        ms.push_back(rt::simulate(m).summary.total_ns / 1e6);
    }
    return ms;
}

/** Sum of squared log errors over the versions in `fit` (log: a ratio error counts the same on
 *  a 7 ms and a 52 ms kernel). */
double fit_error(const std::vector<double> &ms, const std::vector<int> &fit) {
    double e = 0;
    for (int v : fit) {
        double r = std::log(ms[size_t(v)] / bench::mm_published_ms(MmVersion(v)));
        e += r * r;
    }
    return e;
}

/** Leave one out: for each version, the efficiency that best fits the other three (golden
 *  section on [0.05, 1]; the error is unimodal in it), and that version's prediction error. */
void leave_one_out(const std::string &target) {
    std::vector<neff::Program> programs;
    for (int v = 0; v < bench::kNumMmVersions; v++) {
        programs.push_back(bench::build_mm(MmVersion(v), {}, target));
    }
    const target::TargetInfo &base = target::target_by_name(target);
    std::printf("\nout of sample: row efficiency fitted on three versions, the fourth predicted\n");
    std::printf("%-20s %10s %10s %10s %8s %12s\n", "held out", "fitted eff", "published",
                "predicted", "error", "in-sample");
    std::vector<double> in_sample =
        simulate_with_efficiency(programs, base, base.dma.small_row_efficiency);
    for (int held = 0; held < bench::kNumMmVersions; held++) {
        std::vector<int> fit;
        for (int v = 0; v < bench::kNumMmVersions; v++) {
            if (v != held) {
                fit.push_back(v);
            }
        }
        auto error_at = [&](double eff) {
            return fit_error(simulate_with_efficiency(programs, base, eff), fit);
        };
        const double golden = (std::sqrt(5.0) - 1) / 2;
        double lo = 0.05, hi = 1.0;
        double a = hi - golden * (hi - lo), b = lo + golden * (hi - lo);
        double ea = error_at(a), eb = error_at(b);
        for (int it = 0; it < 30; it++) {
            if (ea < eb) {
                hi = b, b = a, eb = ea;
                a = hi - golden * (hi - lo), ea = error_at(a);
            } else {
                lo = a, a = b, ea = eb;
                b = lo + golden * (hi - lo), eb = error_at(b);
            }
        }
        double eff = (lo + hi) / 2;
        double pred = simulate_with_efficiency(programs, base, eff)[size_t(held)];
        double pub = bench::mm_published_ms(MmVersion(held));
        std::printf("%-20s %10.3f %10.2f %10.2f %+7.1f%% %+11.1f%%\n",
                    bench::mm_name(MmVersion(held)), eff, pub, pred, 100 * (pred / pub - 1),
                    100 * (in_sample[size_t(held)] / pub - 1));
    }
}

} // namespace

int main(int argc, char **argv) {
    std::string target = argc > 1 ? argv[1] : "trn1";
    double sim_ms[bench::kNumMmVersions];
    std::printf("%-20s %10s %10s %8s %9s %8s %8s %8s %10s %9s\n", "version", "published",
                "simulated", "error", "DMA GB/s", "PE busy", "DVE busy", "DMAs", "instrs",
                "host s");
    for (int v = 0; v < bench::kNumMmVersions; v++) {
        auto t0 = std::chrono::steady_clock::now();
        neff::Program p = bench::build_mm(MmVersion(v), {}, target);
        auto model = rt::Model::load_program(std::move(p));
        auto t1 = std::chrono::steady_clock::now();
        rt::ExecOptions eo;
        eo.timing_only = true;
        rt::Summary s = model->execute({}, eo).summary;
        auto t2 = std::chrono::steady_clock::now();
        int64_t instrs = 0;
        for (int e = 0; e < neff::kNumEngines; e++) {
            instrs += s.instructions[e];
        }
        sim_ms[v] = s.total_ns / 1e6;
        double pub = bench::mm_published_ms(MmVersion(v));
        std::printf("%-20s %10.2f %10.2f %+7.1f%% %9.1f %8.3f %8.3f %8lld %10lld %9.2f"
                    "  (build+load %.2f s)\n",
                    bench::mm_name(MmVersion(v)), pub, sim_ms[v], 100 * (sim_ms[v] / pub - 1),
                    double(s.dma_bytes) / s.total_ns, s.busy_fraction(neff::Engine::PE),
                    s.busy_fraction(neff::Engine::DVE), (long long)s.dma_transfers,
                    (long long)instrs, std::chrono::duration<double>(t2 - t1).count(),
                    std::chrono::duration<double>(t1 - t0).count());
    }
    for (int v = 0; v + 1 < bench::kNumMmVersions; v++) {
        double pub =
            bench::mm_published_ms(MmVersion(v)) / bench::mm_published_ms(MmVersion(v + 1));
        double sim = sim_ms[v] / sim_ms[v + 1];
        std::printf("ratio MM%d/MM%d: published %.3f simulated %.3f (%+.1f%%)\n", v, v + 1, pub,
                    sim, 100 * (sim / pub - 1));
    }
    // Independent cross-check, not calibrated on (calibration.md card MM, nki-autotune#25: the same
    // MM3 kernel timed with torch-xla sync overhead). Only M = 4096 shapes: larger M needs the
    // single-buffered SBUF plan of the real kernel.
    struct Extra {
        bench::MmShape s;
        double ms;
    };
    for (const Extra &x : {Extra{{4096, 4096, 4096}, 2.694}, Extra{{4096, 4096, 8192}, 3.538},
                           Extra{{4096, 8192, 4096}, 3.539}, Extra{{4096, 8192, 8192}, 6.991}}) {
        auto model =
            rt::Model::load_program(bench::build_mm(MmVersion::FullyOptimized, x.s, target));
        rt::ExecOptions eo;
        eo.timing_only = true;
        double ms = model->execute({}, eo).summary.total_ns / 1e6;
        std::printf(
            "cross-check MM3 (M,K,N)=(%lld,%lld,%lld): user-measured %.3f ms, simulated %.3f "
            "(%+.1f%%)\n",
            (long long)x.s.m, (long long)x.s.k, (long long)x.s.n, x.ms, ms, 100 * (ms / x.ms - 1));
    }
    leave_one_out(target);
    return 0;
}
