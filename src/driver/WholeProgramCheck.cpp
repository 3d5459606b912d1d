#include "driver/WholeProgramCheck.h"

#include "driver/Codegen.h"
#include "runtime/Simulator.h"
#include "support/Log.h"

namespace nhc {

namespace {

/** The simulated time of `g` compiled with `fixed` (and the search for anything else). */
double program_ns(const Graph &g, CompileOptions o, const autosched::PlanMap *fixed,
                  autosched::PlanMap *chosen, int *loads_kept_resident = nullptr) {
    o.fixed_plans = fixed;
    o.chosen_plans = chosen;
    o.loads_kept_resident = loads_kept_resident;
    o.without_weight_bytes = true;
    o.used_schedules = nullptr;
    neff::Program p = generate_program(g, o);
    rt::Machine machine(target::target_by_name(o.target), p, /*functional=*/false);
    return rt::simulate(machine).summary.total_ns;
}

} // namespace

CheckedPlans check_plans_on_program(const Graph &g, const CompileOptions &o) {
    CheckedPlans c;
    int kept_resident = 0;
    c.program_ns = program_ns(g, o, nullptr, &c.plans, &kept_resident);
    for (const auto &[workload, plan] : autosched::PlanMap(c.plans)) {
        if (plan.is_default())
            continue;
        autosched::PlanMap trial = c.plans;
        trial[workload] = sched::SchedulePlan();
        double ns = program_ns(g, o, &trial, nullptr);
        c.tried++;
        log_info("whole-program check: ", plan.describe(), " -> default: ", c.program_ns / 1000,
                 " -> ", ns / 1000, " us", ns < c.program_ns ? ", put back" : "");
        if (ns < c.program_ns) {
            c.program_ns = ns;
            c.plans = std::move(trial);
            c.put_back++;
        }
    }
    if (o.keep_resident && kept_resident > 0) {
        CompileOptions without = o;
        without.keep_resident = false;
        double ns = program_ns(g, without, &c.plans, nullptr);
        log_info("whole-program check: tensors kept resident -> not: ", c.program_ns / 1000, " -> ",
                 ns / 1000, " us", ns < c.program_ns ? ", not kept" : "");
        if (ns < c.program_ns) {
            c.program_ns = ns;
            c.keep_resident = false;
        }
    }
    log_info("whole-program check: ", c.tried, " plans tried against the default, ", c.put_back,
             " put back; tensors ", c.keep_resident ? "" : "not ",
             "kept resident; the program takes ", c.program_ns / 1000, " us");
    return c;
}

} // namespace nhc
