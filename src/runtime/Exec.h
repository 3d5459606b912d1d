#ifndef NHC_RUNTIME_EXEC_H
#define NHC_RUNTIME_EXEC_H

/** \file
 * Functional execution of one instruction on a Machine, bit-accurate in the sense of
 * Numerics.h: operands are read and widened to fp32, engines compute in fp32, PSUM accumulates in
 * fp32, results are rounded (RNE) to the destination dtype. Each executor also describes the
 * instruction for the timing model (a CostQuery, DMA byte counts, FLOPs), so that the operands are
 * analysed once. On a timing-only Machine an executor runs its checks, fills the ExecInfo and
 * returns before touching any value.
 *
 * Rule violations are user errors naming the instruction: operand space (NHC_ERT009), shapes
 * (NHC_ERT008), dtypes (NHC_ERT010), PE size limits (NHC_ERT011), forms the target lacks
 * (NHC_ERT018), not implemented (NHC_ERT012), plus Machine::check's codes.
 */

#include "runtime/Machine.h"
#include "target/CostModel.h"

namespace nhc::rt {

/** What the timing model needs to know about an executed instruction. */
struct ExecInfo {
    bool is_dma = false;
    target::CostQuery cost;       ///< compute instructions
    target::DmaQuery dma;         ///< DMA transfers
    double flops = 0;             ///< matmul FLOPs
    double peak_flops_per_ns = 0; ///< the PE peak for this matmul's dtype
};

ExecInfo execute_instr(Machine &m, const neff::Instr &i, const Where &w);

// Per-family executors (ExecPe.cpp, ExecVector.cpp, ExecPool.cpp, ExecDma.cpp).
ExecInfo exec_matmul(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_transpose(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_activation(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_tensor_tensor(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_tensor_scalar(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_tensor_reduce(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_tensor_copy(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_memset(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_select(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_iota(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_affine_select(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_partition_reduce(Machine &m, const neff::Instr &i, const Where &w);
ExecInfo exec_dma(Machine &m, const neff::Instr &i, const Where &w);

// Shared checks.
/** NHC_ERT009 unless ap.space is one of the allowed spaces. */
void require_space(const neff::AccessPattern &ap, std::initializer_list<neff::MemSpace> allowed,
                   const Where &w, const char *field);
/** NHC_ERT008 unless both operands have the same partitions and elements per partition. */
void require_same_shape(const neff::AccessPattern &a, const neff::AccessPattern &b, const Where &w,
                        const char *fa, const char *fb);
/** Checks a compute operand (space by engine, Machine::check with the start rule). */
void check_compute_operand(const Machine &m, const neff::AccessPattern &ap, const Where &w,
                           const char *field);
/** NHC_ERT018 unless the instruction's alu0 is a reduction operator (AluOps.h is_reduce_op). */
void require_reduce_op(const neff::Instr &i, const Where &w);
/** Per-partition values of a Scalar operand for P partitions. */
std::vector<float> scalar_values(const Machine &m, const neff::Scalar &s, int partitions,
                                 const Where &w, const char *field);

} // namespace nhc::rt

#endif
