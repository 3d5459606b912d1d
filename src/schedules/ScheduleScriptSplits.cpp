// Schedule scripts: the splits the NeuronCore lowering cannot take, refused when the script is
// applied (NHC_ESCH117, docs/errors.md) instead of as a NEFF the loader refuses. Halide lowers
// every tail strategy, but:
//  - Predicate, PredicateLoads and PredicateStores predicate vector lanes; scripts have no
//    vectorize, and Halide 14's loop partitioning recurses without end on such a tail of a scalar
//    loop;
//  - an output's extents are its tensor's: ShiftInwards by more than the loop's extent shifts the
//    first tile before the tensor's start, and RoundUp that does not divide the extent writes past
//    its end (Halide's own asserts for both are compiled out). GuardWithIf peels the tail and is
//    always safe.
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
    return t == TailStrategy::RoundUp ? "RoundUp" : "ShiftInwards";
}

} // namespace

std::string predicate_tail_problem(Halide::TailStrategy t) {
    if (t != TailStrategy::Predicate && t != TailStrategy::PredicateLoads &&
        t != TailStrategy::PredicateStores)
        return "";
    return "a Predicate tail predicates the lanes of a vectorized loop, and the NeuronCore code "
           "generator has no vectorized loops; use TailStrategy::GuardWithIf (the tail becomes a "
           "tile of its own), ShiftInwards or RoundUp";
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
        bool rounds_out = s.tail == TailStrategy::RoundUp && e % factor != 0;
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
