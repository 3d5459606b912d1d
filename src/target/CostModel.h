#ifndef NHC_TARGET_COSTMODEL_H
#define NHC_TARGET_COSTMODEL_H

/** \file
 * Instruction cost formulas of a NeuronCore, shared by the timing simulator (src/runtime) and,
 * later, the autoscheduler's cost model. The formulas are the per-instruction "estimated cost"
 * rules of the reference (neuroncore.md §3.2, [ISA26]) plus the DMA model of §2.3; every constant
 * comes from TargetInfo. Inputs are plain descriptions of an instruction so that this library does
 * not depend on the ISA structs.
 */

#include "target/Target.h"

#include <cstdint>
#include <vector>

namespace nhc::target {

/** What the cost formulas need to know about one compute instruction. */
struct CostQuery {
    enum class Kind {
        Matmul,
        Transpose,
        Activation,
        TensorTensor,
        TensorScalar,
        TensorReduce,
        TensorCopy,
        Memset,
        Iota,
        AffineSelect,
        Select,
        PartitionReduce,
        Nop
    };
    Kind kind = Kind::Nop;
    EngineKind engine = EngineKind::DVE;
    int64_t n = 0;               ///< elements per partition processed (free size)
    int partitions = 0;          ///< partitions touched (P)
    int64_t stationary_free = 0; ///< matmul: M
    bool fp32_matmul = false;    ///< matmul/transpose with fp32 operands (PE 1/4 rate)
    bool psum_operand = false;   ///< one input (or the output) is in PSUM
    bool all_16bit_sbuf = false; ///< all operands bf16/fp16 in SBUF
    bool contiguous = true;      ///< inner dimension of every operand contiguous
    bool wide_stride = false;    ///< an inner stride above fast_stride_bytes
    bool accumulate = false;     ///< activation with free-axis accumulate
    bool cheap_variant = false;  ///< memset of 0 in 16-bit / bf16 add-or-max reduce / bf16 tt
    bool dependent = false;      ///< waited on a semaphore, or reads its engine's previous result
};

/** Engine cycles of one instruction on its engine (NC cycles, at that engine's clock). */
double compute_cycles(const TargetInfo &t, const CostQuery &q);
/** Duration in ns: compute_cycles / engine clock. */
double compute_ns(const TargetInfo &t, const CostQuery &q);

/** One DMA transfer as the DMA engines see it. */
struct DmaQuery {
    /** Bytes the DMA engines move: per element the larger of the source and destination sizes
     *  (a cast goes src -> fp32 -> dst, nc.md:L247: an fp32 -> bf16 load reads 4 bytes). */
    int64_t bytes = 0;
    int64_t hbm_bytes = 0;   ///< bytes read from plus bytes written to HBM
    int64_t chunks = 0;      ///< contiguous chunks (descriptors)
    int partitions = 1;      ///< SBUF partitions spanned (1 for HBM->HBM)
    int first_partition = 0; ///< first SBUF partition (chooses the engines)
};

/** The share of one DMA engine in a transfer. */
struct DmaShare {
    int engine = 0;
    int64_t bytes = 0;
    int64_t chunks = 0;
    int64_t hbm_bytes = 0;
};

/** Splits a transfer over n_eng = min(engines, ceil(P / partitions_per_engine)) engines
 *  (nc.md:L264), each serving its own partitions. */
std::vector<DmaShare> dma_split(const TargetInfo &t, const DmaQuery &q);
/** Bandwidth fraction a DMA engine reaches on contiguous rows of `row_bytes` (DmaParams). */
double dma_row_efficiency(const TargetInfo &t, double row_bytes);
/** Time one engine is occupied by its share (excludes the fixed latency, which overlaps):
 *  its bytes over the engine bandwidth times the row efficiency of its average row, plus the
 *  per-descriptor cost (0 on every target: the card shows none, docs/timing.md); and no less than
 *  its HBM bytes over the engine's share of the core's HBM bandwidth when `busy_engines` DMA
 *  engines (this one included) move data at once. */
double dma_engine_ns(const TargetInfo &t, const DmaShare &s, int busy_engines = 1);

/** Time GpSimd spends generating the descriptors of an indirect (software DGE) DMA with
 *  `indices_per_partition` row indices on each partition it gathers into (nc.md:L267). */
double swdge_descriptor_ns(const TargetInfo &t, int64_t indices_per_partition);

/** FLOPs of a matmul (2*K*M*N). */
inline double matmul_flops(int64_t k, int64_t m, int64_t n) {
    return 2.0 * k * m * n;
}

} // namespace nhc::target

#endif
