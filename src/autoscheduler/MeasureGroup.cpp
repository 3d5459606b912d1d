#include "autoscheduler/MeasureGroup.h"

#include "neff/ForwardStores.h"
#include "neff/InsertSemaphores.h"
#include "neff/NarrowStores.h"
#include "neff/ScheduleInstructions.h"
#include "neff/SelectGroup.h"
#include "neff/TileWeights.h"
#include "runtime/Simulator.h"
#include "support/Error.h"
#include "support/Parallel.h"

#include <algorithm>
#include <functional>
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

/** The window of `group` in context `cx`: lowered, selected between the context's groups and
 *  scheduled by the list schedule, then estimated by replaying that order. A refusal
 *  propagates. */
Window prepare(const sched::Group &group, const Graph &g, const target::TargetInfo &target,
               const ProgramContext &cx) {
    codegen::LoweredGroup lg = codegen::lower_group(group);
    Window w;
    neff::Program &prog = w.prog;
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
                var.kind = val.is_constant() ? neff::VarKind::Weight : neff::VarKind::Scratch;
                prog.vars.push_back(var);
                it = own_var.emplace(value, static_cast<int>(prog.vars.size()) - 1).first;
            }
            v = it->second;
        }
        const neff::Variable &var = prog.vars[static_cast<size_t>(v)];
        int64_t offset = own_var.count(value) || !cx.offset_in_var ? 0 : cx.offset_in_var(value);
        if (offset == 0)
            return codegen::HbmBinding{v, var.dtype, var.size_bytes()};
        int64_t bytes = shape_numel(g.value(value).shape) * neff::dtype_size(var.dtype);
        return codegen::HbmBinding{v, var.dtype, bytes, offset};
    };
    codegen::SelectOptions so;
    so.target = &target;
    so.node_name = "candidate";
    so.sbuf_history = cx.sbuf_history;
    so.psum_history = cx.psum_history;
    so.reserved_sbuf = cx.reserved_sbuf;
    so.broadcast_on_pe = cx.broadcast_on_pe;
    // A group's selection; what it keeps stays kept through the window (the program frees it
    // after the output's reader, the next group).
    auto select = [&](const codegen::LoweredGroup &l) {
        std::vector<codegen::SelectedInstr> ins = codegen::select_group(l, so, bind);
        so.reserved_sbuf.insert(so.reserved_sbuf.end(), so.kept_sbuf.begin(), so.kept_sbuf.end());
        return ins;
    };
    std::vector<codegen::SelectedInstr> &instrs = w.instrs;
    instrs = select(lg);
    w.timing.feasible = true;
    w.timing.busiest_ns = busiest_engine_ns(instrs, target);
    instrs.insert(instrs.begin(), cx.prefix.begin(), cx.prefix.end());
    std::vector<std::string> own_values = sched::hbm_values(group);
    for (const FollowingGroup &following : cx.following) { // allocated after the candidate
        so.node_name = "following";
        bool same = !cx.workload.empty() && following.workload == cx.workload;
        std::vector<codegen::SelectedInstr> next =
            select(same ? codegen::rebound(lg, own_values, following.values) : *following.lowered);
        instrs.insert(instrs.end(), next.begin(), next.end());
    }
    // The program's whole-program moves, which change what crosses HBM. A store that no load
    // in the window reads any more stays: a group past the window may read it.
    if (cx.forward_loads)
        codegen::forward_stores(instrs, prog, /*drop_unread_stores=*/false, cx.read_in_place);
    if (cx.round_on_engines)
        codegen::narrow_stores(instrs);
    if (cx.tile_weights) // the window's weights have no bytes: only their loads change
        codegen::tile_weights(instrs, prog, target);
    codegen::schedule_instructions(instrs, target, cx.dependency_overhead, &w.timing.estimated_ns);
    return w;
}

/** prepare(), a refusal as not feasible. */
Window prepare_window(const sched::Group &group, const Graph &g, const target::TargetInfo &target,
                      const ProgramContext &context) {
    try {
        return prepare(group, g, target, context);
    } catch (const UserError &e) {
        return {{false, e.formatted()}, {}, {}};
    } catch (const Halide::CompileError &e) {
        return {{false, e.what()}, {}, {}};
    }
}

} // namespace

void simulate_window(Window &w, const target::TargetInfo &target) {
    nhc_assert(w.timing.feasible && !w.timing.simulated, "simulating a window twice or refused");
    codegen::insert_semaphores(w.instrs, w.prog);
    w.prog.layout_hbm();
    rt::Machine machine(target, w.prog, /*functional=*/false);
    w.timing.simulated_ns = rt::simulate(machine).summary.total_ns;
    w.timing.simulated = true;
    w.instrs = {}; // the window is large; only its time is kept
    w.prog = {};
}

std::vector<Window> prepare_windows(const std::vector<const sched::Group *> &groups, const Graph &g,
                                    const target::TargetInfo &target, const ProgramContext &context,
                                    int jobs) {
    std::vector<Window> windows(groups.size());
    for_each_index(groups.size(), jobs,
                   [&](size_t i) { windows[i] = prepare_window(*groups[i], g, target, context); });
    return windows;
}

void simulate_windows(std::vector<Window> &windows, const std::vector<size_t> &which,
                      const target::TargetInfo &target, int jobs) {
    for_each_index(which.size(), jobs,
                   [&](size_t i) { simulate_window(windows[which[i]], target); });
}

} // namespace nhc::autosched
