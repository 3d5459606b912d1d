// The libnrt-like API: tensor info, named inputs/outputs, status codes, input errors,
// semaphore deadlock, HBM capacity, and determinism of results.

#include "BackendTest.h"

#include "runtime/Profile.h"
#include "target/Target.h"

using namespace nhc;
using namespace nhc::test;
using neff::DType;

namespace {

std::unique_ptr<rt::Model> load(const std::string &text) {
    std::unique_ptr<rt::Model> m;
    rt::Result r = rt::nrt_load(neff::write_neff(neff::parse_program(text)), {}, m);
    REQUIRE(r.ok());
    return m;
}

} // namespace

TEST_CASE("load, tensor info by name, execute with named tensors, unload") {
    auto m = load(kAddOne);
    REQUIRE(m->tensors().size() == 2);
    rt::TensorInfo info;
    REQUIRE(rt::nrt_get_tensor_info(*m, "x", info).ok());
    CHECK(info.is_input);
    CHECK(info.dtype == DType::F32);
    CHECK(info.shape == std::vector<int64_t>{128, 16});
    CHECK(info.size == 128 * 16 * 4);
    REQUIRE(rt::nrt_get_tensor_info(*m, "y", info).ok());
    CHECK(!info.is_input);
    rt::Result r = rt::nrt_get_tensor_info(*m, "z", info);
    CHECK(r.code == "NHC_ERT014");
    CHECK(r.status == rt::NRT_INVALID);

    auto x = random_floats(128 * 16, 30);
    rt::ExecResult out;
    REQUIRE(rt::nrt_execute(*m, {{"x", make_tensor(DType::F32, {128, 16}, x)}}, {}, out).ok());
    auto y = values(out.outputs.at("y"));
    for (size_t i = 0; i < y.size(); i++) {
        REQUIRE(y[i] == x[i] + 1.0f);
    }
    // A second run on the same model gives the same outputs and the same time.
    rt::ExecResult again;
    REQUIRE(rt::nrt_execute(*m, {{"x", make_tensor(DType::F32, {128, 16}, x)}}, {}, again).ok());
    CHECK(again.outputs.at("y").data == out.outputs.at("y").data);
    CHECK(again.summary.total_ns == out.summary.total_ns);
    rt::nrt_unload(m);
    CHECK(m == nullptr);
}

TEST_CASE("missing, unknown and misshapen inputs are NRT_EXEC_BAD_INPUT") {
    auto m = load(kAddOne);
    rt::ExecResult out;
    auto good = make_tensor(DType::F32, {128, 16}, std::vector<float>(2048, 0.0f));
    rt::Result r = rt::nrt_execute(*m, {}, {}, out);
    CHECK(r.code == "NHC_ERT001");
    CHECK(r.status == rt::NRT_EXEC_BAD_INPUT);
    r = rt::nrt_execute(*m, {{"x", good}, {"q", good}}, {}, out);
    CHECK(r.code == "NHC_ERT002");
    CHECK(r.status == rt::NRT_EXEC_BAD_INPUT);
    r = rt::nrt_execute(*m, {{"y", good}}, {}, out); // an output is not an input
    CHECK(r.code == "NHC_ERT002");
    r = rt::nrt_execute(*m, {{"x", make_tensor(DType::F32, {16, 128}, std::vector<float>(2048))}},
                        {}, out);
    CHECK(r.code == "NHC_ERT003");
    CHECK(r.status == rt::NRT_EXEC_BAD_INPUT);
    r = rt::nrt_execute(*m, {{"x", make_tensor(DType::F16, {128, 16}, std::vector<float>(2048))}},
                        {}, out);
    CHECK(r.code == "NHC_ERT003");
}

TEST_CASE("a semaphore deadlock is reported, never a hang") {
    const char *text = R"(.target trn1
.engine pe
  nop wait=s1>=1 signal=s0
.engine act
  nop wait=s0>=1 signal=s1
.engine dve
  nop signal=s2
  nop wait=s2>=2
)";
    rt::ExecResult out;
    auto m = rt::Model::load_program(neff::parse_program(text));
    rt::Result r = rt::nrt_execute(*m, {}, {}, out);
    CHECK(r.code == "NHC_ERT007");
    CHECK(r.status == rt::NRT_TIMEOUT);
    CHECK(r.message.find("pe instruction 0 (nop) waits for s1>=1 (is 0)") != std::string::npos);
    CHECK(r.message.find("dve instruction 1 (nop) waits for s2>=2 (is 1)") != std::string::npos);
}

TEST_CASE("capacity and target checks") {
    neff::Program big = neff::parse_program(".target inf2\n.var h scratch f32 [4294967296,2]\n");
    CHECK_CODE(rt::Model::load_program(big)->execute({}), "NHC_ERT017");
    CHECK(rt::status_for_code("NHC_ERT017") == rt::NRT_RESOURCE);
    CHECK_CODE(target::target_by_name("trn9"), "NHC_ERT016");
}

TEST_CASE("instructions run in semaphore order whatever the stream order") {
    // DVE writes b = a * 2 only after ACT wrote a = x + 1; then POOL reads b.
    const char *text = R"(.target trn1
.var x input f32 [128,8]
.var y output f32 [128,8]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,8]] src=hbm.f32[x,0][[32,128],[4,8]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[32,128],[4,8]] src=sbuf.f32[0:128,64][[1,8]] wait=s3>=1
.engine pool
  tensor_scalar dst=sbuf.f32[0:128,64][[1,8]] src=sbuf.f32[0:128,32][[1,8]] op0=add s0=3 wait=s2>=1 signal=s3
.engine dve
  tensor_scalar dst=sbuf.f32[0:128,32][[1,8]] src=sbuf.f32[0:128,0][[1,8]] op0=mult s0=2 wait=s1>=1 signal=s2
.engine act
  tensor_scalar dst=sbuf.f32[0:128,0][[1,8]] src=sbuf.f32[0:128,0][[1,8]] op0=add s0=1 wait=s0>=1 signal=s1
)";
    auto x = random_floats(128 * 8, 31);
    auto y = values(run_text(text, {{"x", make_tensor(DType::F32, {128, 8}, x)}}).outputs.at("y"));
    for (size_t i = 0; i < y.size(); i++) {
        REQUIRE(y[i] == (x[i] + 1.0f) * 2.0f + 3.0f);
    }
}

TEST_CASE("status names") {
    CHECK(std::string(rt::nrt_status_name(rt::NRT_UNSUPPORTED_NEFF_VERSION)) ==
          "NRT_UNSUPPORTED_NEFF_VERSION");
    CHECK(rt::status_for_code("NHC_ENEFF002") == rt::NRT_UNSUPPORTED_NEFF_VERSION);
    CHECK(rt::status_for_code("NHC_ERT012") == rt::NRT_FAILURE);
}

TEST_CASE("the profile table: each group adds the time since the groups before it ended") {
    // Three groups: A ends at 10 us, B at 20 (it overlaps A), C at 30 after a gap; an
    // instruction without a source name is "(unnamed)".
    std::vector<rt::TraceEvent> ev = {{"pe", "matmul A", 0, 0, 10000, 0},
                                      {"dma q0", "dma A", 0, 0, 5000, 4096},
                                      {"act", "activation B", 0, 8000, 20000, 0},
                                      {"dve", "tensor_copy C", 0, 25000, 30000, 0},
                                      {"pool", "iota", 0, 1000, 2000, 0}};
    std::vector<rt::ProfileRow> rows = rt::profile_rows(ev);
    REQUIRE(rows.size() == 4);
    double total = 0;
    for (const rt::ProfileRow &r : rows)
        total += r.adds_ns;
    CHECK(total == 30000); // the latency: the last end
    // Largest adds first; B before C, which add as much, as B finishes first.
    CHECK(rows[0].group == "B");
    CHECK(rows[0].adds_ns == 10000);
    CHECK(rows[0].busy_ns[int(neff::Engine::ACT)] == 12000);
    CHECK(rows[1].group == "C");
    CHECK(rows[1].adds_ns == 10000);
    CHECK(rows[2].group == "A");
    CHECK(rows[2].adds_ns == 8000); // after "(unnamed)", which ended at 2 us
    CHECK(rows[2].busy_ns[int(neff::Engine::PE)] == 10000);
    CHECK(rows[2].dma_queue_ns == 5000);
    CHECK(rows[3].group == "(unnamed)");
    CHECK(rows[3].adds_ns == 2000);
    std::string table = rt::profile_table(ev, 2);
    CHECK(table.find("where the time goes") != std::string::npos);
    CHECK(table.find("  B\n") != std::string::npos);
    CHECK(table.find("in 2 more groups") != std::string::npos);
}
