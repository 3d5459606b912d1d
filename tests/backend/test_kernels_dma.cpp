// DMA patterns: casts through fp32, strided (transposing) reads, 3-D/4-D patterns, partition
// broadcast, HBM->HBM, and DMA rule violations.

#include "BackendTest.h"

#include "runtime/Status.h"

#include <cmath>
#include <cstring>

using namespace nhc;
using namespace nhc::test;
using neff::DType;

TEST_CASE("DMA casts: f32 -> bf16 in SBUF -> f32, and f32 -> fp8 -> f16") {
    auto x = random_floats(128 * 32, 20, -300, 300);
    auto r = run_text(R"(.target trn1
.var x input f32 [128,32]
.var y output f32 [128,32]
.var z output f16 [128,32]
.engine sp
  dma queue=0 dst=sbuf.bf16[0:128,0][[1,32]] src=hbm.f32[x,0][[128,128],[4,32]] signal=s0
  dma queue=1 dst=sbuf.fp8e4m3[0:128,64][[1,32]] src=hbm.f32[x,0][[128,128],[4,32]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[128,128],[4,32]] src=sbuf.bf16[0:128,0][[1,32]] wait=s0>=2
  dma queue=1 dst=hbm.f16[z,0][[64,128],[2,32]] src=sbuf.fp8e4m3[0:128,64][[1,32]] wait=s0>=2
)",
                      {{"x", make_tensor(DType::F32, {128, 32}, x)}});
    auto y = values(r.outputs.at("y")), z = values(r.outputs.at("z"));
    int bad_y = 0, bad_z = 0, nan_z = 0;
    for (size_t i = 0; i < x.size(); i++) {
        bad_y += y[i] != rt::round_through(DType::BF16, x[i]);
        float e = rt::round_through(DType::FP8E4M3, x[i]);
        if (std::isnan(e)) {
            nan_z += std::isnan(z[i]); // outside +-240: NaN, and it stays NaN in fp16
        } else {
            bad_z += z[i] != e;
        }
    }
    CHECK(bad_y == 0);
    CHECK(bad_z == 0);
    CHECK(nan_z > 0);
    // Each transfer is charged the larger of its element sizes (a cast reads the source).
    CHECK(r.summary.dma_bytes == 128 * 32 * (4 + 4 + 4 + 2));
}

TEST_CASE("DMA access patterns: transposing read, 3-D pattern, HBM to HBM") {
    // y[i, j] = x[j, i] for x [64, 32]: 32 partitions each reading a column (step 128 B).
    auto x = random_floats(64 * 32, 21);
    auto r = run_text(R"(.target trn1
.var x input f32 [64,32]
.var y output f32 [32,64]
.var w output f32 [64,32]
.var v output f32 [2,32,32]
.engine sp
  dma queue=0 dst=sbuf.f32[0:32,0][[1,64]] src=hbm.f32[x,0][[4,32],[128,64]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[256,32],[4,64]] src=sbuf.f32[0:32,0][[1,64]] wait=s0>=1
  dma queue=1 dst=hbm.f32[w,0][[128,64],[4,32]] src=hbm.f32[x,0][[128,64],[4,32]]
  dma queue=2 dst=hbm.f32[v,0][[128,32],[4096,2],[4,32]] src=hbm.f32[x,0][[128,64],[4,32]]
)",
                      {{"x", make_tensor(DType::F32, {64, 32}, x)}});
    auto y = values(r.outputs.at("y")), w = values(r.outputs.at("w")),
         v = values(r.outputs.at("v"));
    int bad = 0;
    for (int i = 0; i < 32; i++) {
        for (int j = 0; j < 64; j++) {
            bad += y[size_t(i * 64 + j)] != x[size_t(j * 32 + i)];
        }
    }
    CHECK(bad == 0);
    CHECK(w == x);
    // v[h, r, c] = x[h * 32 + r, c]: rows 0..31 of x to v[0], rows 32..63 to v[1]... via a
    // [32 rows] x [2 blocks] x [32 cols] destination pattern fed by 64 source rows in order.
    bad = 0;
    for (int r2 = 0; r2 < 32; r2++) {
        for (int h = 0; h < 2; h++) {
            for (int c = 0; c < 32; c++) {
                // source element index = ((r2 * 2 + h) * 32 + c) in row-major order of x
                bad += v[size_t(h * 1024 + r2 * 32 + c)] != x[size_t((r2 * 2 + h) * 32 + c)];
            }
        }
    }
    CHECK(bad == 0);
}

TEST_CASE("DMA partition broadcast from one row, with and without a cast") {
    auto x = random_floats(16, 22);
    auto r = run_text(R"(.target trn1
.var x input f32 [1,16]
.var y output f32 [128,16]
.var z output f32 [128,16]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,16]] src=hbm.f32[x,0][[0,128],[4,16]] signal=s0
  dma queue=1 dst=sbuf.bf16[0:128,64][[1,16]] src=hbm.f32[x,0][[64,1],[4,16]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[64,128],[4,16]] src=sbuf.f32[0:128,0][[1,16]] wait=s0>=2
  dma queue=1 dst=hbm.f32[z,0][[64,128],[4,16]] src=sbuf.bf16[0:128,64][[1,16]] wait=s0>=2
)",
                      {{"x", make_tensor(DType::F32, {1, 16}, x)}});
    auto y = values(r.outputs.at("y")), z = values(r.outputs.at("z"));
    int bad = 0;
    for (int p = 0; p < 128; p++) {
        for (int i = 0; i < 16; i++) {
            bad += y[size_t(p * 16 + i)] != x[size_t(i)];
            bad += z[size_t(p * 16 + i)] != rt::round_through(DType::BF16, x[size_t(i)]);
        }
    }
    CHECK(bad == 0);
}

TEST_CASE("DMA rule violations") {
    auto one = [](const std::string &line) {
        return run_text(
            ".target trn1\n.var x input f32 [128,16]\n.engine sp\n  " + line + "\n",
            {{"x", make_tensor(DType::F32, {128, 16}, std::vector<float>(2048, 1.0f))}});
    };
    CHECK_CODE(one("dma queue=0 dst=psum.f32[0:128,0][[1,16]] src=hbm.f32[x,0][[64,128],[4,16]]"),
               "NHC_ERT009");
    CHECK_CODE(one("dma queue=0 dst=sbuf.f32[0:128,0][[1,8]] src=hbm.f32[x,0][[64,128],[4,16]]"),
               "NHC_ERT008");
    CHECK_CODE(one("dma queue=0 dst=sbuf.f32[100:64,0][[1,16]] src=hbm.f32[x,0][[64,64],[4,16]]"),
               "NHC_ERT005");
    // DMA may start at any partition (the start rule is for compute engines)
    CHECK_NOTHROW(one("dma queue=0 dst=sbuf.f32[3:64,0][[1,16]] src=hbm.f32[x,0][[64,64],[4,16]]"));
}

namespace {

/** A gather of 128 rows of a [1000, 48] table by an i32 index per partition: the indices are
 *  loaded by SP, the indirect DMA issued by Pool (software DGE), the rows stored to y. */
std::string gather_program(const std::string &index_line_engine = "pool",
                           const std::string &index_ap = "sbuf.i32[0:128,0][[1,1]]",
                           const std::string &wait = " wait=s0>=1") {
    return ".target trn1\n"
           ".var table input f32 [1000,48]\n"
           ".var ids input i32 [128,1]\n"
           ".var y output f32 [128,48]\n"
           ".engine sp\n"
           "  dma queue=0 dst=sbuf.i32[0:128,0][[1,1]] src=hbm.i32[ids,0][[4,128],[4,1]] "
           "signal=s0\n"
           ".engine " +
           index_line_engine +
           "\n"
           "  dma queue=8 dst=sbuf.f32[0:128,64][[1,48]] src=hbm.f32[table,0][[192,1000],[4,48]] "
           "index=" +
           index_ap + wait +
           " signal=s1\n"
           ".engine pool\n"
           "  dma queue=9 dst=hbm.f32[y,0][[192,128],[4,48]] src=sbuf.f32[0:128,64][[1,48]] "
           "wait=s1>=1\n";
}

rt::Tensor ids_tensor(const std::vector<int32_t> &ids) {
    rt::Tensor t;
    t.dtype = DType::I32;
    t.shape = {int64_t(ids.size()), 1};
    t.data.resize(ids.size() * 4);
    std::memcpy(t.data.data(), ids.data(), t.data.size());
    return t;
}

std::vector<int32_t> spread_ids() {
    std::vector<int32_t> ids(128);
    for (int p = 0; p < 128; p++) {
        ids[size_t(p)] = (p * 389 + 17) % 1000; // every partition a different row
    }
    ids[0] = 0;
    ids[127] = 999; // both ends of the table
    return ids;
}

} // namespace

TEST_CASE("an indirect DMA gathers the table rows its index names, one per partition") {
    auto table = random_floats(1000 * 48, 41);
    std::vector<int32_t> ids = spread_ids();
    auto r = run_text(gather_program(), {{"table", make_tensor(DType::F32, {1000, 48}, table)},
                                         {"ids", ids_tensor(ids)}});
    auto y = values(r.outputs.at("y"));
    int bad = 0;
    for (int p = 0; p < 128; p++) {
        for (int f = 0; f < 48; f++) {
            bad += y[size_t(p * 48 + f)] != table[size_t(ids[size_t(p)] * 48 + f)];
        }
    }
    CHECK(bad == 0);
    // Only the gathered rows cross HBM (nc.md:L327): ids, 128 rows in, 128 rows out; the table
    // has 1000.
    CHECK(r.summary.dma_bytes == 128 * 4 + 2 * 128 * 48 * 4);
    // Pool is busy generating the descriptors (nc.md:L267): 150 cycles + one per index.
    const target::TargetInfo &t = target::target_by_name("trn1");
    CHECK(r.summary.busy_ns[int(neff::Engine::POOL)] ==
          doctest::Approx((t.pool_start_overhead + 1) / t.clock_ghz(neff::Engine::POOL)));
}

TEST_CASE("an indirect DMA's index outside the table is NRT_OOB") {
    auto table = std::vector<float>(1000 * 48, 1.0f);
    for (int32_t bad_row : {1000, -1}) {
        std::vector<int32_t> ids = spread_ids();
        ids[77] = bad_row;
        CHECK_CODE(
            run_text(gather_program(), {{"table", make_tensor(DType::F32, {1000, 48}, table)},
                                        {"ids", ids_tensor(ids)}}),
            "NHC_ERT020");
    }
    CHECK(rt::status_for_code("NHC_ERT020") == rt::NRT_OOB);
}

TEST_CASE(
    "indirect DMA rules: pool only, an i32 index per dst partition, ordered after its index") {
    auto table = std::vector<float>(1000 * 48, 1.0f);
    auto run = [&](const std::string &text) {
        return run_text(text, {{"table", make_tensor(DType::F32, {1000, 48}, table)},
                               {"ids", ids_tensor(spread_ids())}});
    };
    CHECK_CODE(run(gather_program("sp")), "NHC_ENEFF013");
    CHECK_CODE(run(gather_program("pool", "sbuf.i32[0:64,0][[1,1]]")), "NHC_ERT008");
    CHECK_CODE(run(gather_program("pool", "sbuf.f32[0:128,0][[1,1]]")), "NHC_ERT010");
    // The index is an operand like any other: reading it before its load completes is a race.
    CHECK_CODE(run(gather_program("pool", "sbuf.i32[0:128,0][[1,1]]", "")), "NHC_ERT019");
}
