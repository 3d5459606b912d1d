#ifndef NHC_AUTOSCHEDULER_AUTOSCHEDULE_H
#define NHC_AUTOSCHEDULER_AUTOSCHEDULE_H

/** \file
 * The autoscheduler's entry (issue 16, DESIGN.md §4): per group, the schedule plan code
 * generation applies. At -O1 every group gets the default plan (the hand-written heuristics,
 * byte for byte). At -O2 and -O3 each unique workload (Workload.h) is searched once: its
 * candidate plans (Candidates.h) are applied to fresh copies of the group, candidates whose
 * schedules are identical are measured once, and at most `measured_budget(optlevel)` distinct
 * schedules are timed on the timing simulator between the groups just before and after it
 * (MeasureGroup.h); the fastest is kept (ties keep the earlier, so the default wins unless
 * beaten). Groups of a workload already searched
 * reuse its plan. Budgets count candidates, not seconds: the NEFF is the same on every machine.
 *
 * With a tuning database (TuningDb.h): `--tuning-db` takes a workload's best recorded plan
 * instead of searching it (workloads it lacks are searched as above); neuron-halide-tune
 * (SearchOptions::record_trials) measures up to that many candidates per workload, those the
 * database lacks, records every one, and takes the database's best.
 *
 * At -O3 the driver has the whole program judge the plans (driver/WholeProgramCheck.h), and
 * passes its verdict back as SearchOptions::fixed.
 *
 * A workload's candidates are measured SearchOptions::jobs at a time (MeasureGroup.h's
 * prepare_windows and simulate_windows), judged in search order, so that the choice is the same
 * for any job count.
 *
 * `--model-type` chooses which moves the search tries (Candidates.h); at -O1 nothing is searched.
 * A group the model type gives no choice (an attention under generic) takes its default plan,
 * whatever a tuning session of another model type recorded for its workload.
 *
 * Not yet (issue 16): fusion and residency moves across groups.
 */

#include "autoscheduler/MeasureGroup.h"
#include "autoscheduler/TuningDb.h"
#include "autoscheduler/Workload.h"
#include "schedules/Group.h"
#include "schedules/SchedulePlan.h"
#include "target/Target.h"

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nhc::autosched {

/** How many of the groups code generation produced just before a searched group its
 *  measurement runs first (ProgramContext::prefix), and how many of those after it it runs
 *  after (ProgramContext::following): the group's loads overlap their compute, it waits on what
 *  they wrote and they on what it writes, as in the program. ViT's small layout groups overlap
 *  three or four neighbours on each side (bench/README.md). */
constexpr int kContextGroups = 4;

/** The default of SearchOptions::prune_above, a heuristic measured, not proven: a candidate
 *  whose estimate is above this many times the estimate of the best candidate simulated so far
 *  is not simulated. Estimates are biased, and by workload (0.79 to 1.51 times the simulated
 *  time on 726 candidates of 54 workloads, the bench protocol's tuning databases in fp32 and
 *  bf16; 1.03 to 1.34 on the dev models' 211, median 1.11), so an estimate is compared with an
 *  estimate. Replayed on those databases, this rule left 104 candidates unsimulated and changed
 *  no choice; comparing with the best simulated time, as before, left 203 and changed six
 *  (bench/cost_model_check.py replays both; bench/README.md). A candidate whose estimate
 *  overshoots by more than that could be skipped although it would have won. */
constexpr double kPruneAbove = 1.1;

/** Distinct schedules measured per workload at an optimisation level (0 at -O1). */
int measured_budget(int optlevel);

/** Plans by workload text (Workload::text). */
using PlanMap = std::map<std::string, sched::SchedulePlan>;

struct SearchOptions {
    int optlevel = 2;
    TuningDb *db = nullptr; ///< --tuning-db, or the tuner's database
    int record_trials = 0;  ///< neuron-halide-tune: candidates per workload, each recorded
    /** Plans decided already (the whole-program check, driver/WholeProgramCheck.h): taken as
     *  they are, before the database and the search. */
    const PlanMap *fixed = nullptr;
    /** A candidate whose analytic estimate (MeasureGroup.h) is above this many times the
     *  estimate of the best candidate simulated so far is not simulated (0: every candidate is).
     *  Tuning sessions, which record every candidate, simulate them all. */
    double prune_above = kPruneAbove;
    /** Candidates measured at once (--num-parallel-jobs); the plans chosen do not depend on it. */
    int jobs = 1;
    /** --model-type: which move families the search tries (Candidates.h). */
    std::string model_type = "generic";
    /** Whether candidates that make a whole-model move (SchedulePlan::whole_model_move, -O3)
     *  are tried; -O3's whole-program check compiles the program without them too. */
    bool whole_model_moves = true;
};

struct SearchStats {
    int fixed = 0;      ///< workloads whose plan was given (SearchOptions::fixed)
    int from_db = 0;    ///< workloads whose plan came from the tuning database
    int recorded = 0;   ///< candidates recorded in the tuning database
    int workloads = 0;  ///< workloads searched
    int reused = 0;     ///< groups that took an already searched workload's plan
    int measured = 0;   ///< candidates timed on the simulator
    int pruned = 0;     ///< candidates only estimated: far above the best's (prune_above)
    int infeasible = 0; ///< candidates the code generator or Halide refused
    /** Summed over searched workloads: the time of the group between its neighbours
     *  (MeasureGroup.h) with the default plan, and with the chosen one. */
    double default_ns = 0;
    double chosen_ns = 0;
};

class Autoscheduler {
public:
    Autoscheduler(const Graph &g, const target::TargetInfo &target, const SearchOptions &options);

    /** The plan for the group `probe` (built, not scheduled), whose outputs in `output_perm`
     *  are stored permuted; `build` makes a fresh copy of it for each candidate, `context` says
     *  what the program runs before it (called only when the workload is searched). */
    sched::SchedulePlan plan_for(const sched::Group &probe,
                                 const std::map<std::string, std::vector<int64_t>> &output_perm,
                                 const std::function<sched::Group()> &build,
                                 const std::function<ProgramContext()> &context);

    const SearchStats &stats() const { return stats_; }
    /** The plan of every workload that had a choice, as decided so far. */
    const PlanMap &chosen() const { return chosen_; }
    /** By workload text, for each workload searched here whose default and chosen plans were
     *  both simulated: the default's time between its neighbours over the chosen plan's (1 when
     *  the default was chosen). */
    const std::map<std::string, double> &window_gains() const { return window_gains_; }
    /** One line for the log: what the search did over the whole program. */
    std::string summary() const;

private:
    /** One workload's search so far: the best candidate simulated, the default's time. */
    struct SearchRun {
        bool recording = false; ///< a tuning session: every candidate simulated and recorded
        double prune_above = 0; ///< SearchOptions::prune_above, 0 when recording
        int measured = 0;       ///< candidates judged (or recorded by earlier sessions)
        sched::SchedulePlan best;
        double best_ns = 0, default_ns = 0;
        double best_estimated_ns = 0; ///< the best's estimate
        bool found = false, default_measured = false;
        /** A candidate estimated above this is not simulated: prune_above times the best's
         *  estimate. */
        double simulate_below() const {
            return found && prune_above > 0 ? prune_above * best_estimated_ns
                                            : std::numeric_limits<double>::infinity();
        }
    };

    bool searches() const;
    /** Of a wave's prepared windows, those to simulate at once: within the bound, and within
     *  the bound the wave's earlier candidates would likely set once simulated. */
    std::vector<size_t> likely_simulated(const std::vector<Window> &windows,
                                         const SearchRun &run) const;
    /** Judges one candidate in search order: pruned above the bound, else simulated (if the
     *  wave did not), logged, recorded in a tuning session, and compared with the best. */
    void judge(const Workload &w, const sched::SchedulePlan &plan, const std::string &text,
               Window &window, SearchRun &run);
    sched::SchedulePlan search(const sched::Group &probe, const Workload &w,
                               const std::function<sched::Group()> &build,
                               const ProgramContext &context);
    /** The database's best plan for the workload, if it has a feasible record. */
    std::optional<sched::SchedulePlan> recorded_best(const Workload &w) const;

    const Graph &g_;
    const target::TargetInfo &target_;
    SearchOptions opts_;
    PlanMap chosen_;
    std::map<std::string, double> window_gains_;
    SearchStats stats_;
};

} // namespace nhc::autosched

#endif
