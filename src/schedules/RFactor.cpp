#include "schedules/RFactor.h"

#include "schedules/ScheduleScriptNames.h"
#include "support/Error.h"

#include <algorithm>

namespace nhc::sched {

namespace {

using Halide::Internal::Definition;
using Halide::Internal::Split;

std::string last_component(const std::string &s) {
    return s.substr(s.rfind('.') + 1);
}

/** The split of `d` whose outer loop the script calls `outer`, or nullptr. */
const Split *split_making(const Definition &d, const std::string &outer) {
    for (const Split &s : d.schedule().splits())
        if (s.is_split() && loop_name_matches(s.outer, outer))
            return &s;
    return nullptr;
}

} // namespace

Halide::Func rfactor_stage(Group &g, Halide::Func f, const std::string &role,
                           const std::string &outer, const std::string &var, std::string &why) {
    Halide::Internal::Function fn = f.function();
    if (fn.updates().size() != 1) {
        why = "only a stage with one update definition can be rfactored";
        return Halide::Func();
    }
    const Definition &d = fn.update(0);
    const Split *s = split_making(d, outer);
    if (!s) {
        why = "loop '" + outer + "' is not the outer loop of a split of an RVar of " + role +
              ".update(0) (split the RVar in the same directive, before rfactor)";
        return Halide::Func();
    }
    Group::RFactorSplit record{fn.name(),
                               "",
                               friendly_loop_name(s->old_var, d),
                               last_component(s->outer),
                               last_component(s->inner),
                               0,
                               var};
    const int64_t *factor = Halide::Internal::as_const_int(s->factor);
    record.factor = factor ? static_cast<int>(*factor) : 0;
    Halide::Func intm;
    try {
        intm = f.update(0).rfactor(Halide::RVar(record.outer), Halide::Var(var));
    } catch (const Halide::CompileError &e) {
        why = e.what();
        return Halide::Func();
    }
    record.intm = intm.name();
    auto at = std::find_if(g.op.stages.begin(), g.op.stages.end(),
                           [&](const alg::Stage &st) { return st.func.name() == fn.name(); });
    nhc_assert(at != g.op.stages.end(), "rfactored stage " << role << " is not in the group");
    size_t i = static_cast<size_t>(at - g.op.stages.begin());
    alg::Stage stage;
    stage.role = at->role + "_intm";
    stage.func = intm;
    g.op.stages.insert(at, stage);
    g.stage_node.insert(g.stage_node.begin() + static_cast<std::ptrdiff_t>(i), g.stage_node.at(i));
    g.rfactors.push_back(record);
    return intm;
}

} // namespace nhc::sched
