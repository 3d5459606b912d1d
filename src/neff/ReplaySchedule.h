#ifndef NHC_NEFF_REPLAYSCHEDULE_H
#define NHC_NEFF_REPLAYSCHEDULE_H

/** \file
 * The autoscheduler's analytic cost model: a scheduled instruction order replayed as the
 * simulator runs it (Simulator.cpp), from src/target's cost formulas, without semaphores, values
 * or operand checks. Assumes the order keeps every dependency (ScheduleInstructions.h's does).
 */

#include "neff/SelectInstructions.h"
#include "target/Target.h"

#include <vector>

namespace nhc::codegen {

/** The time the simulator would take to run `instrs` in their order, estimated without
 *  semaphores or values: each engine issues its instructions (a DMA: the engine that issues it)
 *  in that order once their dependencies are done, the first that can start first; each is
 *  charged the simulator's own cost query (neff/ComputeCost.h, neff/DmaCost.h) and the dependency
 *  overhead as the simulator charges it; a transfer takes the DMA engines when it is issued (an
 *  indirect one after its descriptors), behind those issued before it; an ACT, DVE or GpSimd
 *  instruction waits for the SBUF and PSUM ports it shares (nc.md:L227); all as in
 *  Simulator.cpp. The autoscheduler records it as a candidate's predicted_ns. The list
 *  schedule's own estimate (schedule_instructions), which holds a transfer back until the
 *  engines are free as the in-order engines do not, was 0.79-1.22 times the simulated window
 *  (bench/README.md). */
double replay_estimate(const std::vector<SelectedInstr> &instrs, const target::TargetInfo &t);

/** replay_estimate of `instrs`, whose dependencies (Hazards.h) `succs` gives: each instruction's
 *  successors, by position in `instrs`. */
double replay_estimate(const std::vector<SelectedInstr> &instrs,
                       const std::vector<std::vector<int>> &succs, const target::TargetInfo &t);

} // namespace nhc::codegen

#endif
