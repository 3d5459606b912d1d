// Schedule scripts: applying a parsed block to a group through Halide's scheduling API
// (docs/schedules.md). Names are resolved against the group, so that an unknown stage or loop is
// reported with the script's line instead of as Halide's message at lowering. Loop directives
// (split, fuse, tile, reorder) run in script order; compute and store levels are set after all
// of a block's loop directives, in script order, because a level may name a loop that a later
// line creates (Halide resolves LoopLevels only at lowering, so the result is the same).

#include "schedules/RFactor.h"
#include "schedules/ScheduleScriptNames.h"

#include "schedules/FoldBroadcasts.h"
#include "schedules/MemoryTypes.h"
#include "support/Error.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace nhc::sched {

namespace {

using Halide::Func;
using Halide::VarOrRVar;
using Halide::Internal::Definition;

/** Where a directive is: for messages. */
struct Context {
    const ScheduleScript &script;
    const ScriptBlock &block;
    Group &group;
    std::vector<std::pair<std::string, Func>> stages;
    int line = 0;

    [[noreturn]] void fail(const char *code, const std::string &what) const {
        user_error(code, script.file, ":", line, ": node ", block.quoted_nodes(), ": ", what);
    }

    Func stage(const std::string &name) const {
        for (const auto &[role, f] : stages)
            if (role == name)
                return f;
        std::string known;
        for (const auto &[role, f] : stages)
            known += (known.empty() ? "" : ", ") + role;
        fail("NHC_ESCH111", "unknown stage '" + name + "'; the stages of this node are " + known);
    }
};

/** The stage `update` (-1: the pure definition) of f. */
Definition &definition_of(Halide::Internal::Function &fn, int update) {
    return update < 0 ? fn.definition() : fn.update(update);
}

std::string stage_label(const std::string &role, int update) {
    return update < 0 ? role : role + ".update(" + std::to_string(update) + ")";
}

VarOrRVar loop(const Context &cx, const Func &f, const std::string &role, int update,
               const std::string &name) {
    Halide::Internal::Function fn = f.function();
    const Definition &d = definition_of(fn, update);
    if (std::optional<ScriptLoop> l = find_loop(d, name))
        return VarOrRVar(l->name, l->rvar);
    cx.fail("NHC_ESCH112", "stage " + stage_label(role, update) + " has no loop '" + name +
                               "'; its loops, innermost first, are " + loop_list(d));
}

Halide::TailStrategy tail_of(const std::vector<ScriptArg> &args, size_t n) {
    if (args.size() <= n)
        return Halide::TailStrategy::Auto;
    static const std::map<std::string, Halide::TailStrategy> t = {
        {"RoundUp", Halide::TailStrategy::RoundUp},
        {"GuardWithIf", Halide::TailStrategy::GuardWithIf},
        {"Predicate", Halide::TailStrategy::Predicate},
        {"PredicateLoads", Halide::TailStrategy::PredicateLoads},
        {"PredicateStores", Halide::TailStrategy::PredicateStores},
        {"ShiftInwards", Halide::TailStrategy::ShiftInwards},
        {"Auto", Halide::TailStrategy::Auto}};
    return t.at(args[n].text.substr(std::string("TailStrategy::").size()));
}

/** Runs a Halide scheduling call; its CompileError becomes NHC_ESCH114 at the current line. */
template <typename F>
void halide_call(const Context &cx, const std::string &method, F &&call) {
    try {
        call();
    } catch (const Halide::CompileError &e) {
        cx.fail("NHC_ESCH114", "halide rejects " + method + ": " + halide_message(e, cx.stages));
    }
}

/** NHC_ESCH117 for the splits the NeuronCore lowering cannot take (ScheduleScriptSplits.cpp):
 *  a PredicateStores tail of a stage inside the group, checked before the call; a split of an
 *  output's loop whose tiles would leave the tensor (or PredicateStores by more than its extent),
 *  checked after it. */
void check_tail(const Context &cx, const ScriptCall &c) {
    size_t tail_arg = 4;    // split(old, outer, inner, factor, tail)
    if (c.method == "tile") // with or without the outer loops' names
        tail_arg = c.args.size() >= 8 && c.args[7].kind == ScriptArg::Kind::Int ? 8 : 6;
    std::string why = predicate_tail_problem(tail_of(c.args, tail_arg));
    if (!why.empty())
        cx.fail("NHC_ESCH117", c.method + " cannot be lowered: " + why);
}

void check_output_splits(const Context &cx, const Func &f, const std::string &role,
                         const ScriptCall &c) {
    for (const GroupOutput &o : cx.group.outputs) {
        if (o.func.name() != f.name())
            continue;
        Halide::Internal::Function fn = f.function();
        std::string why = output_split_problem(fn.definition(), fn.args(), o.result.shape);
        if (!why.empty())
            cx.fail("NHC_ESCH117", c.method + " of " + role + " cannot be lowered: " + why);
    }
}

void apply_loop_call(const Context &cx, Func f, const std::string &role, int update,
                     const ScriptCall &c) {
    Halide::Stage st = update < 0 ? Halide::Stage(f) : f.update(update);
    const std::vector<ScriptArg> &a = c.args;
    auto L = [&](size_t i) { return loop(cx, f, role, update, a[i].text); };
    auto fresh = [&](size_t i, bool rvar) { return VarOrRVar(a[i].text, rvar); };
    auto factor = [&](size_t i) { return Halide::Expr(static_cast<int>(a[i].value)); };
    bool output = false;
    for (const GroupOutput &o : cx.group.outputs)
        output = output || o.func.name() == f.name();
    if (!output && (c.method == "split" || c.method == "tile"))
        check_tail(cx, c);
    if (c.method == "split") {
        VarOrRVar old = L(0);
        halide_call(cx, "split", [&] {
            st.split(old, fresh(1, old.is_rvar), fresh(2, old.is_rvar), factor(3), tail_of(a, 4));
        });
    } else if (c.method == "fuse") {
        VarOrRVar inner = L(0), outer = L(1);
        halide_call(cx, "fuse",
                    [&] { st.fuse(inner, outer, fresh(2, inner.is_rvar || outer.is_rvar)); });
    } else if (c.method == "tile" && a.size() >= 8 && a[7].kind == ScriptArg::Kind::Int) {
        VarOrRVar x = L(0), y = L(1);
        halide_call(cx, "tile", [&] {
            st.tile(x, y, fresh(2, x.is_rvar), fresh(3, y.is_rvar), fresh(4, x.is_rvar),
                    fresh(5, y.is_rvar), factor(6), factor(7), tail_of(a, 8));
        });
    } else if (c.method == "tile") {
        VarOrRVar x = L(0), y = L(1);
        halide_call(cx, "tile", [&] {
            st.tile(x, y, fresh(2, x.is_rvar), fresh(3, y.is_rvar), factor(4), factor(5),
                    tail_of(a, 6));
        });
    } else if (c.method == "unroll") {
        VarOrRVar l = L(0);
        halide_call(cx, "unroll", [&] { st.unroll(l); });
    } else if (c.method == "reorder") {
        std::vector<VarOrRVar> order;
        for (size_t i = 0; i < a.size(); i++)
            order.push_back(L(i));
        halide_call(cx, "reorder", [&] { st.reorder(order); });
    } else {
        nhc_assert(false, "directive " << c.method << " is not a loop directive");
    }
    if (update < 0 && (c.method == "split" || c.method == "tile" || c.method == "fuse"))
        check_output_splits(cx, f, role, c);
}

/** A compute or store level, set after the block's loop directives (see the file comment). */
struct LevelCall {
    int line;
    std::string role;
    Func func;
    const ScriptCall *call;
};

Halide::LoopLevel level_of(const Context &cx, const ScriptCall &c) {
    if (c.method == "compute_root" || c.method == "store_root")
        return Halide::LoopLevel::root();
    if (c.method == "compute_inline")
        return Halide::LoopLevel::inlined();
    const std::string &role = c.args[0].text;
    Func target = cx.stage(role);
    int last = static_cast<int>(target.function().updates().size()) - 1;
    return Halide::LoopLevel(target, loop(cx, target, role, last, c.args[1].text));
}

/** A store level outside the compute level makes Halide 14 slide the stage over the loops between
 *  the two (values of earlier iterations are reused, not computed again) and may also fold its
 *  storage over an inner loop, which drops those values: a MatMul's lhs_t computed at (final0, mo)
 *  and stored at root gave wrong values for a whole output tile. Refused until the combination is
 *  checked; the default schedules never hoist storage. */
void check_store_level(Context &cx, const LevelCall &lc) {
    Halide::Internal::FuncSchedule &fs = lc.func.function().schedule();
    Halide::LoopLevel store = fs.store_level(), compute = fs.compute_level();
    store.lock();
    compute.lock();
    if (store.is_inlined() || compute.is_inlined() || store == compute)
        return;
    cx.line = lc.line;
    cx.fail("NHC_ESCH120", "stage '" + lc.role + "' is stored at another level than it is " +
                               "computed at (" + lc.call->method +
                               "): stored outside it, Halide slides the stage over the loops "
                               "between the two and may fold its storage, which this compiler does "
                               "not yet check (it lowered to wrong values); store the stage where "
                               "it is computed");
}

void apply_level(Context &cx, const LevelCall &lc) {
    cx.line = lc.line;
    Halide::LoopLevel level = level_of(cx, *lc.call);
    Func f = lc.func;
    bool store = lc.call->method.rfind("store_", 0) == 0;
    halide_call(cx, lc.call->method, [&] {
        if (store)
            f.store_at(level);
        else
            f.compute_at(level);
    });
}

/** `stage.update(i)...rfactor(outer, var)`: the new stage joins the group (RFactor.h) and the
 *  block's later lines may name it. */
void apply_rfactor(Context &cx, Func f, const std::string &role, int update, const ScriptCall &c) {
    if (update != 0)
        cx.fail("NHC_ESCH114",
                "halide rejects rfactor: only update(0) of a stage is rfactored here");
    loop(cx, f, role, update, c.args[0].text); // NHC_ESCH112 if there is no such loop
    std::string why;
    if (!rfactor_stage(cx.group, f, role, c.args[0].text, c.args[1].text, why).defined())
        cx.fail("NHC_ESCH114", "halide rejects rfactor: " + why);
    cx.stages = named_stages(cx.group);
}

void apply_directive(Context &cx, const ScriptLine &l, std::vector<LevelCall> &levels) {
    Func f = cx.stage(l.stage);
    int update = -1;
    for (const ScriptCall &c : l.calls) {
        if (c.method == "update") {
            int n = static_cast<int>(f.function().updates().size());
            int i = c.args.empty() ? 0 : static_cast<int>(c.args[0].value);
            if (i >= n)
                cx.fail("NHC_ESCH113", "stage '" + l.stage + "' has " +
                                           (n == 0 ? std::string("no update definition")
                                                   : std::to_string(n) +
                                                         " update definition(s), numbered from 0") +
                                           "; found update(" + std::to_string(i) + ")");
            update = i;
        } else if (c.method == "store_in") {
            Halide::MemoryType m = c.args[0].text == "PSUM" ? PSUM : SBUF;
            halide_call(cx, "store_in", [&] { f.store_in(m); });
        } else if (c.method == "bound") {
            Halide::Var v(c.args[0].text);
            halide_call(cx, "bound", [&] {
                f.bound(v, static_cast<int>(c.args[1].value), static_cast<int>(c.args[2].value));
            });
        } else if (c.method == "rfactor") {
            apply_rfactor(cx, f, l.stage, update, c);
        } else if (c.method.rfind("compute_", 0) == 0 || c.method.rfind("store_", 0) == 0) {
            levels.push_back({l.line, l.stage, f, &c});
        } else {
            apply_loop_call(cx, f, l.stage, update, c);
        }
    }
}

// `hint fold_broadcast <stage> <period>`: rewrites the algorithm's reads of the stage (applied
// before any directive, as the default schedule folds before it schedules).
void apply_fold_hint(Context &cx, const ScriptLine &l) {
    Func f = cx.stage(l.hint_args[0].text);
    int64_t period = l.hint_args[1].value;
    std::string why = period > 0 && period <= INT32_MAX
                          ? fold_broadcast_stage(cx.group, f.name(), static_cast<int>(period))
                          : "the period must be positive";
    if (!why.empty())
        cx.fail("NHC_ESCH115", "hint fold_broadcast " + l.hint_args[0].text + " " +
                                   std::to_string(period) + ": cannot fold this stage: " + why);
}

void apply_hint(Context &cx, const ScriptLine &l) {
    // partition_dim, partition_split, buffers, resident, pe_order and engine (checked by the
    // parser).
    if (l.hint == "pe_order") {
        cx.group.pe_critical_path = true;
        return;
    }
    Func f = cx.stage(l.hint_args[0].text);
    if (l.hint == "engine") {
        cx.group.engines[f.name()] = l.hint_args[1].text;
        return;
    }
    if (l.hint == "resident") {
        cx.group.resident.insert(f.name());
        return;
    }
    int64_t dim = l.hint_args[1].value;
    if (l.hint == "buffers") {
        if (dim <= 0 || dim > std::numeric_limits<int>::max())
            cx.fail("NHC_ESCH115", "hint buffers " + l.hint_args[0].text + " " +
                                       std::to_string(dim) + ": expected a positive count");
        cx.group.buffers[f.name()] = static_cast<int>(dim);
        return;
    }
    if (l.hint == "partition_split") {
        if (dim <= 0)
            cx.fail("NHC_ESCH115", "hint partition_split " + l.hint_args[0].text + " " +
                                       std::to_string(dim) + ": expected a positive chunk size");
        cx.group.partition_split[f.name()] = dim;
        return;
    }
    if (dim >= f.dimensions())
        cx.fail("NHC_ESCH115", "hint partition_dim " + l.hint_args[0].text + " " +
                                   std::to_string(dim) + ": the stage has " +
                                   std::to_string(f.dimensions()) +
                                   " dimension(s), numbered from "
                                   "0 (v0, innermost)");
    cx.group.partition_dim[f.name()] = static_cast<int>(dim);
}

std::string last_component(const std::string &s) {
    return s.substr(s.rfind('.') + 1);
}

} // namespace

// ---- names shared with the printer (ScheduleScriptNames.h) ----

bool loop_name_matches(const std::string &dim, const std::string &name) {
    return dim == name ||
           (dim.size() > name.size() &&
            dim.compare(dim.size() - name.size() - 1, std::string::npos, "." + name) == 0);
}

std::string friendly_loop_name(const std::string &halide_name, const Definition &d) {
    std::string last = last_component(halide_name);
    size_t dollar = last.find('$');
    if (dollar == std::string::npos)
        return last;
    std::string base = last.substr(0, dollar);
    int count = 0;
    for (const Halide::Internal::ReductionVariable &rv : d.schedule().rvars())
        count += rv.var.rfind(base + "$", 0) == 0;
    return count <= 1 ? base : base + "." + last.substr(dollar + 1);
}

std::optional<ScriptLoop> find_loop(const Definition &d, const std::string &name) {
    size_t dot = name.find('.');
    auto lookup = [&](const std::string &want) -> std::optional<ScriptLoop> {
        for (const Halide::Internal::Dim &dim : d.schedule().dims())
            if (dim.var != Halide::Var::outermost().name() && loop_name_matches(dim.var, want))
                return ScriptLoop{want, dim.dim_type != Halide::Internal::DimType::PureVar};
        return std::nullopt;
    };
    if (dot != std::string::npos) // `k.y` is the RVar k$y
        return lookup(name.substr(0, dot) + "$" + name.substr(dot + 1));
    if (std::optional<ScriptLoop> l = lookup(name))
        return l;
    for (const Halide::Internal::ReductionVariable &rv : d.schedule().rvars())
        if (rv.var.rfind(name + "$", 0) == 0) // `k` is the first RVar of the RDom k
            return lookup(rv.var);
    return std::nullopt;
}

std::string loop_list(const Definition &d) {
    std::string s;
    for (const Halide::Internal::Dim &dim : d.schedule().dims())
        if (dim.var != Halide::Var::outermost().name())
            s += (s.empty() ? "" : ", ") + friendly_loop_name(dim.var, d);
    return s.empty() ? "(none: a scalar stage)" : s;
}

std::string halide_message(const Halide::CompileError &e,
                           const std::vector<std::pair<std::string, Halide::Func>> &stages) {
    std::string m = e.what(), out;
    if (m.rfind("Error:", 0) == 0)
        m = m.substr(6);
    for (char c : m) // one line: Halide's messages span several
        if (c == '\n' || c == '\t' || c == ' ') {
            if (!out.empty() && out.back() != ' ')
                out += ' ';
        } else {
            out += c;
        }
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    // Func names as the script writes them (longest first: names may prefix each other).
    std::vector<std::pair<std::string, std::string>> names;
    for (const auto &[role, f] : stages)
        names.emplace_back(f.name(), role);
    std::sort(names.begin(), names.end(),
              [](const auto &a, const auto &b) { return a.first.size() > b.first.size(); });
    for (const auto &[name, role] : names)
        for (size_t p = out.find(name); p != std::string::npos; p = out.find(name, p + role.size()))
            out.replace(p, name.size(), role);
    constexpr size_t kMaxLength = 600; // Halide lists every use site; the start says what is wrong
    if (out.size() > kMaxLength)
        out = out.substr(0, kMaxLength) + " ...";
    return out;
}

std::vector<std::pair<std::string, Halide::Func>> named_stages(const Group &g) {
    std::vector<std::pair<std::string, Halide::Func>> out;
    for (size_t i = 0; i < g.inputs.size(); i++)
        out.emplace_back("stage_" + std::to_string(i), g.inputs[i].staged);
    // In a fused group, roles repeat across nodes (two Adds both have `out`): prefix the node.
    bool fused = g.nodes.size() > 1;
    auto prefix = [&](size_t node_index) {
        return fused ? "n" + std::to_string(node_index) + "_" : std::string();
    };
    for (size_t i = 0; i < g.op.stages.size(); i++)
        out.emplace_back(prefix(g.stage_node.at(i)) + g.op.stages[i].role, g.op.stages[i].func);
    // An output is named after its index among its node's outputs.
    for (const GroupOutput &o : g.outputs)
        for (size_t n = 0; n < g.nodes.size(); n++) {
            const std::vector<std::string> &outs = g.nodes[n]->outputs;
            auto it = std::find(outs.begin(), outs.end(), o.value);
            if (it != outs.end())
                out.emplace_back(prefix(n) + "final" + std::to_string(it - outs.begin()), o.func);
        }
    return out;
}

void apply_schedule_block(const ScheduleScript &s, const ScriptBlock &b, Group &g) {
    Context cx{s, b, g, named_stages(g)};
    for (const ScriptLine &l : b.lines)
        if (l.kind == ScriptLine::Kind::Hint && l.hint == "fold_broadcast")
            cx.line = l.line, apply_fold_hint(cx, l);
    std::vector<LevelCall> levels;
    for (const ScriptLine &l : b.lines) {
        cx.line = l.line;
        if (l.kind == ScriptLine::Kind::Directive)
            apply_directive(cx, l, levels);
        else if (l.kind == ScriptLine::Kind::Hint && l.hint != "fold_broadcast")
            apply_hint(cx, l);
    }
    for (const LevelCall &lc : levels)
        apply_level(cx, lc);
    for (const LevelCall &lc : levels)
        if (lc.call->method.rfind("store_", 0) == 0)
            check_store_level(cx, lc);
}

bool apply_schedule_script(const ScheduleScript &s, Group &g) {
    const ScriptBlock *b = s.find(g.node->name);
    if (!b)
        return false;
    nhc_assert(b->nodes.size() == g.nodes.size(), "the block of " << b->quoted_nodes()
                                                                  << " is applied to a group of "
                                                                  << g.nodes.size() << " node(s)");
    apply_schedule_block(s, *b, g);
    return true;
}

void report_lowering_error(const ScheduleScript &s, const ScriptBlock &b, const Group &g,
                           const Halide::CompileError &e) {
    std::vector<std::pair<std::string, Halide::Func>> stages = named_stages(g);
    // The stage Halide names first (the Func whose schedule it complains about)...
    std::string role, raw = e.what();
    size_t first = std::string::npos, longest = 0;
    for (const auto &[r, f] : stages) {
        size_t p = raw.find(f.name());
        if (p < first || (p == first && p != std::string::npos && f.name().size() > longest))
            role = r, first = p, longest = f.name().size();
    }
    std::string msg = halide_message(e, stages);
    // ... and the last line that placed it (or else the last that mentions it).
    int line = b.line;
    bool placed = false;
    for (const ScriptLine &l : b.lines) {
        if (l.kind != ScriptLine::Kind::Directive || role.empty() || l.stage != role)
            continue;
        bool places = false;
        for (const ScriptCall &c : l.calls)
            places =
                places || c.method.rfind("compute_", 0) == 0 || c.method.rfind("store_", 0) == 0;
        if (places || !placed)
            line = l.line;
        placed = placed || places;
    }
    user_error("NHC_ESCH116", s.file, ":", line, ": node ", b.quoted_nodes(),
               ": halide cannot lower this schedule",
               role.empty() ? std::string() : " (stage '" + role + "')", ": ", msg);
}

} // namespace nhc::sched
