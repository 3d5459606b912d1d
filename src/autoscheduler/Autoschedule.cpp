#include "autoscheduler/Autoschedule.h"

#include "autoscheduler/Candidates.h"
#include "autoscheduler/MeasureGroup.h"
#include "autoscheduler/Workload.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/ScheduleScript.h"
#include "support/Error.h"
#include "support/Log.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

namespace nhc::autosched {

namespace {

/** The schedule a plan gives a fresh group, as script text (what makes two candidates the
 *  same), or "" when the default schedules refuse the group. */
std::string scheduled_text(sched::Group &fresh, const sched::SchedulePlan &plan,
                           const target::TargetInfo &target) {
    try {
        sched::apply_default_schedule(fresh, target, plan);
    } catch (const UserError &) {
        return "";
    }
    sched::ScheduleScript s;
    s.blocks.push_back(sched::describe_schedule(fresh));
    return s.to_string();
}

std::string group_name(const sched::Group &g) {
    std::string name;
    for (const Node *n : g.nodes)
        name += (name.empty() ? "" : "+") + n->name;
    return name;
}

std::string us(double ns) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(1);
    os << ns / 1000 << " us";
    return os.str();
}

} // namespace

int measured_budget(int optlevel) {
    // Issue 16: -O2 measures at most 8 candidates per workload, -O3 at most 64.
    return optlevel <= 1 ? 0 : optlevel == 2 ? 8 : 64;
}

Autoscheduler::Autoscheduler(const Graph &g, const target::TargetInfo &target,
                             const SearchOptions &options)
    : g_(g), target_(target), opts_(options) {}

bool Autoscheduler::searches() const {
    return opts_.record_trials > 0 || measured_budget(opts_.optlevel) > 0;
}

sched::SchedulePlan Autoscheduler::plan_for(
    const sched::Group &probe, const std::map<std::string, std::vector<int64_t>> &output_perm,
    const std::function<sched::Group()> &build, const std::function<ProgramContext()> &context) {
    // A group with no choice has nothing to search or look up (the widest candidate list).
    // Nor one whose model type gives it none (an attention under generic), whatever the tuning
    // database recorded for it under another.
    if ((!searches() && !opts_.db && !opts_.fixed) ||
        candidate_plans(probe, target_, 3, opts_.model_type).size() < 2)
        return {};
    Workload w = workload_of(g_, probe, output_perm, target_.name);
    if (auto it = chosen_.find(w.text); it != chosen_.end()) {
        stats_.reused++;
        return it->second;
    }
    sched::SchedulePlan plan;
    if (auto fixed = opts_.fixed ? opts_.fixed->find(w.text) : PlanMap::const_iterator();
        opts_.fixed && fixed != opts_.fixed->end()) {
        plan = fixed->second;
        stats_.fixed++;
    } else if (std::optional<sched::SchedulePlan> recorded =
                   opts_.db && opts_.record_trials == 0 ? recorded_best(w) : std::nullopt) {
        plan = *recorded;
        stats_.from_db++;
        log_info("autoschedule: ", group_name(probe), " (workload ", w.hash,
                 "): from the tuning database, ", plan.describe());
    } else if (searches()) {
        ProgramContext cx = context();
        cx.workload = w.text; // groups of this workload after it take each candidate's plan
        plan = search(probe, w, build, cx);
    }
    chosen_.emplace(w.text, plan);
    return plan;
}

std::optional<sched::SchedulePlan> Autoscheduler::recorded_best(const Workload &w) const {
    std::optional<std::pair<std::string, double>> best = opts_.db->best_plan(w.text, target_.name);
    if (!best)
        return std::nullopt;
    sched::SchedulePlan plan;
    if (!sched::parse_plan(best->first, plan))
        user_error("NHC_EIO003", "tuning database: the plan '", best->first, "' of workload ",
                   w.hash, " is not one this compiler writes; the file is damaged");
    return plan;
}

sched::SchedulePlan Autoscheduler::search(const sched::Group &probe, const Workload &w,
                                          const std::function<sched::Group()> &build,
                                          const ProgramContext &context) {
    TimedStep step("autoschedule: " + group_name(probe));
    stats_.workloads++;
    SearchRun run;
    run.recording = opts_.db && opts_.record_trials > 0;
    run.prune_above = run.recording ? 0 : opts_.prune_above;
    // A tuning session resumes: candidates recorded by earlier sessions count and are skipped.
    std::set<std::string> recorded;
    if (run.recording)
        for (const std::string &plan : opts_.db->recorded_plans(w.text, target_.name))
            recorded.insert(plan);
    run.measured = static_cast<int>(recorded.size());
    const int budget = run.recording ? opts_.record_trials : measured_budget(opts_.optlevel);
    // The distinct schedules to measure, in search order, up to the budget.
    std::set<std::string> seen;
    std::vector<sched::SchedulePlan> plans;
    std::vector<sched::Group> groups;
    std::vector<std::string> texts;
    for (const sched::SchedulePlan &plan :
         candidate_plans(probe, target_, opts_.optlevel, opts_.model_type)) {
        if (run.measured + static_cast<int>(plans.size()) >= budget)
            break;
        if ((plan.output_resident && !context.may_keep_output) ||
            (plan.whole_model_move() && !opts_.whole_model_moves))
            continue;
        sched::Group fresh = build();
        std::string text = scheduled_text(fresh, plan, target_);
        if (text.empty() || !seen.insert(text).second || recorded.count(plan.describe()))
            continue;
        plans.push_back(plan);
        groups.push_back(std::move(fresh));
        texts.push_back(std::move(text));
    }
    // Measured `jobs` at a time: a wave prepares (lowers, selects, estimates) its candidates at
    // once and simulates at once those the candidates before them are unlikely to prune; then
    // each is judged in search order with the bound it would have had measured alone (one the
    // judging finds within its bound but not simulated is simulated then), so that the choice,
    // the log and the records are the same for any job count.
    const size_t jobs = static_cast<size_t>(std::max(1, opts_.jobs));
    for (size_t first = 0; first < plans.size(); first += jobs) {
        size_t last = std::min(plans.size(), first + jobs);
        std::vector<const sched::Group *> wave;
        for (size_t i = first; i < last; i++)
            wave.push_back(&groups[i]);
        std::vector<Window> windows =
            prepare_windows(wave, g_, target_, context, static_cast<int>(jobs));
        simulate_windows(windows, likely_simulated(windows, run), target_, static_cast<int>(jobs));
        for (size_t i = first; i < last; i++)
            judge(w, plans[i], texts[i], windows[i - first], run);
    }
    if (run.default_measured) {
        stats_.default_ns += run.default_ns;
        stats_.chosen_ns += run.best_ns;
        if (run.found && !run.recording && run.best_ns > 0)
            window_gains_[w.text] = run.default_ns / run.best_ns;
    }
    sched::SchedulePlan best = run.best;
    if (run.recording) // the best of every session's records (the default if none is feasible)
        best = recorded_best(w).value_or(sched::SchedulePlan());
    log_info("autoschedule: ", group_name(probe), " (workload ", w.hash, "): ", run.measured,
             " schedules measured", run.recording ? " or recorded before" : "", ", chose ",
             best.describe(),
             run.found && !run.recording ? ": " + us(run.best_ns) + " with its neighbours" : "",
             run.default_measured ? " (default " + us(run.default_ns) + ")" : std::string());
    return best;
}

std::vector<size_t> Autoscheduler::likely_simulated(const std::vector<Window> &windows,
                                                    const SearchRun &run) const {
    std::vector<size_t> simulate;
    double bound = run.simulate_below();
    for (size_t i = 0; i < windows.size(); i++) {
        const GroupTiming &t = windows[i].timing;
        if (!t.feasible || t.estimated_ns > bound)
            continue;
        simulate.push_back(i);
        // Should this one become the best, the bound of those after it is prune_above times its
        // estimate; the guess is that it does.
        if (run.prune_above > 0)
            bound = std::min(bound, run.prune_above * t.estimated_ns);
    }
    return simulate;
}

void Autoscheduler::judge(const Workload &w, const sched::SchedulePlan &plan,
                          const std::string &text, Window &window, SearchRun &run) {
    const GroupTiming &t = window.timing;
    run.measured++;
    if (t.feasible && t.estimated_ns > run.simulate_below()) {
        stats_.pruned++;
        log_debug("  candidate ", plan.describe(), " (workload ", w.hash, "): estimated ",
                  std::llround(t.estimated_ns), " ns, above ", run.prune_above,
                  "x the best's estimate: not simulated");
        return;
    }
    if (t.feasible && !t.simulated)
        simulate_window(window, target_);
    stats_.measured++;
    if (t.feasible)
        log_debug("  candidate ", plan.describe(), " (workload ", w.hash, "): simulated ",
                  std::llround(t.simulated_ns), " ns, estimated ", std::llround(t.estimated_ns),
                  " ns, busiest engine ", std::llround(t.busiest_ns), " ns");
    else
        log_debug("  candidate ", plan.describe(), ": refused: ", t.why_not);
    if (run.recording) {
        opts_.db->record({w.hash, w.text, target_.name, plan.describe(), text, t.feasible,
                          t.estimated_ns, t.simulated_ns, t.why_not});
        stats_.recorded++;
    }
    if (!t.feasible) {
        stats_.infeasible++;
        return;
    }
    if (plan.is_default()) {
        run.default_measured = true;
        run.default_ns = t.simulated_ns;
    }
    if (!run.found || t.simulated_ns < run.best_ns) {
        run.found = true;
        run.best = plan;
        run.best_ns = t.simulated_ns;
        run.best_estimated_ns = t.estimated_ns;
    }
}

std::string Autoscheduler::summary() const {
    std::ostringstream os;
    os << "autoschedule: -O" << opts_.optlevel << ", " << stats_.workloads
       << " workloads searched, " << stats_.fixed << " given by the whole-program check, "
       << stats_.from_db << " from the tuning database, " << stats_.reused
       << " groups reused a searched plan, " << stats_.measured << " schedules measured ("
       << stats_.infeasible << " refused, " << stats_.pruned
       << " estimated far above the best and not simulated); searched groups with their "
          "neighbours: "
       << us(stats_.default_ns) << " by default, " << us(stats_.chosen_ns) << " chosen";
    if (opts_.record_trials > 0)
        os << "; " << stats_.recorded << " candidates recorded";
    return os.str();
}

} // namespace nhc::autosched
