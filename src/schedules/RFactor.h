#ifndef NHC_SCHEDULES_RFACTOR_H
#define NHC_SCHEDULES_RFACTOR_H

/** \file
 * A reduction in two stages (Halide's rfactor; issue 16's two-stage K reduction): the update of
 * a stage whose RVar a schedule has split into outer x inner becomes a new stage that reduces
 * over the inner RVar for each value of the outer one (now a pure var), and the stage itself
 * sums those partial results over the outer RVar. A matmul's accumulator so split sums per
 * block of K in PSUM, and adds the blocks' sums in SBUF (MatmulPlan::k_block).
 *
 * The new stage joins the group (Group::op.stages, before the reducing stage, with the role
 * `<role>_intm`), so that schedules and scripts can place it, and the split is recorded
 * (Group::rfactors) for the script printer: Halide's definitions keep no trace of it.
 *
 * Assumes the split was made on update 0 of the stage, in this group, and that the update is an
 * associative reduction Halide can factor (a sum: the matmul accumulators).
 */

#include "schedules/Group.h"

#include <string>

namespace nhc::sched {

/** rfactor(`outer`, `var`) on update 0 of stage `f` (role `role`), whose RVar was split into
 *  `outer` x an inner RVar by an earlier directive. Returns the new stage, or an undefined Func
 *  with `why` set when there is no such split or Halide refuses. */
Halide::Func rfactor_stage(Group &g, Halide::Func f, const std::string &role,
                           const std::string &outer, const std::string &var, std::string &why);

} // namespace nhc::sched

#endif
