#include "driver/WholeProgramCheck.h"

#include "driver/Codegen.h"
#include "runtime/Simulator.h"
#include "support/Error.h"
#include "support/Log.h"

#include <algorithm>
#include <map>
#include <string>

namespace nhc {

namespace {

/** A plan whose window (autoscheduler/MeasureGroup.h) was at least this many times faster than
 *  the default's is kept without a trial of the program with the default: one code generation
 *  per such workload saved (ResNet-50 bf16 -O3 tried 16 plans, of which the convolutions' 14
 *  were each 12-35% faster in their windows). Measured on the -O3 trials of 11 runs (dev_unet,
 *  dev_cnn, dev_bert_layer, dev_gpt_block, ResNet-50, MobileNetV2, EfficientNet-B0, BERT-base,
 *  ViT-B/16; 48 distinct trials): every plan the program put back had won its window by 2.45%
 *  or less, and every plan that had won by 2.75% or more made the program faster, by 0.3 to
 *  266 us (bench/README.md). A heuristic with twice that margin, not a bound. */
constexpr double kTrustedWindowGain = 1.05;

/** The DMAs of `p` that CompileOptions::broadcast_on_pe would build on the PE instead
 *  (codegen::pe_broadcast_candidate). */
int broadcast_loads(const neff::Program &p) {
    int n = 0;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            n += codegen::pe_broadcast_candidate(i);
    return n;
}

/** The simulated time of `g` compiled with `fixed` (and the search for anything else). */
double program_ns(const Graph &g, CompileOptions o, const autosched::PlanMap *fixed,
                  autosched::PlanMap *chosen, int *loads_kept_resident = nullptr,
                  std::vector<int64_t> *group_lifetime_bytes = nullptr,
                  std::map<std::string, double> *window_gains = nullptr,
                  int *broadcasts = nullptr) {
    o.fixed_plans = fixed;
    o.chosen_plans = chosen;
    o.window_gains = window_gains;
    o.loads_kept_resident = loads_kept_resident;
    o.group_lifetime_bytes = group_lifetime_bytes;
    o.without_weight_bytes = true;
    o.used_schedules = nullptr;
    neff::Program p = generate_program(g, o);
    if (broadcasts)
        *broadcasts = broadcast_loads(p);
    rt::Machine machine(target::target_by_name(o.target), p, /*functional=*/false);
    return rt::simulate(machine).summary.total_ns;
}

/** Each plan put back to the default if the program is faster so; `c` holds the program as
 *  searched, `window_gains` the search's gain of each choice between its neighbours. */
void put_back_plans(const Graph &g, const CompileOptions &o,
                    const std::map<std::string, double> &window_gains, CheckedPlans &c) {
    for (const auto &[workload, plan] : autosched::PlanMap(c.plans)) {
        if (plan.is_default())
            continue;
        auto gain = window_gains.find(workload);
        bool searched = gain != window_gains.end(); // not when the tuning database gave it
        double window_gain = searched ? gain->second : 0;
        if (window_gain >= kTrustedWindowGain) {
            c.trusted++;
            log_info("whole-program check: ", plan.describe(),
                     " kept untried: ", (window_gain - 1) * 100,
                     "% faster than the default between its neighbours");
            continue;
        }
        autosched::PlanMap trial = c.plans;
        trial[workload] = sched::SchedulePlan();
        std::vector<int64_t> lifetimes;
        double ns = program_ns(g, o, &trial, nullptr, nullptr, &lifetimes);
        c.tried++;
        log_info("whole-program check: ", plan.describe(), " (",
                 searched ? std::to_string((window_gain - 1) * 100) + "%" : "not searched",
                 " between its neighbours) -> default: ", c.program_ns / 1000, " -> ", ns / 1000,
                 " us", ns < c.program_ns ? ", put back" : "");
        if (ns < c.program_ns) {
            c.program_ns = ns;
            c.plans = std::move(trial);
            c.group_lifetime_bytes = std::move(lifetimes);
            c.put_back++;
        }
    }
}

/** Tensors kept in SBUF between groups, then their tiles read where they are: each turned off
 *  if the program is faster without. */
void check_residency(const Graph &g, const CompileOptions &o, int kept_resident, CheckedPlans &c) {
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
    if (c.keep_resident && kept_resident > 0 && o.read_in_place) {
        CompileOptions copied = o;
        copied.read_in_place = false;
        double ns = program_ns(g, copied, &c.plans, nullptr);
        log_info("whole-program check: kept tiles read in place -> copied: ", c.program_ns / 1000,
                 " -> ", ns / 1000, " us", ns < c.program_ns ? ", copied" : "");
        if (ns < c.program_ns) {
            c.program_ns = ns;
            c.read_in_place = false;
        }
    }
}

/** Weights prefetched: each group keeps, out of its own allocation, the room the next group's
 *  stages that live as long as it does took in the program as checked so far (their sizes do
 *  not change with it); kept if the program is faster so. */
void check_prefetch(const Graph &g, const CompileOptions &o, CheckedPlans &c) {
    if (std::all_of(c.group_lifetime_bytes.begin(), c.group_lifetime_bytes.end(),
                    [](int64_t b) { return b == 0; }))
        return;
    CompileOptions with = o;
    with.keep_resident = o.keep_resident && c.keep_resident;
    with.read_in_place = o.read_in_place && c.read_in_place;
    with.prefetch_bytes = &c.group_lifetime_bytes;
    double ns = 0;
    try {
        ns = program_ns(g, with, &c.plans, nullptr);
    } catch (const UserError &e) { // the room kept leaves a group too little SBUF
        log_info("whole-program check: weights prefetched a group ahead: not feasible: ",
                 e.formatted());
        return;
    }
    log_info("whole-program check: weights prefetched a group ahead: ", c.program_ns / 1000, " -> ",
             ns / 1000, " us", ns < c.program_ns ? ", prefetched" : "");
    if (ns < c.program_ns) {
        c.program_ns = ns;
        c.prefetch = c.group_lifetime_bytes;
    }
}

/** The check of the program the search makes with `o`. */
CheckedPlans check_search(const Graph &g, const CompileOptions &o) {
    CheckedPlans c;
    c.whole_model_moves = o.whole_model_moves;
    c.search_level = o.optlevel;
    int kept_resident = 0;
    std::map<std::string, double> window_gains;
    c.program_ns = program_ns(g, o, nullptr, &c.plans, &kept_resident, &c.group_lifetime_bytes,
                              &window_gains, &c.broadcast_loads);
    put_back_plans(g, o, window_gains, c);
    check_residency(g, o, kept_resident, c);
    check_prefetch(g, o, c);
    return c;
}

} // namespace

CheckedPlans check_plans_on_program(const Graph &g, const CompileOptions &o) {
    CheckedPlans c = check_search(g, o);
    // A whole-model move chosen in a window changes the windows of the groups after it, and so
    // their choices: the program searched without such moves may be the faster (GPT-2 fp32).
    bool moved = std::any_of(c.plans.begin(), c.plans.end(),
                             [](const auto &p) { return p.second.whole_model_move(); });
    if (o.whole_model_moves && moved) {
        CompileOptions without = o;
        without.whole_model_moves = false;
        log_info("whole-program check: the search again without whole-model moves");
        CheckedPlans plain = check_search(g, without);
        log_info("whole-program check: with whole-model moves ", c.program_ns / 1000,
                 " us, without ", plain.program_ns / 1000, " us");
        if (plain.program_ns < c.program_ns)
            c = plain;
    }
    // The program of -O2's search, checked the same way: -O3's wider search picks each plan in
    // its window, and picks that interact can leave the program slower than -O2's (BERT-base
    // fp32: 1,899.9 against 1,626.4 us), so -O3 keeps whichever is faster.
    if (o.optlevel >= 3) {
        CompileOptions o2 = o;
        o2.optlevel = 2;
        log_info("whole-program check: the program of the -O2 search");
        CheckedPlans narrower = check_search(g, o2);
        log_info("whole-program check: -O3's search ", c.program_ns / 1000, " us, -O2's ",
                 narrower.program_ns / 1000, " us");
        if (narrower.program_ns < c.program_ns)
            c = narrower;
    }
    // Loads broadcast over the partitions built on the PE (CompileOptions::broadcast_on_pe): the
    // search and its check again with them, kept if faster. They free the DMA queues of a
    // DMA-bound program (BERT-base bf16: 62.9 of the 245 MB it moves are such loads) for PE
    // and copy work, and change what the windows choose; some programs lose with them
    // (dev_gpt_block fp32 at -O2, bench/README.md). A program with no such load is not searched
    // again (ResNet-50).
    if (!o.broadcast_on_pe && c.broadcast_loads > 0) {
        CompileOptions on = o;
        on.broadcast_on_pe = true;
        log_info("whole-program check: the search again with broadcasts on the PE");
        CheckedPlans pe = check_search(g, on);
        pe.broadcast_on_pe = true;
        log_info("whole-program check: broadcasts by DMA ", c.program_ns / 1000, " us, on the PE ",
                 pe.program_ns / 1000, " us");
        if (pe.program_ns < c.program_ns)
            c = pe;
    }
    log_info("whole-program check: ", c.tried, " plans tried against the default, ", c.put_back,
             " put back, ", c.trusted, " kept untried; whole-model moves ",
             c.whole_model_moves ? "" : "not ", "made; tensors ", c.keep_resident ? "" : "not ",
             "kept resident", c.keep_resident && !c.read_in_place ? ", copied" : "",
             c.prefetch.empty() ? "" : "; weights prefetched",
             c.broadcast_on_pe ? "; broadcasts on the PE" : "", "; the program takes ",
             c.program_ns / 1000, " us");
    return c;
}

void use_checked_plans(const CheckedPlans &c, CompileOptions &o) {
    o.fixed_plans = &c.plans;
    o.keep_resident = c.keep_resident;
    o.read_in_place = c.read_in_place;
    o.broadcast_on_pe = c.broadcast_on_pe;
    o.whole_model_moves = c.whole_model_moves;
    o.optlevel = c.search_level;
    if (!c.prefetch.empty())
        o.prefetch_bytes = &c.prefetch;
}

} // namespace nhc
