#include "autoscheduler/Candidates.h"

#include "schedules/DefaultSchedule.h"

namespace nhc::autosched {

namespace {

using Operands = sched::MatmulPlan::Operands;

constexpr Operands kMovements[] = {Operands::Auto, Operands::WholeRows, Operands::AResident,
                                   Operands::BResident, Operands::Streamed};

sched::SchedulePlan matmul_plan(Operands o, int max_n) {
    sched::SchedulePlan p;
    p.matmul = {o, max_n};
    return p;
}

std::vector<sched::SchedulePlan> matmul_plans(const target::TargetInfo &t, int optlevel) {
    // Output tiles: the default (0: one PSUM bank of columns), half and a quarter of a bank.
    // Narrower tiles start the PE sooner after the first operand chunk and give the epilogue
    // engines smaller pieces to overlap with it, in more instructions and DMAs.
    const int n_limits[] = {0, t.matmul_max_moving / 2, t.matmul_max_moving / 4};
    std::vector<sched::SchedulePlan> plans;
    if (optlevel <= 2) {
        for (Operands o : kMovements)
            plans.push_back(matmul_plan(o, 0));
        for (int n : n_limits)
            if (n)
                plans.push_back(matmul_plan(Operands::Auto, n));
        return plans;
    }
    for (Operands o : kMovements)
        for (int n : n_limits)
            plans.push_back(matmul_plan(o, n));
    return plans;
}

} // namespace

std::vector<sched::SchedulePlan> candidate_plans(const sched::Group &g,
                                                 const target::TargetInfo &target, int optlevel) {
    if (optlevel < 2 || !sched::takes_matmul_plan(g))
        return {sched::SchedulePlan()};
    return matmul_plans(target, optlevel);
}

} // namespace nhc::autosched
