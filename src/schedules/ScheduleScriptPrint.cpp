// Schedule scripts: writing the schedule a group carries as a script block (docs/schedules.md),
// so that the default schedule of a node can be printed, edited and given back with --schedule.
// Halide records a stage's schedule as its list of splits and fuses plus the final loop order;
// a tile is two splits and a reorder, and is printed that way. The reorder is printed only when
// the final order differs from the order the splits alone produce (simulated here as Halide's
// Stage::split and Stage::fuse build it).

#include "schedules/DefaultSchedule.h"
#include "schedules/MemoryTypes.h"
#include "schedules/ScheduleScriptNames.h"

#include "support/Error.h"

namespace nhc::sched {

namespace {

using Halide::Internal::Definition;
using Halide::Internal::Split;

ScriptArg name_arg(const std::string &text) {
    return {ScriptArg::Kind::Name, text, 0};
}

ScriptArg int_arg(const Halide::Expr &e, const std::string &what) {
    const int64_t *v = Halide::Internal::as_const_int(e);
    nhc_assert(v, what << " is not a constant: " << e);
    return {ScriptArg::Kind::Int, std::to_string(*v), *v};
}

std::string last_component(const std::string &s) {
    return s.substr(s.rfind('.') + 1);
}

/** The loops of a definition before any directive: Halide's Function::define_update puts the
 *  RVars innermost, then the update's pure args (the args that are the Func's own vars). */
std::vector<std::string> initial_loops(const Halide::Internal::Function &fn, const Definition &d) {
    if (d.is_init())
        return fn.args();
    std::vector<std::string> loops;
    for (const Halide::Internal::ReductionVariable &rv : d.schedule().rvars())
        loops.push_back(rv.var);
    for (size_t i = 0; i < d.args().size() && i < fn.args().size(); i++) {
        const auto *v = d.args()[i].as<Halide::Internal::Variable>();
        if (v && !v->reduction_domain.defined() && v->name == fn.args()[i])
            loops.push_back(v->name);
    }
    return loops;
}

/** The tail Auto picks for a first split (Halide's Stage::split); printed only if different. */
Halide::TailStrategy auto_tail(const Definition &d, const Split &s) {
    if (d.is_init())
        return Halide::TailStrategy::ShiftInwards;
    return s.exact ? Halide::TailStrategy::GuardWithIf : Halide::TailStrategy::RoundUp;
}

const char *tail_name(Halide::TailStrategy t) {
    switch (t) {
    case Halide::TailStrategy::RoundUp:
        return "RoundUp";
    case Halide::TailStrategy::GuardWithIf:
        return "GuardWithIf";
    case Halide::TailStrategy::Predicate:
        return "Predicate";
    case Halide::TailStrategy::PredicateLoads:
        return "PredicateLoads";
    case Halide::TailStrategy::PredicateStores:
        return "PredicateStores";
    case Halide::TailStrategy::ShiftInwards:
        return "ShiftInwards";
    case Halide::TailStrategy::Auto:
        break;
    }
    return "Auto";
}

/** split / fuse / reorder calls that rebuild a definition's loops. */
std::vector<ScriptCall> loop_calls(const Halide::Internal::Function &fn, const Definition &d,
                                   const std::string &stage, bool rfactored = false) {
    std::vector<ScriptCall> calls;
    std::vector<std::string> loops = initial_loops(fn, d);
    auto find = [&](const std::string &name) {
        auto it = std::find(loops.begin(), loops.end(), name);
        nhc_assert(it != loops.end(), "loop " << name << " of " << stage << " not found");
        return it;
    };
    for (const Split &s : d.schedule().splits()) {
        // rfactor turns the RVar it keeps into the new stage's var (a purify): the rfactor line
        // makes it.
        if (rfactored && (s.is_rename() || s.is_purify()))
            continue;
        ScriptCall c;
        if (s.is_split()) {
            c.method = "split";
            c.args = {name_arg(friendly_loop_name(s.old_var, d)), name_arg(last_component(s.outer)),
                      name_arg(last_component(s.inner)), int_arg(s.factor, "split factor")};
            if (s.tail != auto_tail(d, s))
                c.args.push_back({ScriptArg::Kind::Qualified,
                                  std::string("TailStrategy::") + tail_name(s.tail), 0});
            auto it = find(s.old_var);
            *it = s.outer;
            loops.insert(it, s.inner);
        } else if (s.is_fuse()) {
            c.method = "fuse";
            c.args = {name_arg(friendly_loop_name(s.inner, d)),
                      name_arg(friendly_loop_name(s.outer, d)),
                      name_arg(last_component(s.old_var))};
            loops.erase(find(s.outer));
            *find(s.inner) = s.old_var;
        } else {
            nhc_assert(false, stage << " has a rename or purify, which scripts cannot write");
        }
        calls.push_back(std::move(c));
    }
    std::vector<std::string> final_loops;
    for (const Halide::Internal::Dim &dim : d.schedule().dims())
        if (dim.var != Halide::Var::outermost().name())
            final_loops.push_back(dim.var);
    if (final_loops != loops) {
        ScriptCall c{"reorder", {}};
        for (const std::string &l : final_loops)
            c.args.push_back(name_arg(friendly_loop_name(l, d)));
        calls.push_back(std::move(c));
    }
    for (const Halide::Internal::Dim &dim : d.schedule().dims())
        if (dim.for_type == Halide::Internal::ForType::Unrolled)
            calls.push_back({"unroll", {name_arg(friendly_loop_name(dim.var, d))}});
    return calls;
}

class Describer {
public:
    explicit Describer(const Group &g) : g_(g), stages_(named_stages(g)) {}

    ScriptBlock describe() {
        ScriptBlock b;
        for (const Node *n : g_.nodes)
            b.nodes.push_back(n->name);
        // Consumers first, as a schedule is usually written: outputs, stages, staged inputs.
        for (auto it = stages_.rbegin(); it != stages_.rend(); ++it)
            describe_stage(it->first, it->second, b);
        for (const auto &[role, f] : stages_) {
            auto fold = g_.folded_broadcasts.find(f.name());
            if (fold != g_.folded_broadcasts.end())
                b.lines.push_back(hint_line("fold_broadcast", role, fold->second));
        }
        for (const auto &[role, f] : stages_) {
            auto pd = g_.partition_dim.find(f.name());
            if (pd == g_.partition_dim.end())
                continue;
            b.lines.push_back(hint_line("partition_dim", role, pd->second));
            auto split = g_.partition_split.find(f.name());
            if (split != g_.partition_split.end())
                b.lines.push_back(hint_line("partition_split", role, split->second));
        }
        for (const auto &[role, f] : stages_)
            if (auto count = g_.buffers.find(f.name()); count != g_.buffers.end())
                b.lines.push_back(hint_line("buffers", role, count->second));
        for (const auto &[role, f] : stages_)
            if (g_.resident.count(f.name())) {
                ScriptLine h = hint_line("resident", role, 0);
                h.hint_args.pop_back(); // a stage, no number
                b.lines.push_back(h);
            }
        for (const auto &[role, f] : stages_)
            if (auto named = g_.engines.find(f.name()); named != g_.engines.end()) {
                ScriptLine h = hint_line("engine", role, 0);
                h.hint_args.back() = name_arg(named->second);
                b.lines.push_back(h);
            }
        if (g_.pe_critical_path) {
            ScriptLine h = hint_line("pe_order", "critical_path", 0);
            h.hint_args.pop_back(); // a word, no number
            b.lines.push_back(h);
        }
        return b;
    }

private:
    static ScriptLine hint_line(const std::string &hint, const std::string &role, int64_t value) {
        ScriptLine h;
        h.kind = ScriptLine::Kind::Hint;
        h.hint = hint;
        h.hint_args = {name_arg(role), {ScriptArg::Kind::Int, std::to_string(value), value}};
        return h;
    }

    std::string role_of(const std::string &func_name) const {
        for (const auto &[role, f] : stages_)
            if (f.name() == func_name)
                return role;
        nhc_assert(false, "loop level names " << func_name << ", which is not in the group");
    }

    /** compute_at / store_at (a loop of the last stage of a Func of the group), root, inline. */
    ScriptCall level_call(Halide::LoopLevel level, const std::string &what) const {
        level.lock(); // LoopLevels can be read only when locked
        if (level.is_root())
            return {what + "_root", {}};
        if (level.is_inlined())
            return {what + "_inline", {}};
        std::string role = role_of(level.func());
        Halide::Internal::Function target;
        for (const auto &[r, f] : stages_)
            if (r == role)
                target = f.function();
        const Definition &last =
            target.updates().empty() ? target.definition() : target.updates().back();
        return {what + "_at",
                {name_arg(role), name_arg(friendly_loop_name(level.var().name(), last))}};
    }

    void describe_stage(const std::string &role, const Halide::Func &f, ScriptBlock &b) const {
        Halide::Internal::Function fn = f.function();
        ScriptLine line;
        line.stage = role;
        bool intm = std::any_of(g_.rfactors.begin(), g_.rfactors.end(),
                                [&](const Group::RFactorSplit &r) { return r.intm == fn.name(); });
        line.calls = loop_calls(fn, fn.definition(), role, intm);
        Halide::Internal::FuncSchedule &fs = fn.schedule();
        ScriptCall compute = level_call(fs.compute_level(), "compute");
        if (compute.method != "compute_inline")
            line.calls.push_back(compute);
        Halide::LoopLevel store = fs.store_level();
        store.lock();
        // Halide sets an inlined store level to the compute level when lowering.
        if (!store.is_inlined() && !(store == fs.compute_level()))
            line.calls.push_back(level_call(store, "store"));
        for (const Halide::Internal::Bound &bd : fs.bounds())
            line.calls.push_back({"bound",
                                  {name_arg(bd.var), int_arg(bd.min, "bound min"),
                                   int_arg(bd.extent, "bound extent")}});
        if (fs.memory_type() == SBUF || fs.memory_type() == PSUM)
            line.calls.push_back(
                {"store_in", {name_arg(fs.memory_type() == SBUF ? "SBUF" : "PSUM")}});
        if (!line.calls.empty())
            b.lines.push_back(line);
        for (const Group::RFactorSplit &r : g_.rfactors)
            if (r.of == fn.name())
                b.lines.push_back(rfactor_line(role, r));
        for (size_t i = 0; i < fn.updates().size(); i++) {
            std::vector<ScriptCall> calls =
                loop_calls(fn, fn.update(static_cast<int>(i)), role, intm);
            if (calls.empty())
                continue;
            ScriptLine u;
            u.stage = role;
            u.calls.push_back(
                {"update", {{ScriptArg::Kind::Int, std::to_string(i), static_cast<int64_t>(i)}}});
            u.calls.insert(u.calls.end(), calls.begin(), calls.end());
            b.lines.push_back(std::move(u));
        }
    }

    /** `role.update(0).split(k, kb, kr, 512).rfactor(kb, u)`: what made stage `r.intm`. */
    static ScriptLine rfactor_line(const std::string &role, const Group::RFactorSplit &r) {
        ScriptLine l;
        l.stage = role;
        l.calls.push_back({"update", {{ScriptArg::Kind::Int, "0", 0}}});
        l.calls.push_back({"split",
                           {name_arg(r.rvar),
                            name_arg(r.outer),
                            name_arg(r.inner),
                            {ScriptArg::Kind::Int, std::to_string(r.factor), r.factor}}});
        l.calls.push_back({"rfactor", {name_arg(r.outer), name_arg(r.var)}});
        return l;
    }

    const Group &g_;
    std::vector<std::pair<std::string, Halide::Func>> stages_;
};

} // namespace

ScriptBlock describe_schedule(const Group &g) {
    return Describer(g).describe();
}

std::string print_default_schedule(const Graph &g, const Node &node,
                                   const target::TargetInfo &target) {
    Group grp = build_node_group(g, node);
    apply_default_schedule(grp, target);
    ScheduleScript s;
    s.blocks.push_back(describe_schedule(grp));
    s.blocks.back().leading_comments.push_back(" default schedule of " + node.describe());
    return s.to_string();
}

} // namespace nhc::sched
