// Schedule fuzzer, part two (ScheduleFuzz.h): random edits of a valid script. Before each edit the
// script so far is applied to a fresh group of the case's node, so that an edit names stages and
// loops that exist at that point (an edit may still make the schedule illegal: the compiler must
// then refuse it with a code). The edits are those a person tuning a schedule makes: other split
// factors (divisors or not, larger than the extent) and tails, new splits, reorders, fuses,
// unrolls, other compute and store levels, memory types, partition and buffer hints, dropped lines,
// and a reduction split with a producer computed at its outer loop.

#include "ScheduleFuzz.h"

#include "schedules/ScheduleScript.h"
#include "schedules/ScheduleScriptNames.h"
#include "support/Error.h"

#include <algorithm>
#include <functional>
#include <optional>

namespace nhc::fuzz {

namespace {

using sched::ScriptArg;
using sched::ScriptBlock;
using sched::ScriptCall;
using sched::ScriptLine;

struct LoopInfo {
    std::string name;
    bool rvar = false;
};

/** A stage as the script so far leaves it: its definitions' loops, innermost first. */
struct StageInfo {
    std::string role;
    int dims = 0;
    bool output = false;
    std::vector<std::vector<LoopInfo>> defs; ///< [0]: pure definition, [1 + i]: update(i)
    const std::vector<LoopInfo> &last() const { return defs.back(); }
};

std::vector<StageInfo> stage_infos(const FuzzCase &c, const ScriptBlock &b) {
    sched::ScheduleScript s = sched::parse_schedule(
        [&] {
            sched::ScheduleScript t;
            t.blocks.push_back(b);
            return t.to_string();
        }(),
        "fuzz.sched");
    std::vector<const Node *> nodes; // the case's graph is one group
    for (const Node &n : c.graph.nodes)
        nodes.push_back(&n);
    sched::Group g = sched::build_group(c.graph, nhc::index_values(c.graph), nodes);
    sched::apply_schedule_block(s, s.blocks[0], g); // throws if the edits so far are refused
    std::vector<StageInfo> out;
    for (const auto &[role, f] : sched::named_stages(g)) {
        // `final<o>`, or `n<i>_final<o>` in a fused group
        bool output = role.rfind("final", 0) == 0 || role.find("_final") != std::string::npos;
        StageInfo si{role, f.dimensions(), output, {}};
        Halide::Internal::Function fn = f.function();
        for (int d = -1; d < static_cast<int>(fn.updates().size()); d++) {
            const Halide::Internal::Definition &def = d < 0 ? fn.definition() : fn.update(d);
            std::vector<LoopInfo> loops;
            for (const Halide::Internal::Dim &dim : def.schedule().dims())
                if (dim.var != Halide::Var::outermost().name())
                    loops.push_back({sched::friendly_loop_name(dim.var, def),
                                     dim.dim_type != Halide::Internal::DimType::PureVar});
            si.defs.push_back(loops);
        }
        out.push_back(si);
    }
    return out;
}

/** One directive or hint line, parsed. */
ScriptLine line_of(const std::string &text) {
    return sched::parse_schedule("node \"n\":\n  " + text + "\n", "edit").blocks[0].lines.at(0);
}

std::string fresh(const std::string &base, int &counter) {
    std::string s = base;
    std::replace(s.begin(), s.end(), '.', '_');
    return s + "_" + std::to_string(counter++);
}

std::string chain_head(const StageInfo &s, int def) {
    return s.role + (def == 0 ? "" : ".update(" + std::to_string(def - 1) + ")");
}

int64_t factor(Rng &rng, int64_t old) {
    static const std::vector<int64_t> pool = {1,  2,  3,   4,   7,   8,   16,  24,  32,  48,  50,
                                              64, 96, 100, 128, 129, 200, 256, 300, 384, 512, 1000};
    switch (rng.below(4)) {
    case 0:
        return std::max<int64_t>(1, old / 2);
    case 1:
        return old + 1 + rng.below(3);
    default:
        return rng.pick(pool);
    }
}

class Mutator {
public:
    Mutator(const FuzzCase &c, Rng &rng, ScriptBlock &b) : c_(c), rng_(rng), b_(b) {}

    /** One random edit; false if the script so far is refused (no stage information). */
    bool edit(std::vector<std::string> &log) {
        try {
            stages_ = stage_infos(c_, b_);
        } catch (const UserError &) {
            return false;
        }
        using Edit = std::pair<int, std::function<std::string()>>;
        std::vector<Edit> edits = {{20, [&] { return change_factor(); }},
                                   {8, [&] { return change_tail(); }},
                                   {12, [&] { return add_split(); }},
                                   {10, [&] { return add_reorder(); }},
                                   {5, [&] { return add_fuse(); }},
                                   {5, [&] { return add_unroll(); }},
                                   {15, [&] { return move_compute(); }},
                                   {4, [&] { return add_store_at(); }},
                                   {5, [&] { return change_memory(); }},
                                   {6, [&] { return change_partition_dim(); }},
                                   {4, [&] { return add_partition_split(); }},
                                   {4, [&] { return change_fold(); }},
                                   {4, [&] { return change_buffers(); }},
                                   {3, [&] { return add_resident(); }},
                                   {2, [&] { return add_pe_order(); }},
                                   {3, [&] { return change_engine(); }},
                                   {4, [&] { return drop_line(); }},
                                   {10, [&] { return split_reduction(); }}};
        int total = 0;
        for (const Edit &e : edits)
            total += e.first;
        for (int attempt = 0; attempt < 8; attempt++) {
            int r = rng_.below(total);
            for (const Edit &e : edits) {
                if ((r -= e.first) >= 0)
                    continue;
                std::string what = e.second();
                if (!what.empty()) {
                    log.push_back(what);
                    return true;
                }
                break;
            }
        }
        return true;
    }

private:
    /** A stage, one of its definitions and a loop of it. */
    struct Pick {
        const StageInfo *stage;
        int def; ///< 0: the pure definition, 1 + i: update(i)
        const LoopInfo *loop;
        const std::vector<LoopInfo> &loops() const { return stage->defs[size_t(def)]; }
        std::string head() const { return chain_head(*stage, def); }
    };

    /** A random stage, definition and loop, among the definitions with `min_loops` loops. */
    std::optional<Pick> pick_loop(size_t min_loops = 1) {
        std::vector<std::pair<const StageInfo *, int>> defs;
        for (const StageInfo &si : stages_)
            for (size_t d = 0; d < si.defs.size(); d++)
                if (si.defs[d].size() >= min_loops)
                    defs.emplace_back(&si, static_cast<int>(d));
        if (defs.empty())
            return std::nullopt;
        auto [s, d] = rng_.pick(defs);
        return Pick{s, d, &rng_.pick(s->defs[size_t(d)])};
    }

    const StageInfo *pick_stage(bool outputs) {
        std::vector<const StageInfo *> v;
        for (const StageInfo &si : stages_)
            if (outputs || !si.output)
                v.push_back(&si);
        return v.empty() ? nullptr : rng_.pick(v);
    }

    std::string append(const std::string &text) {
        b_.lines.push_back(line_of(text));
        return text;
    }

    /** The split and tile calls of the block: (line, call). */
    std::vector<std::pair<size_t, size_t>> calls(const std::vector<std::string> &methods) const {
        std::vector<std::pair<size_t, size_t>> v;
        for (size_t l = 0; l < b_.lines.size(); l++)
            for (size_t k = 0; k < b_.lines[l].calls.size(); k++)
                if (std::count(methods.begin(), methods.end(), b_.lines[l].calls[k].method))
                    v.emplace_back(l, k);
        return v;
    }

    std::string change_factor() {
        auto v = calls({"split", "tile"});
        if (v.empty())
            return "";
        auto [l, k] = rng_.pick(v);
        ScriptCall &c = b_.lines[l].calls[k];
        size_t first = c.method == "split"                                              ? 3
                       : (c.args.size() >= 8 && c.args[7].kind == ScriptArg::Kind::Int) ? 6
                                                                                        : 4;
        size_t i = first + (c.method == "tile" ? rng_.below(2) : 0);
        int64_t f = factor(rng_, c.args[i].value);
        std::string was = c.args[i].text;
        c.args[i] = {ScriptArg::Kind::Int, std::to_string(f), f};
        return b_.lines[l].stage + "." + c.method + " factor " + was + " -> " + c.args[i].text;
    }

    std::string change_tail() {
        auto v = calls({"split"});
        if (v.empty())
            return "";
        auto [l, k] = rng_.pick(v);
        static const std::vector<std::string> tails = {
            "RoundUp",        "GuardWithIf",     "ShiftInwards", "Predicate",
            "PredicateLoads", "PredicateStores", "Auto"};
        ScriptCall &c = b_.lines[l].calls[k];
        std::string t = "TailStrategy::" + rng_.pick(tails);
        c.args.resize(4);
        c.args.push_back({ScriptArg::Kind::Qualified, t, 0});
        return b_.lines[l].stage + ".split(" + c.args[0].text + ") tail " + t;
    }

    std::string add_split() {
        std::optional<Pick> p = pick_loop();
        if (!p)
            return "";
        const std::string &l = p->loop->name;
        std::string o = fresh(l + "o", counter_), i = fresh(l + "i", counter_);
        std::string text = p->head() + ".split(" + l + ", " + o + ", " + i + ", " +
                           std::to_string(factor(rng_, 32)) + ")";
        if (rng_.chance(30)) // and compute a producer per outer iteration
            return append(text) + "; " + compute_at_loop(*p->stage, o);
        return append(text);
    }

    std::string compute_at_loop(const StageInfo &consumer, const std::string &loop) {
        const StageInfo *p = pick_stage(false);
        if (!p || p == &consumer)
            return "";
        return append(p->role + ".compute_at(" + consumer.role + ", " + loop + ")");
    }

    std::string add_reorder() {
        std::optional<Pick> p = pick_loop(2);
        if (!p)
            return "";
        std::vector<LoopInfo> loops = p->loops();
        if (rng_.chance(50)) {
            std::swap(loops[size_t(rng_.below(int(loops.size())))],
                      loops[size_t(rng_.below(int(loops.size())))]);
        } else {
            for (size_t j = loops.size() - 1; j > 0; j--)
                std::swap(loops[j], loops[size_t(rng_.below(int(j + 1)))]);
        }
        std::string args;
        for (const LoopInfo &li : loops)
            args += (args.empty() ? "" : ", ") + li.name;
        return append(p->head() + ".reorder(" + args + ")");
    }

    std::string add_fuse() {
        std::optional<Pick> p = pick_loop(2);
        if (!p)
            return "";
        const std::vector<LoopInfo> &loops = p->loops();
        size_t j = size_t(rng_.below(int(loops.size()) - 1));
        return append(p->head() + ".fuse(" + loops[j].name + ", " + loops[j + 1].name + ", " +
                      fresh("f", counter_) + ")");
    }

    std::string add_unroll() {
        std::optional<Pick> p = pick_loop();
        if (!p)
            return "";
        return append(p->head() + ".unroll(" + p->loop->name + ")");
    }

    /** Removes the calls of `role` for which `drop` holds (and lines left empty). */
    void remove_calls(const std::string &role,
                      const std::function<bool(const ScriptCall &)> &drop) {
        for (size_t l = 0; l < b_.lines.size(); l++) {
            ScriptLine &line = b_.lines[l];
            if (line.kind != ScriptLine::Kind::Directive || line.stage != role)
                continue;
            bool update = !line.calls.empty() && line.calls[0].method == "update";
            if (update)
                continue;
            line.calls.erase(std::remove_if(line.calls.begin(), line.calls.end(), drop),
                             line.calls.end());
        }
        b_.lines.erase(std::remove_if(b_.lines.begin(), b_.lines.end(),
                                      [](const ScriptLine &x) {
                                          return x.kind == ScriptLine::Kind::Directive &&
                                                 x.calls.empty();
                                      }),
                       b_.lines.end());
    }

    /** `what` (compute or store) at a random level: root, inline, or a loop of another stage. */
    std::string level(const std::string &what, const StageInfo &s) {
        int r = rng_.below(100);
        if (r < 12)
            return what + "_root()";
        if (r < 20 && what == "compute")
            return "compute_inline()";
        const StageInfo *t = pick_stage(true);
        if (!t || t == &s || t->last().empty())
            return what + "_root()";
        return what + "_at(" + t->role + ", " + rng_.pick(t->last()).name + ")";
    }

    std::string move_compute() {
        const StageInfo *s = pick_stage(false);
        if (!s)
            return "";
        remove_calls(s->role,
                     [](const ScriptCall &c) { return c.method.rfind("compute_", 0) == 0; });
        return append(s->role + "." + level("compute", *s));
    }

    std::string add_store_at() {
        const StageInfo *s = pick_stage(false);
        if (!s)
            return "";
        remove_calls(s->role, [](const ScriptCall &c) {
            return c.method.rfind("store_", 0) == 0 && c.method != "store_in";
        });
        return append(s->role + "." + level("store", *s));
    }

    std::string change_memory() {
        const StageInfo *s = pick_stage(false);
        if (!s)
            return "";
        remove_calls(s->role, [](const ScriptCall &c) { return c.method == "store_in"; });
        if (rng_.chance(15))
            return s->role + " store_in dropped";
        return append(s->role + ".store_in(" + (rng_.chance(50) ? "SBUF" : "PSUM") + ")");
    }

    void remove_hint(const std::string &hint, const std::string &role) {
        b_.lines.erase(std::remove_if(b_.lines.begin(), b_.lines.end(),
                                      [&](const ScriptLine &x) {
                                          return x.kind == ScriptLine::Kind::Hint &&
                                                 x.hint == hint && x.hint_args[0].text == role;
                                      }),
                       b_.lines.end());
    }

    std::string change_partition_dim() {
        const StageInfo *s = pick_stage(false);
        if (!s || s->dims == 0)
            return "";
        remove_hint("partition_dim", s->role);
        int dim = rng_.chance(95) ? rng_.below(s->dims) : s->dims;
        return append("hint partition_dim " + s->role + " " + std::to_string(dim));
    }

    std::string add_partition_split() {
        const StageInfo *s = pick_stage(false);
        if (!s || s->dims == 0)
            return "";
        remove_hint("partition_split", s->role);
        static const std::vector<int64_t> chunks = {2, 16, 32, 50, 64, 96, 128};
        return append("hint partition_split " + s->role + " " + std::to_string(rng_.pick(chunks)));
    }

    /** A broadcast's fold with another period, or a fold of another stage (refused unless the
     *  stage is a broadcast): the reads must give the same values under any period. */
    std::string change_fold() {
        std::vector<const StageInfo *> broadcasts; // mostly these: other stages are refused
        for (const StageInfo &si : stages_)
            for (const char *role : {"bias", "gamma_b", "beta_b", "bcast"})
                if (si.role.find(role) != std::string::npos)
                    broadcasts.push_back(&si);
        const StageInfo *s =
            !broadcasts.empty() && rng_.chance(80) ? rng_.pick(broadcasts) : pick_stage(false);
        if (!s)
            return "";
        remove_hint("fold_broadcast", s->role);
        static const std::vector<int64_t> periods = {7, 16, 32, 64, 100, 128};
        return append("hint fold_broadcast " + s->role + " " + std::to_string(rng_.pick(periods)));
    }

    /** Fixed buffers for an on-chip stage (schedules' `hint buffers`): its tiles take turns in
     *  them, so every reuse must wait for the previous tile's readers. */
    std::string change_buffers() {
        const StageInfo *s = pick_stage(false);
        if (!s)
            return "";
        remove_hint("buffers", s->role);
        return append("hint buffers " + s->role + " " + std::to_string(1 + rng_.below(4)));
    }

    /** A stage's tiles kept past the group (schedules' `hint resident`): each in a region of
     *  its own from the top of the SBUF, which the rest of the group allocates around. */
    std::string add_resident() {
        const StageInfo *s = pick_stage(false);
        if (!s)
            return "";
        remove_hint("resident", s->role);
        return append("hint resident " + s->role);
    }

    /** The engine that runs a stage's instructions where it can (schedules' `hint engine`). */
    std::string change_engine() {
        const StageInfo *s = pick_stage(false);
        if (!s)
            return "";
        remove_hint("engine", s->role);
        static const std::vector<std::string> engines = {"act", "dve", "pool"};
        return append("hint engine " + s->role + " " + rng_.pick(engines));
    }

    /** The group's PE instructions in critical-path order (schedules' `hint pe_order`): the list
     *  scheduler may then issue a later tile's PE work first, within the dependencies. */
    std::string add_pe_order() {
        remove_hint("pe_order", "critical_path");
        return append("hint pe_order critical_path");
    }

    std::string drop_line() {
        if (b_.lines.empty())
            return "";
        size_t l = size_t(rng_.below(int(b_.lines.size())));
        std::string what = "dropped line of " +
                           (b_.lines[l].kind == ScriptLine::Kind::Hint
                                ? "hint " + b_.lines[l].hint + " " + b_.lines[l].hint_args[0].text
                                : b_.lines[l].stage);
        b_.lines.erase(b_.lines.begin() + long(l));
        return what;
    }

    /** An update's innermost RVar split, its outer part made outermost, and a producer (often a
     *  staged input) computed at that outer loop: the reduction runs chunk by chunk. */
    std::string split_reduction() {
        std::vector<std::pair<const StageInfo *, int>> v;
        for (const StageInfo &si : stages_)
            for (size_t d = 1; d < si.defs.size(); d++)
                for (const LoopInfo &l : si.defs[d])
                    if (l.rvar) {
                        v.emplace_back(&si, static_cast<int>(d));
                        break;
                    }
        if (v.empty())
            return "";
        auto [s, d] = rng_.pick(v);
        const std::vector<LoopInfo> &loops = s->defs[size_t(d)];
        auto r = std::find_if(loops.begin(), loops.end(), [](const LoopInfo &l) { return l.rvar; });
        std::string o = fresh(r->name + "o", counter_), i = fresh(r->name + "i", counter_);
        // The chunk loop innermost (one reduction per chunk), or outside the pure loops (one
        // elementwise combine per element of the chunk); unrolled, a GuardWithIf tail becomes a
        // guard per unrolled iteration.
        std::string pure, order;
        for (const LoopInfo &l : loops)
            if (&l != &*r)
                pure += (pure.empty() ? "" : ", ") + l.name;
        bool chunk_inside = rng_.chance(60) || pure.empty();
        order = chunk_inside ? i + (pure.empty() ? "" : ", " + pure) : pure + ", " + i;
        std::string text = chain_head(*s, d) + ".split(" + r->name + ", " + o + ", " + i + ", " +
                           std::to_string(factor(rng_, 16)) + ").reorder(" + order + ", " + o +
                           ")" + (rng_.chance(30) ? ".unroll(" + i + ")" : "");
        append(text);
        std::string producer;
        if (d == int(s->defs.size()) - 1) // compute_at names a loop of the last definition
            producer = compute_at_loop(*s, o);
        return text + (producer.empty() ? "" : "; " + producer);
    }

    const FuzzCase &c_;
    Rng &rng_;
    ScriptBlock &b_;
    std::vector<StageInfo> stages_;
    int counter_ = 0;
};

} // namespace

Variant mutate(const FuzzCase &c, Rng &rng, int max_edits) {
    sched::ScheduleScript s = sched::parse_schedule(c.base_script, "base.sched");
    Variant v;
    int n = 1 + rng.below(max_edits);
    Mutator m(c, rng, s.blocks.at(0));
    for (int i = 0; i < n; i++)
        if (!m.edit(v.edits))
            break;
    v.script = s.to_string();
    return v;
}

} // namespace nhc::fuzz
