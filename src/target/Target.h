#ifndef NHC_TARGET_TARGET_H
#define NHC_TARGET_TARGET_H

/** \file
 * NeuronCore target descriptions: trn1, trn1n and inf2 (NeuronCore-v2) and trn2 (NeuronCore-v3).
 *
 * Every hardware number of the project lives in Target.cpp, as data, and cites the line of
 * ../shared/reference/neuroncore.md it comes from ("nc.md:L63" = line 63 of that file). Code
 * elsewhere asks this description (and CostModel.h) instead of writing a literal. Numbers that the
 * reference does not give are marked "not documented" and kept neutral (0 = mechanism off) so that
 * a later calibration (calibration.md) can switch them on with a cited value.
 */

#include <cstdint>
#include <string>
#include <vector>

namespace nhc::target {

/** The NeuronCore generation; decides semantics that differ (PE transpose, DVE modes). */
enum class CoreVersion { V2 = 2, V3 = 3 };

/** Compute engines plus the Sync engine, in the order used for queues and reports. */
enum class EngineKind { PE = 0, ACT = 1, DVE = 2, POOL = 3, SP = 4 };
constexpr int kNumEngines = 5;
const char *engine_name(EngineKind e);

/** DMA cost parameters: the reference's numbers plus the calibration of issue 4 (docs/timing.md
 *  says which mechanism is fitted on which published measurement). */
struct DmaParams {
    int num_engines = 0;             ///< DMA engines per NeuronCore
    int partitions_per_engine = 0;   ///< SBUF partitions one engine serves in a full-P transfer
    double bytes_per_ns = 0;         ///< effective bandwidth of one DMA engine
    double fixed_latency_ns = 0;     ///< semaphore-to-start latency per transfer (not occupancy)
    double issue_ns = 0;             ///< time the issuing engine spends per DMA instruction
    double per_descriptor_ns = 0;    ///< engine occupancy per contiguous chunk (0 = off)
    int max_in_flight_per_queue = 0; ///< transfers a queue may have in flight (0 = unlimited)
    /** Row-size efficiency (docs/timing.md, "DMA row efficiency"): a contiguous row (chunk) of
     *  b bytes moves at bytes_per_ns * eff(b), where eff = small_row_efficiency for
     *  b <= small_row_bytes, 1 for b >= saturating_row_bytes, linear in log2(b) in between; a
     *  row shorter than min_row_bytes costs as much as one of min_row_bytes. */
    double small_row_efficiency = 1;  ///< bandwidth fraction of short rows (1 = mechanism off)
    int64_t small_row_bytes = 0;      ///< rows up to this size run at small_row_efficiency
    int64_t saturating_row_bytes = 0; ///< rows from this size run at full bandwidth
    int64_t min_row_bytes = 0;        ///< shorter rows cost as much as this (0 = off)
};

/** One target. Clocks in GHz (= cycles per ns). */
struct TargetInfo {
    std::string name;    ///< "trn1", "trn1n", "inf2", "trn2"
    CoreVersion version; ///< NeuronCore generation
    int cores_per_chip;  ///< physical NeuronCores per chip

    // Geometry.
    int partitions;                    ///< SBUF/PSUM partitions (= PE rows)
    int64_t sbuf_bytes_per_partition;  ///< physical SBUF bytes per partition
    int64_t sbuf_usable_per_partition; ///< bytes a NEFF may use per partition
    int64_t psum_bytes_per_partition;  ///< PSUM bytes per partition
    int psum_banks;                    ///< PSUM banks per partition
    int64_t psum_bank_bytes;           ///< bytes per PSUM bank per partition
    int pe_rows, pe_cols;              ///< systolic array size
    int matmul_max_moving;             ///< moving free size limit (elements)
    int64_t hbm_bytes_per_core;        ///< HBM capacity one NeuronCore addresses
    double hbm_bytes_per_ns;           ///< HBM bandwidth per NeuronCore (roofline bound)

    // Clocks (GHz).
    double pe_ghz, act_ghz, dve_ghz, pool_ghz;

    // Engine datapath / cost-formula constants (engine cycles).
    int mm_init_latency;    ///< matmul II floor and min(64, N_st) term
    int fp32_matmul_factor; ///< fp32 matmul is this many times slower
    int min_ii;             ///< ACT/DVE instruction floor
    int act_reduce_extra;   ///< extra cycles for an activation with accumulate
    int dependent_overhead; ///< static overhead of a dependent instruction (ACT/DVE/Pool)
    /** NC-v2 port sharing (nc.md:L227): VectorE and GpSimdE share an SBUF port, VectorE and
     *  ScalarE a PSUM port; instructions that contend run one after the other. NC-v3 lifts the
     *  SBUF sharing and keeps VectorE/ScalarE contention within one PSUM bank only. */
    bool dve_pool_share_sbuf_port;
    bool dve_act_psum_contention_per_bank; ///< false: the whole PSUM is one port (v2)
    int pool_start_overhead;      ///< Pool instruction start overhead (iota, affine_select)
    int pool_partitions_per_core; ///< partitions one GpSimd core serves
    int fast_stride_bytes;        ///< inner strides above this halve the access bandwidth
    int dve_perf_mode_copy;       ///< v3 DVE speedup for bf16/fp16 SBUF->SBUF contiguous copies
    int dve_perf_mode_other;      ///< v3 DVE speedup when non-contiguous / PSUM / tensor_tensor
    bool pe_transpose_exact;      ///< v3 transpose mode is bit-exact; v2 goes through a matmul
    int fp8_peak_factor;          ///< fp8 peak relative to bf16 (v3 double-row)

    DmaParams dma;

    double pe_peak_flops_per_ns(bool fp32, bool fp8) const;
    double clock_ghz(EngineKind e) const;
};

/** The four targets, in a fixed order. */
const std::vector<TargetInfo> &all_targets();
/** Looks a target up by name; throws a user error NHC_ERT016 if unknown. */
const TargetInfo &target_by_name(const std::string &name);
/** Names joined with ", " for messages. */
std::string target_names();

/** Access rule: start partition alignment for a tile of `count` partitions (nc.md:L230). */
bool partition_start_allowed(const TargetInfo &t, int start, int count);
/** The multiple a tile of `count` partitions must start at (all partitions: only at 0). */
int partition_start_alignment(const TargetInfo &t, int count);

} // namespace nhc::target

#endif
