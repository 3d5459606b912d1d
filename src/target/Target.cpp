#include "target/Target.h"

#include "support/Error.h"

/* Citations: "nc.md:LNN" is line NN of ../shared/reference/neuroncore.md; the bracketed key after
 * it is that document's own source key. "(derived)" numbers are computed there from sourced ones.
 */

namespace nhc::target {

const char *engine_name(EngineKind e) {
    switch (e) {
    case EngineKind::PE:
        return "pe";
    case EngineKind::ACT:
        return "act";
    case EngineKind::DVE:
        return "dve";
    case EngineKind::POOL:
        return "pool";
    case EngineKind::SP:
        return "sp";
    }
    return "?";
}

namespace {

/** DMA row-size efficiency, calibrated on calibration.md card MM (issue 4, docs/timing.md).
 *  nc.md:L255-259 [DBW] gives the shape only: rows "< 256 B: severely overhead-bound",
 *  "256 B - 2 KiB: improving", ">= 4 KiB saturates"; nc.md:L266 "efficiency falls off for
 *  per-partition chunks under 2 KiB". The level comes from the card: MM0, MM1 and MM2 are DMA-bound
 *  (TensorE <= 27% busy, cal.md:L47, L96-99) and move 256 B - 1 KiB rows at the same rate, so the
 *  efficiency is flat from 256 B to 1 KiB and equals their pooled rate over the aggregate DMA
 *  bandwidth. Fitted once on the card as a whole, then fixed:
 *    bytes = loads (cal.md:L45, L57, L68: 5,120 + 4,160 + 2,112 MiB) + 3 x 64 MiB of stores
 *          (cal.md:L46) = 11,584 MiB = 12.15 GB,
 *    time (cal.md:L38, L49, L60) = 51.80 + 42.96 + 22.07 ms = 116.83 ms,
 *    pooled rate 104.0 GB/s / (16 engines x 17 B/ns = 272 GB/s) = 0.382.
 *  Between 1 KiB (the longest rows the card measures at that level) and 4 KiB (saturation) the
 *  efficiency is interpolated linearly in log2(row bytes). Rows under 256 B are costed as 256 B
 *  rows: below the documented overhead-bound threshold a row's cost no longer shrinks. */
void set_row_efficiency(DmaParams &d) {
    constexpr double kMiB = 1024.0 * 1024.0;
    constexpr double kCardBytes = (5120.0 + 4160.0 + 2112.0 + 3 * 64.0) * kMiB; // MM0-MM2
    constexpr double kCardNs = (51.80 + 42.96 + 22.07) * 1e6;
    d.small_row_efficiency = kCardBytes / kCardNs / (d.num_engines * d.bytes_per_ns);
    d.small_row_bytes = 1024;      // cal.md:L38-L67: 1 KiB rows (MM1/MM2 rhs) still at that rate
    d.saturating_row_bytes = 4096; // nc.md:L259 ">= 4 KiB saturates" [DBW]
    d.min_row_bytes = 256;         // nc.md:L256 "< 256 B: severely overhead-bound" [DBW]
}

/** NeuronCore-v2 (Trn1, Trn1n, Inf2). */
TargetInfo make_v2(const std::string &name) {
    TargetInfo t;
    t.name = name;
    t.version = CoreVersion::V2;
    t.cores_per_chip = 2;                    // nc.md:L62 [TRN1, INF2]
    t.partitions = 128;                      // nc.md:L203 "128 partitions" [AG2]
    t.sbuf_bytes_per_partition = 192 * 1024; // nc.md:L203 "192 KiB" [AG2]
    t.sbuf_usable_per_partition = 180224;    // nc.md:L204 [KLR, DA26]
    t.psum_bytes_per_partition = 16 * 1024;  // nc.md:L205 "128 x 16 KiB" [AG2]
    t.psum_banks = 8;                        // nc.md:L206 [AG2, DA26]
    t.psum_bank_bytes = 2048;                // nc.md:L206, L281 psum_bank_fmax_bytes [LANG]
    t.pe_rows = 128;                         // nc.md:L67 [AG2]
    t.pe_cols = 128;                         // nc.md:L67 [AG2]
    t.matmul_max_moving = 512;               // nc.md:L115 gemm_moving_fmax [AG2, ISA]
    t.hbm_bytes_per_core = 16LL << 30;       // nc.md:L211 16 GiB per NC (derived)
    t.hbm_bytes_per_ns = 410;                // nc.md:L211 ~410 GB/s per NC (820 GB/s / 2, L210)
    t.pe_ghz = 2.8;                          // nc.md:L63 [AG2]
    t.dve_ghz = 1.12;                        // nc.md:L64 [AG2]
    t.act_ghz = 1.4;                         // nc.md:L65 [AG2]
    t.pool_ghz = 1.4;                        // nc.md:L66 [AG2]
    t.mm_init_latency = 64;                  // nc.md:L142 MM_INIT_LATENCY [AG2, PG]
    t.fp32_matmul_factor = 4;                // nc.md:L143 "4x that for fp32" [ISA26]
    t.min_ii = 64;                           // nc.md:L160 MIN_II [ISA26]
    t.act_reduce_extra = 64;                 // nc.md:L299 activation_reduce +64 [ISA26]
    // nc.md:L161 gives "about 100 cycles" for dependent back-to-back instructions, and nc.md:L162
    // the one measurement: a dependent chain of 1-element ACT instructions at 189 ns = 264 ScalarE
    // cycles per link [PG]. The judge charges what was measured: 264 - MIN_II (64) = 200 cycles
    // (derived), so that a dependent chain is never faster than on the hardware.
    t.dependent_overhead = 264 - 64;
    t.dve_pool_share_sbuf_port = true;          // nc.md:L227 [AG2]
    t.dve_act_psum_contention_per_bank = false; // nc.md:L227: one PSUM port on v2 [AG2]
    t.pool_start_overhead = 150;                // nc.md:L185 "about 150 cycles" [ISA26]
    t.pool_partitions_per_core = 16;            // nc.md:L183 "partitions [16j, 16j+16)" [AG2]
    t.fast_stride_bytes = 16;                   // nc.md:L232 "above 16 B, bandwidth halves" [AG2]
    t.dve_perf_mode_copy = 1; // v2 has no DVE performance mode (nc.md:L163, v3 only)
    t.dve_perf_mode_other = 1;
    t.pe_transpose_exact = false;    // nc.md:L125 v2 transpose not bit-accurate [AG2]
    t.fp8_peak_factor = 1;           // nc.md:L79 "same rate as BF16" [AG2]
    t.dma.num_engines = 16;          // nc.md:L240 [AG2, DMA]
    t.dma.partitions_per_engine = 8; // nc.md:L245 [DMA]
    t.dma.bytes_per_ns = 17;         // nc.md:L241 "17 B/ns effective" [DBW]
    // nc.md:L265: t_fixed ~1.3-2 us per transfer (nc.md:L252: ~1,300 ns from semaphore to start
    // [DBW]). The judge takes the upper end of the documented range.
    t.dma.fixed_latency_ns = 2000;
    t.dma.issue_ns = 0; // v2 descriptors are precomputed (DGE mode none, nc.md:L268)
    // Per-row cost and in-flight limit: not documented, and the MM card shows neither (MM0 moves
    // 1.6x more rows per byte than MM1 at the same rate, cal.md:L47, L57): off (docs/timing.md).
    t.dma.per_descriptor_ns = 0;
    t.dma.max_in_flight_per_queue = 0;
    set_row_efficiency(t.dma);
    return t;
}

/** NeuronCore-v3 (Trn2): the v2 description with the v3 deltas of AG3. */
TargetInfo make_v3(const std::string &name) {
    TargetInfo t = make_v2(name);
    t.version = CoreVersion::V3;
    t.cores_per_chip = 8;                      // nc.md:L62 [TRN2]
    t.sbuf_bytes_per_partition = 224 * 1024;   // nc.md:L203 "128 x 224 KiB" [AG3]
    t.sbuf_usable_per_partition = 212984;      // nc.md:L204 [KLR, DA26]
    t.hbm_bytes_per_core = 12LL << 30;         // nc.md:L211 12 GiB per NC (derived)
    t.hbm_bytes_per_ns = 362;                  // nc.md:L211 ~362 GB/s per NC (derived)
    t.pe_ghz = 2.4;                            // nc.md:L63 [AG3]
    t.dve_ghz = 0.96;                          // nc.md:L64 [AG3]
    t.act_ghz = 1.2;                           // nc.md:L65 [AG3]
    t.pool_ghz = 1.2;                          // nc.md:L66 [AG3]
    t.dve_pool_share_sbuf_port = false;        // nc.md:L227 "NC-v3 lifts both" [AG3]
    t.dve_act_psum_contention_per_bank = true; // nc.md:L227 full bandwidth in different banks
    t.dve_perf_mode_copy = 4;                  // nc.md:L165 [AG3]
    t.dve_perf_mode_other = 2;                 // nc.md:L166-167 [AG3]
    t.pe_transpose_exact = true;               // nc.md:L126-127 transpose mode bit-accurate [AG3]
    t.fp8_peak_factor = 2;                     // nc.md:L79 158 dense double-row vs 79 [NC3, AG3]
    t.dma.bytes_per_ns = 23;                   // nc.md:L241 "23 B/ns" [DBW]
    // The row efficiency (set_row_efficiency) is inherited from v2 as a fraction of the engine
    // bandwidth: its shape is documented for DMA in general (nc.md:L255-259), its level was fitted
    // on a Trn1 card only and is not re-fitted for Trn2.
    return t;
}

} // namespace

double TargetInfo::pe_peak_flops_per_ns(bool fp32, bool fp8) const {
    // 128 x 128 PEs, one multiply-add (2 FLOP) each per PE cycle: nc.md:L78, L147 (derived).
    double peak = double(pe_rows) * pe_cols * 2 * pe_ghz;
    if (fp32) {
        return peak / fp32_matmul_factor; // nc.md:L81 fp32 1/4 rate [AG2]
    }
    return fp8 ? peak * fp8_peak_factor : peak;
}

double TargetInfo::clock_ghz(EngineKind e) const {
    switch (e) {
    case EngineKind::PE:
        return pe_ghz;
    case EngineKind::ACT:
        return act_ghz;
    case EngineKind::DVE:
        return dve_ghz;
    case EngineKind::POOL:
        return pool_ghz;
    case EngineKind::SP:
        return act_ghz; // SP only issues DMAs and waits; its clock is not used
    }
    return 1.0;
}

const std::vector<TargetInfo> &all_targets() {
    static const std::vector<TargetInfo> targets = {make_v2("trn1"), make_v2("trn1n"),
                                                    make_v2("inf2"), make_v3("trn2")};
    return targets;
}

std::string target_names() {
    std::string s;
    for (const auto &t : all_targets()) {
        s += (s.empty() ? "" : ", ") + t.name;
    }
    return s;
}

const TargetInfo &target_by_name(const std::string &name) {
    for (const auto &t : all_targets()) {
        if (t.name == name) {
            return t;
        }
    }
    user_error("NHC_ERT016", "unknown target '", name, "': expected one of ", target_names());
}

int partition_start_alignment(const TargetInfo &t, int count) {
    // nc.md:L230 [AG2, APS]: start 0 if 64<P<=128; 0 or 64 if 32<P<=64; 0/32/64/96 if P<=32.
    int quarter = t.partitions / 4;
    int half = t.partitions / 2;
    return count > half ? t.partitions : count > quarter ? half : quarter;
}

bool partition_start_allowed(const TargetInfo &t, int start, int count) {
    return start % partition_start_alignment(t, count) == 0;
}

} // namespace nhc::target
