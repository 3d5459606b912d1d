#ifndef NHC_DRIVER_WHOLEPROGRAMCHECK_H
#define NHC_DRIVER_WHOLEPROGRAMCHECK_H

/** \file
 * -O3's whole-model judge (issue 16). The autoscheduler picks each workload's plan between a
 * few neighbouring groups (autoscheduler/MeasureGroup.h), which the whole program can disagree
 * with: a window winner of GPT-2 fp32 costs the program 31 us. At -O3 the program decides: it is
 * compiled with the windows' plans and timed on the timing simulator (timing-only, weights
 * without their bytes), then, workload by workload in the order of their text, compiled and timed
 * with that workload's plan put back to the default, and each change that makes the program
 * faster is kept, except a plan that won its window by a wide margin (kTrustedWindowGain in the
 * .cpp), which is kept untried. Then, if any tensor stayed in SBUF between groups
 * (neff/ForwardStores.h), the program without that is timed, and kept if faster; if they still
 * stay, the program with every forwarded tile copied rather than read where it is, likewise. Then
 * the program with its weights prefetched (neff/OnChipAllocator.h: each group keeps room for the
 * next group's weights out of its own allocation, so that their loads can run while it computes),
 * likewise. When the search chose a plan that makes a whole-model move
 * (SchedulePlan::whole_model_move), all of that is done again for the search without such moves,
 * and the faster program kept. Last, all of it for the program of the -O2 search, kept if faster:
 * -O3 is never slower than -O2. Last, when the program kept has loads broadcast over the
 * partitions, all of it for the search with them built on the PE (CompileOptions::
 * broadcast_on_pe), kept if faster. One code
 * generation per workload whose plan is not the default, plus one to four, for each of the
 * three or four searches (a workload kept untried costs none).
 * Assumes `g` has been through the graph passes.
 */

#include "autoscheduler/Autoschedule.h"
#include "driver/Options.h"
#include "graph/Graph.h"

namespace nhc {

struct CheckedPlans {
    autosched::PlanMap plans;     ///< what to compile `g` with (CompileOptions::fixed_plans)
    double program_ns = 0;        ///< the simulated time of the program with them
    int tried = 0;                ///< plans timed against the default in the program
    int put_back = 0;             ///< of those, put back to the default
    int trusted = 0;              ///< plans kept untried: their windows' gain was decisive
    bool keep_resident = true;    ///< CompileOptions::keep_resident: tensors kept in SBUF
    bool read_in_place = true;    ///< CompileOptions::read_in_place: kept tiles read where they are
    bool broadcast_on_pe = false; ///< CompileOptions::broadcast_on_pe
    int broadcast_loads = 0;      ///< loads of the searched program it could build on the PE
    /** CompileOptions::whole_model_moves: the plans come from a search that tried them. */
    bool whole_model_moves = true;
    /** The -O level of the search the plans come from (CompileOptions::optlevel to compile
     *  with: a workload without a plan is searched as that search did). */
    int search_level = 3;
    /** CompileOptions::prefetch_bytes: empty for none. */
    std::vector<int64_t> prefetch;
    /** Per group, the bytes of its stages that live as long as it does, in the program with
     *  `plans` (CompileOptions::group_lifetime_bytes). */
    std::vector<int64_t> group_lifetime_bytes;
};

/** The plans to compile `g` with at -O3 (the options' other settings as given). */
CheckedPlans check_plans_on_program(const Graph &g, const CompileOptions &o);

/** Sets `o` to compile with `c`'s plans and program-wide choices, as -O3 does (driver/Compile,
 *  bench/model_bench). `o` then points into `c`, which must outlive it. */
void use_checked_plans(const CheckedPlans &c, CompileOptions &o);

} // namespace nhc

#endif
