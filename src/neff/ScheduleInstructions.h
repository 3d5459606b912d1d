#ifndef NHC_NEFF_SCHEDULEINSTRUCTIONS_H
#define NHC_NEFF_SCHEDULEINSTRUCTIONS_H

/** \file
 * Reorders the selected instructions of a program so that independent work overlaps on the
 * in-order engines (a list scheduler). Instruction selection emits tile after tile: the softmax
 * of one attention head alternates between ACT and DVE, and without reordering the next head's
 * transposes and copies queue behind it on each engine. This pass keeps every dependency that
 * Hazards.h finds (so the result is the same program) and, at each step, issues the ready
 * instruction that can start earliest on its engine (or DMA queue), estimated with the target's
 * cost model; ties go to loads in the order of the first store that needs them, to the PE
 * instructions of a group scheduled by critical path (SelectedInstr::by_critical_path) in the
 * order of their longest path to the end, then to the original order, so the result is
 * deterministic.
 *
 * Assumes on-chip buffers were allocated with rotation (OnChipAllocator), so that consecutive
 * tiles use different addresses and do not depend on each other through reuse.
 */

#include "neff/SelectInstructions.h"
#include "target/Target.h"

namespace nhc::codegen {

/** An estimate of how long `i` keeps its engine (or DMA queue) busy, in ns. */
double estimated_ns(const target::TargetInfo &t, neff::Engine e, const neff::Instr &i);

/** Reorders `instrs` (see the file comment); returns the list schedule's own estimate of when
 *  the last instruction finishes, in ns (estimated_ns per instruction, the dependencies, one
 *  instruction at a time per engine; a DMA queue's transfers start in order, each after its fixed
 *  latency, overlap while they share the DMA engines, and complete in order; a transfer is held
 *  back until the engines would be free for it; no semaphores). The autoscheduler's cost model is
 *  replay_estimate (ReplaySchedule.h) of the order this returns: given `replayed_ns`, it is
 *  stored there, from the dependencies this pass found.
 *
 *  With `dependency_overhead` (-O2 and -O3), the schedule also counts the overhead of a dependent
 *  instruction on ACT, DVE and GpSimd (nc.md:L161-162; the simulator charges it to one that reads
 *  what its engine's previous instruction wrote, or that waited for another engine with its own
 *  idle), and among instructions that can start at once on an engine it issues first one that
 *  does not read its engine's last writes: the softmaxes of several attention heads interleave
 *  instead of each running its max -> negate -> exp chain back to back. */
double schedule_instructions(std::vector<SelectedInstr> &instrs, const target::TargetInfo &t,
                             bool dependency_overhead = false, double *replayed_ns = nullptr);

} // namespace nhc::codegen

#endif
