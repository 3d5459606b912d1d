#include "autoscheduler/MeasureGroup.h"

#include "neff/InsertSemaphores.h"
#include "neff/ScheduleInstructions.h"
#include "neff/SelectGroup.h"
#include "runtime/Simulator.h"
#include "support/Error.h"

#include <algorithm>
#include <map>

namespace nhc::autosched {

namespace {

/** The busiest engine's (or DMA queue's) summed estimates: a bound the simulated time meets
 *  when the engines overlap perfectly. */
double busiest_engine_ns(const std::vector<codegen::SelectedInstr> &instrs,
                         const target::TargetInfo &target) {
    std::map<int, double> busy;
    for (const codegen::SelectedInstr &s : instrs)
        busy[static_cast<int>(s.engine)] += codegen::estimated_ns(target, s.engine, s.instr);
    double most = 0;
    for (const auto &[engine, ns] : busy)
        most = std::max(most, ns);
    return most;
}

/** Estimates (the list schedule) and, unless the estimate is above `simulate_below`, simulates
 *  the window `instrs`, into `t`. */
void estimate_and_simulate(std::vector<codegen::SelectedInstr> instrs, neff::Program prog,
                           const target::TargetInfo &target, double simulate_below,
                           GroupTiming &t) {
    t.estimated_ns = codegen::schedule_instructions(instrs, target);
    if (t.estimated_ns > simulate_below)
        return;
    t.simulated = true;
    codegen::insert_semaphores(instrs, prog);
    prog.layout_hbm();
    rt::Machine machine(target, prog, /*functional=*/false);
    t.simulated_ns = rt::simulate(machine).summary.total_ns;
}

GroupTiming simulate_group(const sched::Group &group, const Graph &g,
                           const target::TargetInfo &target, const ProgramContext &cx,
                           double simulate_below) {
    codegen::LoweredGroup lg = codegen::lower_group(group);
    neff::Program prog;
    prog.target = target.name;
    prog.name = "candidate";
    prog.vars = cx.vars;
    std::map<std::string, int> own_var; // values without a variable in the program yet
    auto bind = [&](const std::string &value) {
        int v = cx.existing_var ? cx.existing_var(value) : -1;
        if (v < 0) {
            auto it = own_var.find(value);
            if (it == own_var.end()) {
                const Value &val = g.value(value);
                neff::Variable var;
                var.name = value;
                var.dtype = codegen::isa_dtype_of(val.dtype, value);
                var.shape = val.shape;
                prog.vars.push_back(var);
                it = own_var.emplace(value, static_cast<int>(prog.vars.size()) - 1).first;
            }
            v = it->second;
        }
        const neff::Variable &var = prog.vars[static_cast<size_t>(v)];
        return codegen::HbmBinding{v, var.dtype, var.size_bytes()};
    };
    codegen::SelectOptions so;
    so.target = &target;
    so.node_name = "candidate";
    so.sbuf_cursor = cx.sbuf_cursor;
    so.psum_cursor = cx.psum_cursor;
    std::vector<codegen::SelectedInstr> instrs = codegen::select_group(lg, so, bind);
    GroupTiming t;
    t.feasible = true;
    t.busiest_ns = busiest_engine_ns(instrs, target);
    instrs.insert(instrs.begin(), cx.prefix.begin(), cx.prefix.end());
    for (const auto &following : cx.following) { // allocated after the candidate
        so.node_name = "following";
        std::vector<codegen::SelectedInstr> next = codegen::select_group(*following, so, bind);
        instrs.insert(instrs.end(), next.begin(), next.end());
    }
    estimate_and_simulate(std::move(instrs), std::move(prog), target, simulate_below, t);
    return t;
}

} // namespace

GroupTiming measure_group(const sched::Group &group, const Graph &g,
                          const target::TargetInfo &target, const ProgramContext &context,
                          double simulate_below) {
    try {
        return simulate_group(group, g, target, context, simulate_below);
    } catch (const UserError &e) {
        return {false, e.formatted()};
    } catch (const Halide::CompileError &e) {
        return {false, e.what()};
    }
}

} // namespace nhc::autosched
