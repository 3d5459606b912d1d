#ifndef NHC_SCHEDULES_SCHEDULESCRIPTNAMES_H
#define NHC_SCHEDULES_SCHEDULESCRIPTNAMES_H

/** \file
 * Loop names shared by applying and printing schedule scripts (internal to src/schedules).
 * Halide names a stage's loops by qualified names (`k$x.ko` after splitting the RVar k$x) and
 * matches a directive's unqualified name against the last components. Scripts write RVars as in
 * Halide C++: `k` for the first dimension of the RDom k, `k.y` for its second.
 */

#include "schedules/ScheduleScript.h"

#include <optional>
#include <string>

namespace nhc::sched {

/** A loop of a stage as Halide's scheduling calls take it: unqualified name, RVar or Var. */
struct ScriptLoop {
    std::string name;
    bool rvar = false;
};

/** Halide's var_name_match (not exported): `dim` is `name` or ends with `.name`. */
bool loop_name_matches(const std::string &dim, const std::string &name);

/** The loop of a stage that a script name refers to, if any. */
std::optional<ScriptLoop> find_loop(const Halide::Internal::Definition &d, const std::string &name);

/** The script name of a loop: its last component, with RVars written `k` or `k.y`. */
std::string friendly_loop_name(const std::string &halide_name,
                               const Halide::Internal::Definition &d);

/** The script names of a stage's loops, innermost first, comma-separated (for messages). */
std::string loop_list(const Halide::Internal::Definition &d);

/** A Halide CompileError's text on one line, without Halide's "Error:" prefix, with the group's
 *  Func names replaced by the stage names of scripts, shortened if very long. */
std::string halide_message(const Halide::CompileError &e,
                           const std::vector<std::pair<std::string, Halide::Func>> &stages);

/** Why a split with tail `t` cannot be lowered (PredicateStores), or ""
 * (ScheduleScriptSplits.cpp). */
std::string predicate_tail_problem(Halide::TailStrategy t);

/** Why a split of an output stage's definition `d` (pure vars `args`, output `shape`) cannot be
 *  lowered: ShiftInwards by more than the extent, RoundUp that does not divide it; or "". */
std::string output_split_problem(const Halide::Internal::Definition &d,
                                 const std::vector<std::string> &args, const Shape &shape);

} // namespace nhc::sched

#endif
