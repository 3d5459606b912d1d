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

#include "neff/Footprint.h"
#include "neff/Isa.h"
#include "target/CostModel.h"
#include "target/Target.h"

namespace nhc::neff {

/** The cost query of compute instruction `i` on engine `e` (Nop for a DMA or a Nop). Assumes the
 *  operand shapes the runtime checks (Exec.h); the query reads nothing but the instruction. */
target::CostQuery compute_query(const target::TargetInfo &t, Engine e, const Instr &i);

/** How many shared ports shared_ports() numbers: the SBUF port and one per PSUM bank. */
inline int num_shared_ports(const target::TargetInfo &t) {
    return 1 + t.psum_banks;
}

/** Appends to `ports` the shared ports that compute instruction `i` on engine `e` occupies while
 *  it runs (nc.md:L227): 0 for the VectorE/GpSimdE SBUF port (NC-v2), 1 + b for the
 *  VectorE/ScalarE port of PSUM bank b (NC-v2: one port for all of PSUM, so every bank). A port
 *  may appear more than once. `reads` and `writes` are scratch. */
void shared_ports(const target::TargetInfo &t, Engine e, const Instr &i, std::vector<int> &ports,
                  std::vector<Footprint> &reads, std::vector<Footprint> &writes);

} // namespace nhc::neff

#endif
