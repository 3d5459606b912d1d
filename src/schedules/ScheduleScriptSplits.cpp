// Schedule scripts: the splits the NeuronCore lowering cannot take, refused when the script is
// applied (NHC_ESCH117, docs/errors.md) instead of as a NEFF the loader refuses. Halide lowers
// every tail strategy, but:
//  - PredicateStores guards only the stores of the tail; on a scalar loop (scripts have no
//    vectorize) whose extent is smaller than the factor, Halide 14's loop partitioning recurses
//    without end. An output's extents are known (refused where the factor exceeds them); the
//    extents of stages inside the group are not known when the block is applied (refused).
//    (Predicate guards the whole tail, as GuardWithIf does on scalar loops.)
//  - an output's extents are its tensor's: ShiftInwards by more than the loop's extent shifts the
//    first tile before the tensor's start, and RoundUp (or PredicateLoads, which does not guard
//    the stores) that does not divide the extent writes past its end (Halide's own asserts for
//    these are compiled out). GuardWithIf and Predicate guard the tail and are always safe.
// Stages inside the group have the extents bounds inference gives them; what their splits make
// them read outside an HBM input is refused by the code generator (NHC_EGEN019).

#include "schedules/ScheduleScriptNames.h"

#include "support/Error.h"

#include <map>

namespace nhc::sched {

namespace {

using Halide::TailStrategy;
using Halide::Internal::Definition;
using Halide::Internal::Split;

std::string tail_text(TailStrategy t) {
    return t == TailStrategy::RoundUp          ? "RoundUp"
           : t == TailStrategy::PredicateLoads ? "PredicateLoads"
                                               : "ShiftInwards";
}

const char *const kStoresOnly =
    "Halide 14 cannot lower a PredicateStores tail on a scalar loop whose extent is smaller than "
    "the factor (its loop partitioning recurses without end)";

} // namespace

std::string predicate_tail_problem(Halide::TailStrategy t) {
    if (t != TailStrategy::PredicateStores)
        return "";
    return std::string(kStoresOnly) +
           ", and the extents of a stage inside the group are not known when the block is "
           "applied; use TailStrategy::Predicate or GuardWithIf (the tail becomes a tile of its "
           "own)";
}

std::string output_split_problem(const Definition &d, const std::vector<std::string> &args,
                                 const Shape &shape) {
    std::map<std::string, int64_t> extent; // per loop, as the splits so far leave it
    for (size_t i = 0; i < args.size(); i++)
        extent[args[i]] = shape[shape.size() - 1 - i]; // Halide dim i is ONNX axis rank-1-i
    for (const Split &s : d.schedule().splits()) {
        auto old = extent.find(s.old_var);
        const int64_t *f = Halide::Internal::as_const_int(s.factor);
        if (s.is_fuse()) {
            auto in = extent.find(s.inner), out = extent.find(s.outer);
            if (in != extent.end() && out != extent.end())
                extent[s.old_var] = in->second * out->second;
            continue;
        }
        if (!s.is_split() || old == extent.end() || !f)
            continue;
        int64_t e = old->second, factor = *f;
        bool shifts_out = s.tail == TailStrategy::ShiftInwards && factor > e;
        // PredicateLoads guards the loads only: its stores run whole tiles, as RoundUp's.
        bool rounds_out =
            (s.tail == TailStrategy::RoundUp || s.tail == TailStrategy::PredicateLoads) &&
            e % factor != 0;
        if (s.tail == TailStrategy::PredicateStores && factor > e)
            return "loop " + friendly_loop_name(s.old_var, d) + " of the output has extent " +
                   std::to_string(e) + ", smaller than the split factor " + std::to_string(factor) +
                   ": " + kStoresOnly + "; split by at most " + std::to_string(e) +
                   ", or use TailStrategy::Predicate or GuardWithIf";
        if (shifts_out || rounds_out)
            return "loop " + friendly_loop_name(s.old_var, d) + " of the output has extent " +
                   std::to_string(e) + ", which the split factor " + std::to_string(factor) +
                   (shifts_out ? " exceeds" : " does not divide") +
                   ": with TailStrategy::" + tail_text(s.tail) + " the tiles would " +
                   (shifts_out ? "start before" : "run past the end of") +
                   " the tensor; split by a factor of at most " + std::to_string(e) +
                   (shifts_out ? "" : " that divides it") + ", or use TailStrategy::GuardWithIf";
        extent[s.outer] = (e + factor - 1) / factor;
        extent[s.inner] = std::min(e, factor);
    }
    return "";
}

} // namespace nhc::sched
