// Target descriptions and cost formulas (src/target): the numbers the reference gives and the
// formulas that use them.

#include "BackendTest.h"

#include "target/CostModel.h"
#include "target/Target.h"

using namespace nhc;
using namespace nhc::target;

TEST_CASE("four targets, two generations") {
    REQUIRE(all_targets().size() == 4);
    const TargetInfo &trn1 = target_by_name("trn1"), &trn2 = target_by_name("trn2");
    CHECK(target_by_name("inf2").version == CoreVersion::V2);
    CHECK(target_by_name("trn1n").version == CoreVersion::V2);
    CHECK(trn2.version == CoreVersion::V3);
    CHECK(trn1.partitions == 128);
    CHECK(trn1.sbuf_usable_per_partition == 180224);
    CHECK(trn2.sbuf_usable_per_partition == 212984);
    CHECK(trn1.psum_banks * trn1.psum_bank_bytes == trn1.psum_bytes_per_partition);
    // 128 x 128 x 2 x 2.8 GHz = 91.75 TFLOPS (nc.md:L78)
    CHECK(trn1.pe_peak_flops_per_ns(false, false) == doctest::Approx(91750.4));
    CHECK(trn1.pe_peak_flops_per_ns(true, false) == doctest::Approx(91750.4 / 4));
    CHECK(trn2.pe_peak_flops_per_ns(false, true) == doctest::Approx(2 * 128 * 128 * 2 * 2.4));
    CHECK(target_names() == "trn1, trn1n, inf2, trn2");
}

TEST_CASE("partition start alignment (nc.md:L230)") {
    const TargetInfo &t = target_by_name("trn1");
    CHECK(partition_start_allowed(t, 0, 128));
    CHECK(!partition_start_allowed(t, 32, 96));
    CHECK(partition_start_allowed(t, 64, 64));
    CHECK(!partition_start_allowed(t, 32, 64));
    CHECK(partition_start_allowed(t, 96, 32));
    CHECK(!partition_start_allowed(t, 1, 1));
}

TEST_CASE("instruction cost formulas") {
    const TargetInfo &t = target_by_name("trn1");
    CostQuery mm;
    mm.kind = CostQuery::Kind::Matmul;
    mm.engine = EngineKind::PE;
    mm.n = 512;
    mm.stationary_free = 128;
    CHECK(compute_cycles(t, mm) == 512);
    mm.fp32_matmul = true;
    CHECK(compute_cycles(t, mm) == 2048); // 4x for fp32
    mm.fp32_matmul = false;
    mm.n = 16; // matrix-vector: the 64-cycle floor
    CHECK(compute_cycles(t, mm) == 64);

    CostQuery act;
    act.kind = CostQuery::Kind::Activation;
    act.engine = EngineKind::ACT;
    act.n = 512;
    CHECK(compute_cycles(t, act) == 512);
    CHECK(compute_ns(t, act) == doctest::Approx(512 / 1.4));
    act.n = 10;
    CHECK(compute_cycles(t, act) == 64);
    act.accumulate = true;
    CHECK(compute_cycles(t, act) == 128);
    act.dependent = true;
    CHECK(compute_cycles(t, act) == 128 + 200); // the measured chain: 264 - 64 (nc.md:L162)

    CostQuery tt;
    tt.kind = CostQuery::Kind::TensorTensor;
    tt.engine = EngineKind::DVE;
    tt.n = 512;
    CHECK(compute_cycles(t, tt) == 1024); // two SBUF inputs: 2N
    tt.psum_operand = true;
    CHECK(compute_cycles(t, tt) == 512);
    tt.wide_stride = true;
    CHECK(compute_cycles(t, tt) == 1024);

    CostQuery copy;
    copy.kind = CostQuery::Kind::TensorCopy;
    copy.engine = EngineKind::DVE;
    copy.n = 1024;
    copy.all_16bit_sbuf = true;
    CHECK(compute_cycles(t, copy) == 1024);
    CHECK(compute_cycles(target_by_name("trn2"), copy) == 256); // v3 performance mode 4x

    CostQuery iota;
    iota.kind = CostQuery::Kind::Iota;
    iota.engine = EngineKind::POOL;
    iota.n = 100;
    CHECK(compute_cycles(t, iota) == 250);
}

TEST_CASE("DMA split over engines and per-engine time") {
    const TargetInfo &t = target_by_name("trn1");
    DmaQuery q;
    q.bytes = 128 * 4096;
    q.chunks = 128;
    q.partitions = 128;
    auto shares = dma_split(t, q);
    REQUIRE(shares.size() == 16);
    int64_t total = 0;
    for (const auto &s : shares) {
        total += s.bytes;
    }
    CHECK(total == q.bytes);
    CHECK(dma_engine_ns(t, shares[0]) == doctest::Approx(8 * 4096 / 17.0));
    q.partitions = 20;
    q.first_partition = 64;
    shares = dma_split(t, q);
    REQUIRE(shares.size() == 3); // ceil(20 / 8)
    CHECK(shares[0].engine == 8);
}
