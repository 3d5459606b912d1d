// The timing model: in-order engines, semaphore waits, DMA fixed latency plus bytes over
// bandwidth, the summary (MFU, busy fractions) and the trace. Speed goals live in bench/.

#include "BackendTest.h"

#include "runtime/Profile.h"
#include "target/Target.h"

#include <llvm/Support/JSON.h>

using namespace nhc;
using namespace nhc::test;
using neff::DType;

namespace {

/** n back-to-back matmuls [128x128] x [128x512] with operands already in SBUF. */
std::string matmul_stream(const char *dt, int n) {
    std::string s = ".target trn1\n.engine pe\n";
    int es = std::string(dt) == "f32" || std::string(dt) == "tf32" ? 4 : 2;
    for (int i = 0; i < n; i++) {
        s += "  matmul dst=psum.f32[0:128," + std::to_string((i % 8) * 2048) +
             "][[1,512]] stationary=" + sb(dt, 0, 128, 0, 128) +
             " moving=" + sb(dt, 0, 128, 128 * es, 512) + "\n";
    }
    return s;
}

/** One load of x [128, cols] (HBM, `src` dtype) into SBUF as `dst`, run alone. */
rt::Summary one_load(const char *src, DType src_type, int src_bytes, const char *dst,
                     int64_t cols) {
    std::string text = std::string(".target trn1\n.var x input ") + src + " [128," +
                       std::to_string(cols) +
                       "]\n.engine sp\n  dma queue=0 dst=" + sb(dst, 0, 128, 0, cols) +
                       " src=" + hbm2d(src, "x", 128, cols, src_bytes) + "\n";
    return run_text(text, {{"x", zeros(src_type, {128, cols})}}).summary;
}

} // namespace

TEST_CASE("a stream of matmuls runs at the PE's initiation interval") {
    const auto &t = target::target_by_name("trn1");
    auto bf = run_text(matmul_stream("bf16", 32), {}).summary;
    CHECK(bf.total_ns == doctest::Approx(32 * 512 / t.pe_ghz));
    CHECK(bf.mfu() == doctest::Approx(1.0));
    CHECK(bf.busy_fraction(neff::Engine::PE) == doctest::Approx(1.0));
    CHECK(bf.flops == 32 * 2.0 * 128 * 128 * 512);
    auto f32 = run_text(matmul_stream("f32", 32), {}).summary;
    CHECK(f32.total_ns == doctest::Approx(4 * bf.total_ns));
    CHECK(f32.mfu() == doctest::Approx(1.0)); // against the fp32 peak
    // tf32 runs at the bf16 rate (neuroncore.md L80, L142).
    auto tf32 = run_text(matmul_stream("tf32", 32), {}).summary;
    CHECK(tf32.total_ns == doctest::Approx(bf.total_ns));
    CHECK(tf32.mfu() == doctest::Approx(1.0));
}

TEST_CASE("DMA time is the fixed latency plus bytes over the engines' bandwidth") {
    const auto &t = target::target_by_name("trn1");
    auto s = one_load("bf16", DType::BF16, 2, "bf16", 32768);
    double bytes = 128.0 * 65536;
    CHECK(s.dma_bytes == int64_t(bytes));
    CHECK(s.total_ns == doctest::Approx(t.dma.fixed_latency_ns + bytes / 16 / t.dma.bytes_per_ns));
    CHECK(s.dma_busy_fraction() > 0.9);
}

TEST_CASE("semaphores order engines; in-order queues; dependent overhead") {
    const auto &t = target::target_by_name("trn1");
    // ACT runs 512 elements, then DVE (waiting on it) runs 512 elements twice; both DVE
    // instructions are dependent: b waited on a semaphore, c reads what b just wrote.
    const char *text = R"(.target trn1
.engine act
  activation dst=sbuf.f32[0:128,0][[1,512]] src=sbuf.f32[0:128,4096][[1,512]] func=exp signal=s0 name="a"
.engine dve
  tensor_scalar dst=sbuf.f32[0:128,8192][[1,512]] src=sbuf.f32[0:128,0][[1,512]] op0=mult s0=2 wait=s0>=1 name="b"
  tensor_scalar dst=sbuf.f32[0:128,8192][[1,512]] src=sbuf.f32[0:128,8192][[1,512]] op0=mult s0=2 name="c"
)";
    auto r = run_text(text, {}, true);
    double act = 512 / t.act_ghz;
    double dve_dep = (512 + t.dependent_overhead) / t.dve_ghz;
    CHECK(r.summary.total_ns == doctest::Approx(act + 2 * dve_dep));
    REQUIRE(r.trace.size() == 3);
    std::map<std::string, rt::TraceEvent> ev;
    for (const auto &e : r.trace) {
        ev[e.name] = e;
    }
    CHECK(ev.at("tensor_scalar b").start_ns == doctest::Approx(act));
    CHECK(ev.at("tensor_scalar c").start_ns == doctest::Approx(ev.at("tensor_scalar b").end_ns));
    CHECK(ev.at("activation a").track == "act");
}

TEST_CASE("summary JSON and Perfetto trace") {
    const char *text = R"(.target trn1
.var x input f32 [128,64]
.var y output f32 [128,64]
.engine sp
  dma queue=2 dst=sbuf.f32[0:128,0][[1,64]] src=hbm.f32[x,0][[256,128],[4,64]] signal=s0
  dma queue=3 dst=hbm.f32[y,0][[256,128],[4,64]] src=sbuf.f32[0:128,0][[1,64]] wait=s1>=1
.engine act
  activation dst=sbuf.f32[0:128,0][[1,64]] src=sbuf.f32[0:128,0][[1,64]] func=relu wait=s0>=1 signal=s1 name="model/relu_1"
)";
    auto r =
        run_text(text, {{"x", make_tensor(DType::F32, {128, 64}, random_floats(8192, 40))}}, true);
    const auto &t = target::target_by_name("trn1");
    auto js = llvm::json::parse(rt::summary_json(r.summary, t));
    REQUIRE(bool(js));
    const llvm::json::Object &o = *js->getAsObject();
    CHECK(o.getNumber("total_time_us").getValue() == doctest::Approx(r.summary.total_ns / 1000));
    CHECK(o.getNumber("mfu").getValue() == 0);
    CHECK(o.getInteger("dma_bytes").getValue() == 2 * 128 * 64 * 4);
    CHECK(o.getObject("engines")->getObject("act")->getNumber("busy_fraction").getValue() > 0);

    std::string trace = rt::trace_json(r.trace, "m");
    auto tj = llvm::json::parse(trace);
    REQUIRE(bool(tj));
    const llvm::json::Array *events = tj->getAsObject()->getArray("traceEvents");
    REQUIRE(events);
    int complete = 0;
    bool named = false;
    for (const auto &e : *events) {
        const auto *eo = e.getAsObject();
        if (eo->getString("ph").getValue() == "X") {
            complete++;
            named |= eo->getString("name").getValue() == "activation model/relu_1";
        }
    }
    CHECK(complete == 3);
    CHECK(named);
    CHECK(trace.find("\"dma q2\"") != std::string::npos);
    CHECK(rt::summary_text(r.summary, t).find("latency:") == 0);
}

// Issue 14: each mechanism below is documented in ../shared/reference/neuroncore.md and was missing
// from (or kinder than) the model before; each test fails on that model. docs/timing.md has a row
// per mechanism.

namespace {

/** `n` copies on one engine, each [128, F] f32; chained: each reads the previous one's result. */
std::string act_chain(int n, int f, bool chained) {
    std::string s = ".target trn1\n.engine act\n";
    for (int i = 0; i < n; i++) {
        int64_t src = chained ? int64_t(i) * 4 * f : 65536 + int64_t(i) * 4 * f;
        s += "  activation dst=" + sb("f32", 0, 128, int64_t(i + 1) * 4 * f, f) +
             " src=" + sb("f32", 0, 128, src, f) + " func=copy\n";
    }
    return s;
}

} // namespace

TEST_CASE("a casting DMA is charged the bytes it reads, not only those it writes") {
    // nc.md:L247: a DMA cast goes src -> fp32 -> dst, so an fp32 -> bf16 load reads 4 bytes per
    // element out of HBM; the old model charged the 2 bytes it writes.
    const auto &t = target::target_by_name("trn1");
    auto s = one_load("f32", DType::F32, 4, "bf16", 8192);
    double read_bytes = 128.0 * 8192 * 4;
    CHECK(s.dma_bytes == int64_t(read_bytes));
    CHECK(s.total_ns ==
          doctest::Approx(t.dma.fixed_latency_ns + read_bytes / 16 / t.dma.bytes_per_ns));
}

TEST_CASE("a dependent chain on one engine pays the static overhead of each link") {
    // nc.md:L161-162: dependent back-to-back instructions pay a static overhead; a dependent chain
    // of 1-element ACT instructions was measured at 189 ns = 264 ScalarE cycles per link. The old
    // model charged it only after a semaphore wait (a same-engine chain ran at MIN_II, 4x fast).
    const auto &t = target::target_by_name("trn1");
    auto chain = run_text(act_chain(8, 1, true), {}).summary;
    auto independent = run_text(act_chain(8, 1, false), {}).summary;
    CHECK(independent.total_ns == doctest::Approx(8 * t.min_ii / t.act_ghz));
    // The first link depends on nothing; each later one takes the measured 189 ns.
    CHECK(chain.total_ns == doctest::Approx((t.min_ii + 7 * 264.0) / t.act_ghz));
    CHECK(chain.total_ns / 7 > 189.0 * 7 / 8);
    // Large instructions pay the same fixed overhead, so it matters less.
    auto big = run_text(act_chain(4, 2048, true), {}).summary;
    CHECK(big.total_ns == doctest::Approx((4 * 2048 + 3 * t.dependent_overhead) / t.act_ghz));
}

TEST_CASE("NC-v2 engines share SBUF and PSUM ports; NC-v3 does not") {
    // nc.md:L227: on NC-v2 VectorE and GpSimdE cannot access SBUF at the same time, nor VectorE
    // and ScalarE PSUM; NC-v3 lifts both. Two independent [128, 2048] instructions.
    auto pair = [](const char *target, const std::string &a, const std::string &b) {
        return run_text(std::string(".target ") + target + "\n" + a + b, {}).summary.total_ns;
    };
    std::string dve_sbuf = ".engine dve\n  tensor_scalar dst=" + sb("f32", 0, 128, 0, 2048) +
                           " src=" + sb("f32", 0, 128, 8192, 2048) + " op0=mult s0=2\n";
    std::string pool_sbuf = ".engine pool\n  tensor_scalar dst=" + sb("f32", 0, 128, 16384, 2048) +
                            " src=" + sb("f32", 0, 128, 24576, 2048) + " op0=mult s0=2\n";
    std::string dve_psum_small = ".engine dve\n  tensor_scalar dst=" + sb("f32", 0, 128, 0, 512) +
                                 " src=" + sb("f32", 0, 128, 0, 512, "psum") + " op0=mult s0=2\n";
    std::string act_psum = ".engine act\n  activation dst=" + sb("f32", 0, 128, 32768, 512) +
                           " src=" + sb("f32", 0, 128, 2048, 512, "psum") + " func=exp\n";
    std::string act_sbuf = ".engine act\n  activation dst=" + sb("f32", 0, 128, 32768, 512) +
                           " src=" + sb("f32", 0, 128, 40960, 512) + " func=exp\n";
    auto solo = [](const char *target, const std::string &a) {
        return run_text(std::string(".target ") + target + "\n" + a, {}).summary.total_ns;
    };
    for (const char *name : {"trn1", "trn2"}) {
        bool v2 = target::target_by_name(name).version == target::CoreVersion::V2;
        auto serial_on_v2 = [&](const std::string &a, const std::string &b) {
            double sa = solo(name, a), sb = solo(name, b);
            return doctest::Approx(v2 ? sa + sb : std::max(sa, sb));
        };
        CAPTURE(name);
        CHECK(pair(name, dve_sbuf, pool_sbuf) == serial_on_v2(dve_sbuf, pool_sbuf));
        CHECK(pair(name, dve_psum_small, act_psum) == serial_on_v2(dve_psum_small, act_psum));
        // ScalarE on SBUF only does not contend with VectorE on PSUM.
        CHECK(pair(name, dve_psum_small, act_sbuf) ==
              doctest::Approx(std::max(solo(name, dve_psum_small), solo(name, act_sbuf))));
    }
    // NC-v3: VectorE and ScalarE contend for PSUM only within one bank.
    std::string act_psum_bank0 = ".engine act\n  activation dst=" + sb("f32", 0, 128, 32768, 512) +
                                 " src=" + sb("f32", 0, 128, 0, 512, "psum") + " func=exp\n";
    CHECK(pair("trn2", dve_psum_small, act_psum_bank0) ==
          doctest::Approx(solo("trn2", dve_psum_small) + solo("trn2", act_psum_bank0)));
}

TEST_CASE("transfers of one DMA queue complete in order") {
    // nc.md:L244: transfers within a queue are processed in order; a short transfer queued behind
    // a long one completes after it, even on a DMA engine of its own (partitions 64-71 are served
    // by engine 8, the long one by engines 0-7); the old model let it finish first.
    const char *text = R"(.target trn1
.var x input f32 [64,8192]
.var y input f32 [8,64]
.engine sp
  dma queue=0 dst=sbuf.f32[0:64,0][[1,8192]] src=hbm.f32[x,0][[32768,64],[4,8192]] signal=s0
  dma queue=0 dst=sbuf.f32[64:8,65536][[1,64]] src=hbm.f32[y,0][[256,8],[4,64]] signal=s1
.engine dve
  tensor_scalar dst=sbuf.f32[64:8,66048][[1,64]] src=sbuf.f32[64:8,65536][[1,64]] op0=mult s0=2 wait=s1>=1 name="use"
)";
    auto r = run_text(
        text, {{"x", zeros(DType::F32, {64, 8192})}, {"y", zeros(DType::F32, {8, 64})}}, true);
    double big_done = 0;
    for (const auto &e : r.trace) {
        if (e.track == "dma q0" && e.bytes == 64 * 8192 * 4) {
            big_done = e.end_ns;
        }
    }
    REQUIRE(big_done > 0);
    for (const auto &e : r.trace) {
        if (e.track == "dma q0" && e.bytes == 8 * 64 * 4) {
            CHECK(e.end_ns >= big_done);
        }
        if (e.name == "tensor_scalar use") {
            CHECK(e.start_ns >= big_done);
        }
    }
}

TEST_CASE("the DMA fixed cost is the upper end of the documented range") {
    // nc.md:L265: t_fixed ~1.3-2 us per transfer. A judge takes the upper end: a small transfer
    // cannot complete in less than 2 us (the old model used 1.3 us).
    const auto &t = target::target_by_name("trn1");
    CHECK(t.dma.fixed_latency_ns == 2000);
    auto s = run_text(R"(.target trn1
.var x input f32 [8,64]
.engine sp
  dma queue=0 dst=sbuf.f32[0:8,0][[1,64]] src=hbm.f32[x,0][[256,8],[4,64]]
)",
                      {{"x", zeros(DType::F32, {8, 64})}})
                 .summary;
    CHECK(s.total_ns >= 2000);
}

TEST_CASE("HBM bandwidth per NeuronCore caps the DMA engines together") {
    // nc.md:L211: ~362 GB/s of HBM per NC-v3 core, below 16 DMA engines x 23 B/ns (nc.md:L241):
    // a full-P load on trn2 runs at the HBM share of each busy engine, not at 23 B/ns. On trn1
    // 16 x 17 B/ns < 410 GB/s: the cap does not bind there.
    for (const char *name : {"trn1", "trn2"}) {
        const auto &t = target::target_by_name(name);
        std::string text = std::string(".target ") + name + R"(
.var x input f32 [128,8192]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,8192]] src=hbm.f32[x,0][[32768,128],[4,8192]]
)";
        auto s = run_text(text, {{"x", zeros(DType::F32, {128, 8192})}}).summary;
        double per_engine = 128.0 * 8192 * 4 / 16;
        double rate = std::min(t.dma.bytes_per_ns, t.hbm_bytes_per_ns / 16);
        CAPTURE(name);
        CHECK(s.total_ns == doctest::Approx(t.dma.fixed_latency_ns + per_engine / rate));
    }
    // trn2's cap binds: 362 / 16 = 22.6 B/ns per engine < 23.
    const auto &t2 = target::target_by_name("trn2");
    CHECK(t2.hbm_bytes_per_ns / t2.dma.num_engines < t2.dma.bytes_per_ns);
}
