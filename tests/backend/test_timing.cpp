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
    const char *text = R"(.target trn1
.var x input bf16 [128,32768]
.engine sp
  dma queue=0 dst=sbuf.bf16[0:128,0][[1,32768]] src=hbm.bf16[x,0][[65536,128],[2,32768]]
)";
    auto s =
        run_text(text,
                 {{"x", make_tensor(DType::BF16, {128, 32768}, std::vector<float>(128 * 32768))}})
            .summary;
    double bytes = 128.0 * 65536;
    CHECK(s.dma_bytes == int64_t(bytes));
    CHECK(s.total_ns == doctest::Approx(t.dma.fixed_latency_ns + bytes / 16 / t.dma.bytes_per_ns));
    CHECK(s.dma_busy_fraction() > 0.9);
}

TEST_CASE("semaphores order engines; in-order queues; dependent overhead") {
    const auto &t = target::target_by_name("trn1");
    // ACT runs 512 elements, then DVE (waiting on it) runs 512 elements twice.
    const char *text = R"(.target trn1
.engine act
  activation dst=sbuf.f32[0:128,0][[1,512]] src=sbuf.f32[0:128,4096][[1,512]] func=exp signal=s0 name="a"
.engine dve
  tensor_scalar dst=sbuf.f32[0:128,8192][[1,512]] src=sbuf.f32[0:128,0][[1,512]] op0=mult s0=2 wait=s0>=1 name="b"
  tensor_scalar dst=sbuf.f32[0:128,8192][[1,512]] src=sbuf.f32[0:128,8192][[1,512]] op0=mult s0=2 name="c"
)";
    auto r = run_text(text, {}, true);
    double act = 512 / t.act_ghz;
    double dve_dep = (512 + t.dependent_overhead) / t.dve_ghz, dve = 512 / t.dve_ghz;
    CHECK(r.summary.total_ns == doctest::Approx(act + dve_dep + dve));
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
