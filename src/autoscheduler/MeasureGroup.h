#ifndef NHC_AUTOSCHEDULER_MEASUREGROUP_H
#define NHC_AUTOSCHEDULER_MEASUREGROUP_H

/** \file
 * Times one scheduled group where the program runs it (issue 16): lowered, selected and
 * synchronised exactly as code generation does it (neff/SelectGroup), between the instructions
 * of the groups just before it and those of the groups after it, with the program's variables
 * and on-chip allocation cursors, and run on the timing simulator in timing-only mode
 * (runtime/Simulator.h, which checks every operand and computes nothing). Timed alone, a group
 * pays its pipeline's fill and drain, which a program hides behind its neighbours, and none of
 * what it costs them: the predecessors' writes it waits on, the successor's loads queued behind
 * its stores or stalled on its buffers (an FFN matmul in narrow tiles was faster alone and cost
 * the program 44 us, bench/README.md). The window makes the moves the program makes after code
 * generation that change what crosses HBM (ProgramContext::forward_loads, round_on_engines,
 * tile_weights): a window without them moved bytes the program does not, and the DMA time they
 * took hid the attention plans' differences (bench/README.md). A following group of the
 * searched workload (BERT's K and V projections after Q) runs with the candidate's lowering, as
 * the program will run it: with their defaults, the windows of dev_bert_layer stored in bf16 chose
 * plans that cost its program 11%. Assumes the group's schedule is applied; the group is lowered
 * once.
 *
 * A candidate the code generator refuses (a user error: SBUF overflow, a form no engine runs) or
 * that Halide cannot lower is reported as not feasible, with the reason.
 */

#include "neff/LowerGroup.h"
#include "neff/SelectInstructions.h"
#include "schedules/Group.h"
#include "target/Target.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nhc::autosched {

/** A group code generation compiles after the searched one, lowered with its default schedule
 *  (or its --schedule block). */
struct FollowingGroup {
    std::shared_ptr<const codegen::LoweredGroup> lowered;
    /** Its workload text (Workload.h), empty when a --schedule block schedules it, and its HBM
     *  values (sched::hbm_values). One of the searched workload takes each candidate's lowering
     *  instead, rebound to its values: the program gives it the plan the search chooses. */
    std::string workload;
    std::vector<std::string> values;
};

/** Where a group runs: what code generation has produced before it. */
struct ProgramContext {
    /** The instructions of the groups just before this one, as selected (may be empty). */
    std::vector<codegen::SelectedInstr> prefix;
    /** The program's variables so far (without bytes): the prefix's operands refer to them. */
    std::vector<neff::Variable> vars;
    /** The variable a graph value already has, or -1 (it then gets one of its own). */
    std::function<int(const std::string &)> existing_var;
    /** Where a value's bytes start in that variable (a Concat input computed in place). */
    std::function<int64_t(const std::string &)> offset_in_var;
    codegen::AllocationHistory sbuf_history, psum_history; ///< where on-chip allocation resumes
    /** SBUF regions earlier groups keep for their outputs' readers (codegen::SelectOptions). */
    std::vector<std::pair<int64_t, int64_t>> reserved_sbuf;
    /** Whether the group's output may stay resident (SchedulePlan::output_resident): the next
     *  group is all that reads it (driver/ResidentOutputs.h). */
    bool may_keep_output = false;
    /** How the program's instructions are ordered (codegen::schedule_instructions): a window is
     *  scheduled as the program will be. */
    bool dependency_overhead = false;
    /** The program's whole-program moves that change what crosses HBM, made in a window as the
     *  program makes them: loads of tensors still in SBUF forwarded (neff/ForwardStores.h; -O2
     *  and -O3 unless residency is off), 16-bit stores taking tiles the engines rounded
     *  (neff/NarrowStores.h) and weights stored in load order (neff/TileWeights.h; both -O2 and
     *  -O3). */
    bool forward_loads = false, round_on_engines = false, tile_weights = false;
    bool read_in_place = true;    ///< forwarded tiles read where they are (ForwardStores.h)
    bool broadcast_on_pe = false; ///< codegen::SelectOptions::broadcast_on_pe
    /** The groups code generation compiles next. */
    std::vector<FollowingGroup> following;
    /** The searched group's workload text (set by the search). */
    std::string workload;
};

struct GroupTiming {
    bool feasible = false;
    std::string why_not;     ///< the refusal, when not feasible
    double simulated_ns = 0; ///< simulated time of the prefix, the group and those following
    /** The analytic estimate of that same window: its scheduled instructions replayed as the
     *  simulator runs them (codegen::replay_estimate), from src/target's cost formulas, without
     *  semaphores or values. */
    double estimated_ns = 0;
    double busiest_ns = 0;  ///< the group's busiest engine, summed instruction estimates
    bool simulated = false; ///< false until simulate_window (the search may prune it)
};

/** A candidate's window, lowered, selected and estimated (timing.estimated_ns); simulated or not
 *  yet (timing.simulated). */
struct Window {
    GroupTiming timing;
    std::vector<codegen::SelectedInstr> instrs; ///< as scheduled; freed once simulated
    neff::Program prog;                         ///< the window's variables; freed once simulated
};

/** Simulates a feasible window prepared and not yet simulated (timing.simulated_ns). */
void simulate_window(Window &w, const target::TargetInfo &target);

/** The window of each of `groups` in the same context, estimated, not simulated (a refusal as
 *  not feasible); and simulate_window for the windows `which` names, each on up to `jobs` threads
 * (an llvm::ThreadPool; 1: in this thread). Each window is its own copy of the context's
 * instructions and variables, which are only read, so the results, in the order given, do not
 * depend on the job count. */
std::vector<Window> prepare_windows(const std::vector<const sched::Group *> &groups, const Graph &g,
                                    const target::TargetInfo &target, const ProgramContext &context,
                                    int jobs);
void simulate_windows(std::vector<Window> &windows, const std::vector<size_t> &which,
                      const target::TargetInfo &target, int jobs);

} // namespace nhc::autosched

#endif
