// Race detection (issue 14, runtime/RaceDetector.h): accesses to the same bytes, one a write, that
// no semaphore chain orders are NHC_ERT019, even when the simulated order happens to be right.

#include "BackendTest.h"

using namespace nhc;
using namespace nhc::test;
using neff::DType;

namespace {

rt::ExecResult run_checked(const std::string &text, const std::map<std::string, rt::Tensor> &in) {
    auto m = rt::Model::load_program(neff::parse_program(text));
    rt::ExecOptions o;
    o.check_races = true;
    return m->execute(in, o);
}

std::string race_message(const std::string &text, const std::map<std::string, rt::Tensor> &in) {
    try {
        run_checked(text, in);
    } catch (const UserError &e) {
        CHECK(std::string(e.code()) == "NHC_ERT019");
        return e.what();
    }
    return "";
}

std::map<std::string, rt::Tensor> x_input() {
    return {{"x", make_tensor(DType::F32, {128, 64}, random_floats(128 * 64, 3))}};
}

} // namespace

TEST_CASE("two engines writing the same SBUF bytes without a semaphore race") {
    std::string text = ".target trn1\n.engine act\n  activation dst=" + sb("f32", 0, 128, 0, 64) +
                       " src=" + sb("f32", 0, 128, 4096, 64) + " func=exp name=\"node/a\"\n" +
                       ".engine dve\n  tensor_scalar dst=" + sb("f32", 0, 128, 128, 64) +
                       " src=" + sb("f32", 0, 128, 8192, 64) + " op0=mult s0=2 name=\"node/b\"\n";
    std::string msg = race_message(text, {});
    CHECK(msg.find("node/a") != std::string::npos);
    CHECK(msg.find("node/b") != std::string::npos);
    CHECK(msg.find("sbuf partitions [0, 128) bytes [128, 256)") != std::string::npos);
    // Ordered by a semaphore: no race.
    std::string synced = ".target trn1\n.engine act\n  activation dst=" + sb("f32", 0, 128, 0, 64) +
                         " src=" + sb("f32", 0, 128, 4096, 64) + " func=exp signal=s0\n" +
                         ".engine dve\n  tensor_scalar dst=" + sb("f32", 0, 128, 128, 64) +
                         " src=" + sb("f32", 0, 128, 8192, 64) + " op0=mult s0=2 wait=s0>=1\n";
    CHECK_NOTHROW(run_checked(synced, {}));
    // Disjoint partitions or bytes: no race.
    std::string disjoint =
        ".target trn1\n.engine act\n  activation dst=" + sb("f32", 0, 64, 0, 64) +
        " src=" + sb("f32", 0, 64, 4096, 64) +
        " func=exp\n.engine dve\n  tensor_scalar dst=" + sb("f32", 64, 64, 0, 64) +
        " src=" + sb("f32", 64, 64, 8192, 64) + " op0=mult s0=2\n";
    CHECK_NOTHROW(run_checked(disjoint, {}));
}

TEST_CASE("reading a DMA's destination before waiting for it is a race") {
    const char *racy = R"(.target trn1
.var x input f32 [128,64]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,64]] src=hbm.f32[x,0][[256,128],[4,64]] signal=s0 name="load"
.engine dve
  tensor_scalar dst=sbuf.f32[0:128,4096][[1,64]] src=sbuf.f32[0:128,0][[1,64]] op0=mult s0=2 name="use"
)";
    std::string msg = race_message(racy, x_input());
    CHECK(msg.find("the DMA transfer of sp instruction 0") != std::string::npos);
    CHECK(msg.find("use") != std::string::npos);
    const char *ok = R"(.target trn1
.var x input f32 [128,64]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,64]] src=hbm.f32[x,0][[256,128],[4,64]] signal=s0
.engine dve
  tensor_scalar dst=sbuf.f32[0:128,4096][[1,64]] src=sbuf.f32[0:128,0][[1,64]] op0=mult s0=2 wait=s0>=1
)";
    CHECK_NOTHROW(run_checked(ok, x_input()));
}

TEST_CASE("transfers of one queue are not ordered for data; completions are") {
    // The second transfer reads what the first writes: both may be moving at once on different
    // DMA engines, so the queue's order does not order them.
    const char *racy = R"(.target trn1
.var x input f32 [128,64]
.var y output f32 [128,64]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,64]] src=hbm.f32[x,0][[256,128],[4,64]]
  dma queue=0 dst=hbm.f32[y,0][[256,128],[4,64]] src=sbuf.f32[0:128,0][[1,64]]
)";
    CHECK(race_message(racy, x_input()).find("queue 0") != std::string::npos);
    // Waiting for the first transfer's completion orders them.
    const char *ok = R"(.target trn1
.var x input f32 [128,64]
.var y output f32 [128,64]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,64]] src=hbm.f32[x,0][[256,128],[4,64]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[256,128],[4,64]] src=sbuf.f32[0:128,0][[1,64]] wait=s0>=1
)";
    CHECK_NOTHROW(run_checked(ok, x_input()));
}

TEST_CASE("happens-before is transitive through semaphore chains") {
    // ACT writes, DVE waits for ACT, Pool waits for DVE and overwrites: ordered.
    std::string text =
        ".target trn1\n.engine act\n  activation dst=" + sb("f32", 0, 128, 0, 64) +
        " src=" + sb("f32", 0, 128, 4096, 64) + " func=exp signal=s0\n" +
        ".engine dve\n  tensor_scalar dst=" + sb("f32", 0, 128, 8192, 64) +
        " src=" + sb("f32", 0, 128, 12288, 64) + " op0=mult s0=2 wait=s0>=1 signal=s1\n" +
        ".engine pool\n  memset dst=" + sb("f32", 0, 128, 0, 64) + " value=1 wait=s1>=1\n";
    CHECK_NOTHROW(run_checked(text, {}));
}

TEST_CASE("interleaved strided accesses do not overlap") {
    // ACT writes the even elements of a range; DVE writes every other element from byte
    // `dve_offset`: at 4 the odd ones (boxes overlap, elements do not), at 8 the even ones again.
    auto pair = [](int dve_offset) {
        return ".target trn1\n.engine act\n  activation dst=sbuf.f32[0:128,0][[2,32]] src=" +
               sb("f32", 0, 128, 4096, 32) + " func=exp\n.engine dve\n" +
               "  tensor_scalar dst=sbuf.f32[0:128," + std::to_string(dve_offset) +
               "][[2,32]] src=" + sb("f32", 0, 128, 8192, 32) + " op0=mult s0=2\n";
    };
    CHECK_NOTHROW(run_checked(pair(4), {}));
    CHECK(!race_message(pair(8), {}).empty());
}

TEST_CASE("stores of a tensor's column tiles interleave rows without overlapping") {
    // Two queues store the left and the right half of each row of y (128 B runs, 256 B apart):
    // their boxes overlap, their bytes do not. One element further left, they share a column.
    auto stores = [](int second_offset) {
        return std::string(R"(.target trn1
.var y output f32 [64,64]
.engine sp
  dma queue=0 dst=hbm.f32[y,0][[256,64],[4,32]] src=sbuf.f32[0:64,0][[1,32]]
  dma queue=1 dst=hbm.f32[y,)") +
               std::to_string(second_offset) + R"(][[256,64],[4,32]] src=sbuf.f32[0:64,128][[1,32]]
)";
    };
    CHECK_NOTHROW(run_checked(stores(128), {}));
    CHECK(race_message(stores(124), {}).find("hbm") != std::string::npos);
}
