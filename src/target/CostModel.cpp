#include "target/CostModel.h"

#include <algorithm>
#include <cmath>

/* Formula citations: "nc.md:LNN" = line NN of ../shared/reference/neuroncore.md. N is the number
 * of elements per partition; the cycle counts are in the engine's own clock. */

namespace nhc::target {

namespace {

using Kind = CostQuery::Kind;

double floor_ii(const TargetInfo &t, double cycles) {
    return std::max<double>(t.min_ii, cycles);
}

/** PE: matmul and transpose initiation intervals. */
double pe_cycles(const TargetInfo &t, const CostQuery &q) {
    double n = double(q.n);
    if (q.kind == Kind::Transpose) {
        // nc.md:L297 nc_transpose on PE: max(P, min(64, F)) [ISA26].
        double c = std::max<double>(q.partitions, std::min<double>(t.mm_init_latency, n));
        // nc.md:L128 v3 transpose mode: fp32 transpose 2x faster [AG3].
        if (q.fp32_matmul && t.pe_transpose_exact) {
            c /= 2;
        }
        return c;
    }
    // nc.md:L143, L295: max(min(64, N_stationary), N_moving); x4 for fp32 [ISA26].
    double c = std::max<double>(std::min<double>(t.mm_init_latency, double(q.stationary_free)), n);
    // nc.md:L142: the II never drops below MM_INIT_LATENCY [AG2, PG].
    c = std::max<double>(c, t.mm_init_latency);
    return q.fp32_matmul ? c * t.fp32_matmul_factor : c;
}

/** DVE-style formulas (also used for the same instructions on ACT and Pool). */
double vector_cycles(const TargetInfo &t, const CostQuery &q) {
    double n = double(q.n);
    switch (q.kind) {
    case Kind::Activation:
        // nc.md:L298 max(64, N); nc.md:L299 +64 with the reduction readout [ISA26].
        return floor_ii(t, n) + (q.accumulate ? t.act_reduce_extra : 0);
    case Kind::TensorTensor: {
        // nc.md:L301: max(64, N) with a PSUM input or bf16 add/mul/sub contiguous in SBUF, else
        // max(64, 2N) [ISA26].
        bool one_pass = q.psum_operand || q.cheap_variant;
        double c = floor_ii(t, one_pass ? n : 2 * n);
        if (q.engine == EngineKind::DVE && q.all_16bit_sbuf) {
            c = floor_ii(t, c / t.dve_perf_mode_other); // nc.md:L167 [AG3]
        }
        return c;
    }
    case Kind::TensorScalar:
    case Kind::TensorCopy: {
        // nc.md:L302 and L309: max(64, N) [ISA26].
        double c = floor_ii(t, n);
        if (q.engine == EngineKind::DVE) {
            // nc.md:L165-166 v3 performance mode (factors are 1 on v2) [AG3].
            bool fast = q.all_16bit_sbuf && q.contiguous && !q.psum_operand;
            c = floor_ii(t, n / (fast ? t.dve_perf_mode_copy : t.dve_perf_mode_other));
        }
        return c;
    }
    case Kind::TensorReduce:
        // nc.md:L306: N/2 for bf16 in/out with add or max, else N; the MIN_II floor applies to
        // every instruction (nc.md:L160).
        return floor_ii(t, q.cheap_variant ? n / 2 : n);
    case Kind::Memset:
        // nc.md:L311: max(64, N/2) for 0 in bf16/fp16, else max(64, N) [ISA26].
        return floor_ii(t, q.cheap_variant ? n / 2 : n);
    case Kind::Select:
        // nc.md:L310 tensor_copy_predicated: max(64, N) mixed SBUF/PSUM, max(64, 2N) both SBUF.
        return floor_ii(t, q.psum_operand ? n : 2 * n);
    case Kind::Iota:
    case Kind::AffineSelect:
        // nc.md:L312-313: 150 + N [ISA26].
        return t.pool_start_overhead + n;
    case Kind::PartitionReduce:
        // nc.md:L307 gives no cost for tensor_partition_reduce. (inferred) Pool start overhead
        // plus one pass over the elements of each partition a core serves (nc.md:L183).
        return t.pool_start_overhead +
               n * std::ceil(double(q.partitions) / t.pool_partitions_per_core);
    default:
        return 0;
    }
}

} // namespace

double compute_cycles(const TargetInfo &t, const CostQuery &q) {
    if (q.kind == Kind::Nop) {
        return 0;
    }
    if (q.engine == EngineKind::PE) {
        return pe_cycles(t, q);
    }
    double c = vector_cycles(t, q);
    // nc.md:L232: an inner stride above 16 B halves the access bandwidth [AG2].
    if (q.wide_stride) {
        c *= 2;
    }
    // nc.md:L161: ~100 cycles static overhead for dependent back-to-back instructions [AG2, PG].
    if (q.dependent) {
        c += t.dependent_overhead;
    }
    return c;
}

double compute_ns(const TargetInfo &t, const CostQuery &q) {
    return compute_cycles(t, q) / t.clock_ghz(q.engine);
}

std::vector<DmaShare> dma_split(const TargetInfo &t, const DmaQuery &q) {
    const DmaParams &d = t.dma;
    int p = std::max(1, q.partitions);
    // nc.md:L264: n_eng = min(16, ceil(P / 8)).
    int n_eng =
        std::min(d.num_engines, (p + d.partitions_per_engine - 1) / d.partitions_per_engine);
    n_eng = std::max(1, n_eng);
    int first = (q.first_partition / d.partitions_per_engine) % d.num_engines;
    std::vector<DmaShare> shares(n_eng);
    for (int i = 0; i < n_eng; i++) {
        shares[i].engine = (first + i) % d.num_engines;
        // Even split; the first engines take the remainder so that no byte is lost.
        shares[i].bytes = q.bytes / n_eng + (i < q.bytes % n_eng ? 1 : 0);
        shares[i].chunks = q.chunks / n_eng + (i < q.chunks % n_eng ? 1 : 0);
        shares[i].hbm_bytes = q.hbm_bytes / n_eng + (i < q.hbm_bytes % n_eng ? 1 : 0);
    }
    return shares;
}

double dma_row_efficiency(const TargetInfo &t, double row_bytes) {
    const DmaParams &d = t.dma;
    if (d.small_row_efficiency >= 1 || row_bytes >= double(d.saturating_row_bytes)) {
        return 1;
    }
    if (row_bytes <= double(d.small_row_bytes)) {
        return d.small_row_efficiency;
    }
    // Linear in log2(row bytes) between the two anchors (Target.cpp, set_row_efficiency).
    double f = std::log2(row_bytes / double(d.small_row_bytes)) /
               std::log2(double(d.saturating_row_bytes) / double(d.small_row_bytes));
    return d.small_row_efficiency + f * (1 - d.small_row_efficiency);
}

double dma_engine_ns(const TargetInfo &t, const DmaShare &s, int busy_engines) {
    const DmaParams &d = t.dma;
    // nc.md:L211: HBM bandwidth per NeuronCore caps all DMA engines together; each busy engine
    // gets an equal share of it (an HBM -> HBM copy crosses HBM twice).
    double hbm_ns = double(s.hbm_bytes) * std::max(1, busy_engines) / t.hbm_bytes_per_ns;
    if (s.chunks <= 0) {
        return std::max(double(s.bytes) / d.bytes_per_ns, hbm_ns);
    }
    double row = double(s.bytes) / double(s.chunks);
    // Rows shorter than min_row_bytes cost as much as one of min_row_bytes (nc.md:L256).
    double costed = std::max(row, double(d.min_row_bytes)) * double(s.chunks);
    double engine_ns = costed / (d.bytes_per_ns * dma_row_efficiency(t, row)) +
                       double(s.chunks) * d.per_descriptor_ns;
    return std::max(engine_ns, hbm_ns);
}

double swdge_descriptor_ns(const TargetInfo &t, int64_t indices_per_partition) {
    // nc.md:L267 charges a software-DGE transfer "GpSimd time" without a figure (L186: GpSimd
    // generates the descriptors). (inferred) One GpSimd pass over the index tile: the instruction
    // start overhead (nc.md:L185, 150 cycles) plus one cycle per index, since each core reads
    // 32 bits on each of its 16 partitions per cycle (nc.md:L183) and the 8 cores cover 128
    // partitions in parallel. The same shape as iota (nc.md:L312, 150 + N).
    return (t.pool_start_overhead + double(indices_per_partition)) / t.clock_ghz(EngineKind::POOL);
}

} // namespace nhc::target
