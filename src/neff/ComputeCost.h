#ifndef NHC_NEFF_COMPUTECOST_H
#define NHC_NEFF_COMPUTECOST_H

/** \file
 * What a compute instruction asks of its engine (target::CostQuery): its kind, elements per
 * partition, partitions and the operand properties the cost formulas depend on (PSUM operands,
 * 16-bit SBUF operands, strides, the cheap variants). One definition for the simulator, which
 * charges it, and the compiler's replay of a scheduled order (codegen::replay_estimate), which
 * estimates with it, as DmaCost.h is for transfers. The `dependent` flag is left false: whether an
 * instruction waits on its engine's previous one is known only in a schedule.
 */

#include "neff/Isa.h"
#include "target/CostModel.h"
#include "target/Target.h"

namespace nhc::neff {

/** The cost query of compute instruction `i` on engine `e` (Nop for a DMA or a Nop). Assumes the
 *  operand shapes the runtime checks (Exec.h); the query reads nothing but the instruction. */
target::CostQuery compute_query(const target::TargetInfo &t, Engine e, const Instr &i);

} // namespace nhc::neff

#endif
