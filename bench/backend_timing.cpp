// Timing benchmarks of the NeuronCore simulator (issue 3). Not a test: prints figures.
//  1. a stream of bf16 128x128x512 matmuls with operands already in SBUF: fraction of PE peak;
//  2. the same stream in fp32: slowdown against bf16 (expected 4x, nc.md:L143);
//  3. HBM->SBUF copies of growing size: achieved bandwidth against the configured DMA bandwidth;
//  4. the simulator's own speed: simulated GFLOP per host second.
// Usage: backend_bench [target] [matmuls]

#include "neff/Assembler.h"
#include "runtime/Numerics.h"
#include "runtime/Runtime.h"
#include "target/Target.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace nhc;

namespace {

std::string ap(const char *space, const char *dt, int p, int64_t off, int64_t n) {
    return std::string(space) + "." + dt + "[0:" + std::to_string(p) + "," + std::to_string(off) +
           "][[1," + std::to_string(n) + "]]";
}

neff::Program matmul_stream(const std::string &target, const char *dt, int es, int n) {
    std::string s = ".target " + target + "\n.name mm_stream\n.engine pe\n";
    for (int i = 0; i < n; i++) {
        // 8 stationary tiles and 8 PSUM banks in rotation, as a real kernel would use them.
        s += "  matmul dst=" + ap("psum", "f32", 128, (i % 8) * 2048, 512) +
             " stationary=" + ap("sbuf", dt, 128, (i % 8) * 128 * es, 128) +
             " moving=" + ap("sbuf", dt, 128, 8 * 128 * es + (i % 4) * 512 * es, 512) + "\n";
    }
    return neff::parse_program(s);
}

neff::Program big_copy(const std::string &target, int64_t bytes_per_partition) {
    int64_t n = bytes_per_partition / 2;
    std::string s =
        ".target " + target + "\n.name copy\n.var x input bf16 [128," + std::to_string(n) +
        "]\n.engine sp\n  dma queue=0 dst=" + ap("sbuf", "bf16", 128, 0, n) +
        " src=hbm.bf16[x,0][[" + std::to_string(2 * n) + ",128],[2," + std::to_string(n) + "]]\n";
    return neff::parse_program(s);
}

struct Timed {
    rt::Summary summary;
    double host_s;
};

Timed run(const neff::Program &p, const std::map<std::string, rt::Tensor> &in) {
    auto m = rt::Model::load_program(p);
    auto t0 = std::chrono::steady_clock::now();
    rt::ExecResult r = m->execute(in);
    auto t1 = std::chrono::steady_clock::now();
    return {r.summary, std::chrono::duration<double>(t1 - t0).count()};
}

} // namespace

int main(int argc, char **argv) {
    std::string target = argc > 1 ? argv[1] : "trn1";
    int n = argc > 2 ? std::atoi(argv[2]) : 512;
    const target::TargetInfo &t = target::target_by_name(target);

    Timed bf = run(matmul_stream(target, "bf16", 2, n), {});
    double peak = t.pe_peak_flops_per_ns(false, false);
    std::printf("[%s] bf16 matmul stream: %d x (128x128x512), %.3f us simulated, %.2f TFLOPS = "
                "%.4f of PE peak %.2f TFLOPS (MFU %.4f)\n",
                target.c_str(), n, bf.summary.total_ns / 1e3,
                bf.summary.flops / bf.summary.total_ns / 1e3,
                bf.summary.flops / bf.summary.total_ns / peak, peak / 1e3, bf.summary.mfu());
    Timed f32 = run(matmul_stream(target, "f32", 4, n), {});
    std::printf("[%s] fp32 matmul stream: %.3f us simulated, %.3fx the bf16 time\n", target.c_str(),
                f32.summary.total_ns / 1e3, f32.summary.total_ns / bf.summary.total_ns);

    double configured = t.dma.num_engines * t.dma.bytes_per_ns;
    for (int64_t per_partition :
         {int64_t(256), int64_t(2048), int64_t(32768), int64_t(160 * 1024)}) {
        neff::Program p = big_copy(target, per_partition);
        rt::Tensor x{neff::DType::BF16,
                     {128, per_partition / 2},
                     std::vector<uint8_t>(size_t(128 * per_partition), 0)};
        Timed c = run(p, {{"x", x}});
        double gbs = double(c.summary.dma_bytes) / c.summary.total_ns;
        std::printf("[%s] HBM->SBUF copy of %lld bytes (%lld per partition): %.3f us, %.1f GB/s = "
                    "%.3f of the configured %.0f GB/s\n",
                    target.c_str(), (long long)c.summary.dma_bytes, (long long)per_partition,
                    c.summary.total_ns / 1e3, gbs, gbs / configured, configured);
    }
    std::printf("[%s] simulator speed: bf16 stream %.2f simulated GFLOP in %.3f host s = %.1f "
                "simulated GFLOP per host second; fp32 stream %.1f\n",
                target.c_str(), bf.summary.flops / 1e9, bf.host_s,
                bf.summary.flops / 1e9 / bf.host_s, f32.summary.flops / 1e9 / f32.host_s);
    return 0;
}
