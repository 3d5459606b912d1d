// Instruction selection, part four (see SelectInstructions.h): a copy with a constant border,
//   buf(i...) = select(cond(i...), load(clamp(i...)), constant)
// Halide's form of a padded image (BoundaryConditions::constant_exterior, ConvTaps and PoolTaps'
// x_pad) wherever the schedule computes it: the whole image or one band of rows with its halo.
// A border that is the destination's own element (buf(i...) = select(cond, load, buf(i...)), an
// update over a region filled before) is no fill, only the copy.
// With the outer loops fixed, the condition is a box in the nest's loops; the nest becomes a
// memset of the whole region (left out when the box covers it) and a copy of the box, where the
// clamps are the identity; a box whose condition also keeps every stride-th position along a
// loop (a spread image, `row % s == 0`) is copied into those positions only. A condition that is no
// rectangle (a comparison naming two loops, a mask read from memory) is left to elementwise
// selection.

#include "neff/SelectorState.h"

#include "support/Error.h"

#include <map>

namespace nhc::codegen {

using namespace Halide::Internal;

namespace {

/** `e` (negated if `negate`) in negation normal form, with comparisons of a min or max expanded
 *  (`min(a, b) < c` is `a < c || b < c`), so that a box the simplifier wrote as
 *  `min(x, y) < 1` splits into one comparison per loop. */
Halide::Expr box_form(const Halide::Expr &e, bool negate) {
    if (const And *op = e.as<And>())
        return negate ? Or::make(box_form(op->a, true), box_form(op->b, true))
                      : And::make(box_form(op->a, false), box_form(op->b, false));
    if (const Or *op = e.as<Or>())
        return negate ? And::make(box_form(op->a, true), box_form(op->b, true))
                      : Or::make(box_form(op->a, false), box_form(op->b, false));
    if (const Not *op = e.as<Not>())
        return box_form(op->a, !negate);
    if (const GT *op = e.as<GT>())
        return box_form(LT::make(op->b, op->a), negate);
    if (const GE *op = e.as<GE>())
        return box_form(LE::make(op->b, op->a), negate);
    auto expand = [&](const Halide::Expr &a, const Halide::Expr &b, auto make) -> Halide::Expr {
        if (const Min *m = a.as<Min>()) // min(x, y) < b: either is
            return box_form(Or::make(make(m->a, b), make(m->b, b)), negate);
        if (const Max *m = a.as<Max>())
            return box_form(And::make(make(m->a, b), make(m->b, b)), negate);
        if (const Min *m = b.as<Min>()) // a < min(x, y): both are
            return box_form(And::make(make(a, m->a), make(a, m->b)), negate);
        if (const Max *m = b.as<Max>())
            return box_form(Or::make(make(a, m->a), make(a, m->b)), negate);
        return Halide::Expr();
    };
    if (const LT *op = e.as<LT>()) {
        Halide::Expr x = expand(op->a, op->b, [](auto a, auto b) { return LT::make(a, b); });
        return x.defined() ? x : negate ? LE::make(op->b, op->a) : e;
    }
    if (const LE *op = e.as<LE>()) {
        Halide::Expr x = expand(op->a, op->b, [](auto a, auto b) { return LE::make(a, b); });
        return x.defined() ? x : negate ? LT::make(op->b, op->a) : e;
    }
    return negate ? Not::make(e) : e;
}

void conjuncts(const Halide::Expr &e, std::vector<Halide::Expr> &out) {
    if (const And *a = e.as<And>()) {
        conjuncts(a->a, out);
        conjuncts(a->b, out);
    } else {
        out.push_back(e);
    }
}

bool reads_memory(const Halide::Expr &e) {
    struct Finder : IRVisitor {
        bool found = false;
        using IRVisitor::visit;
        void visit(const Load *) override { found = true; }
        void visit(const Call *) override { found = true; }
    } finder;
    e.accept(&finder);
    return finder.found;
}

/** The loops of `loops` that `e` names. */
std::vector<size_t> loops_named(const Halide::Expr &e, const std::vector<Loop> &loops) {
    std::vector<size_t> named;
    for (size_t j = 0; j < loops.size(); j++)
        if (expr_uses_var(e, loops[j].name))
            named.push_back(j);
    return named;
}

/** Where the loops of a narrowed copy are in the nest's loops: loop j of the copy walks positions
 *  first[j] + step[j] * k of the loop of its name; a loop narrowed to one position is gone from
 *  the copy and `fixed` at it. */
struct LoopPositions {
    std::vector<int64_t> first, step;
    std::map<std::string, int64_t> fixed;
};

/** `n` with loop j narrowed to [lo, hi) (hi > lo); a loop of one iteration is substituted away,
 *  as collect_nest does. */
Nest narrow(const Nest &n, size_t j, int64_t lo, int64_t hi, LoopPositions &pos) {
    Nest out = n;
    if (hi - lo == 1) {
        Halide::Expr v(static_cast<int>(lo));
        pos.fixed[n.loops[j].name] = pos.first[j] + pos.step[j] * lo;
        out.loops.erase(out.loops.begin() + static_cast<std::ptrdiff_t>(j));
        out.index = simplify(substitute(n.loops[j].name, v, n.index));
        out.value = simplify(substitute(n.loops[j].name, v, n.value));
        pos.first.erase(pos.first.begin() + static_cast<std::ptrdiff_t>(j));
        pos.step.erase(pos.step.begin() + static_cast<std::ptrdiff_t>(j));
    } else {
        out.loops[j].min = lo;
        out.loops[j].extent = hi - lo;
    }
    return out;
}

/** `n` with loop j walking lo, lo + stride, ... (count iterations) as a loop from 0: the
 *  index and value read it as lo + stride * k (an SBUF destination stride, a source index that
 *  simplifies to k plus a constant). */
Nest strided(const Nest &n, size_t j, int64_t lo, int64_t stride, int64_t count,
             LoopPositions &pos) {
    if (count == 1)
        return narrow(n, j, lo, lo + 1, pos);
    Nest out = n;
    const std::string &name = n.loops[j].name;
    Halide::Expr k = Variable::make(Halide::Int(32), name);
    Halide::Expr at = static_cast<int>(lo) + static_cast<int>(stride) * k;
    out.index = simplify(substitute(name, at, n.index));
    out.value = simplify(substitute(name, at, n.value));
    out.loops[j].min = 0;
    out.loops[j].extent = count;
    pos.first[j] += pos.step[j] * lo;
    pos.step[j] *= stride;
    return out;
}

} // namespace

bool Selector::select_bounded_copy(const Nest &n) {
    const Select *sel = n.value.as<Select>();
    // The condition a function of the loops alone (a mask read from memory is an elementwise
    // select), the border a constant, the inside a load (either way round: Halide's simplifier
    // may have negated the condition).
    if (!sel || reads_memory(sel->condition))
        return false;
    auto own_element = [&](const Halide::Expr &e) {
        const Load *l = as_load(e);
        return l && l->name == n.dst && graph_equal(l->index, n.index);
    };
    bool inside_first =
        as_load(sel->true_value) && (is_const(sel->false_value) || own_element(sel->false_value));
    if (!inside_first && !(as_load(sel->false_value) && is_const(sel->true_value)))
        return false;
    Halide::Expr border = inside_first ? sel->false_value : sel->true_value;
    // A border that is the destination's own element (an update that copies the box into a
    // region an earlier stage filled) is left as it is: no fill.
    bool keep_border = own_element(border);
    std::vector<Halide::Expr> terms;
    conjuncts(box_form(sel->condition, !inside_first), terms);
    Nest copy = n;
    copy.value = inside_first ? sel->true_value : sel->false_value;
    LoopPositions pos{
        std::vector<int64_t>(copy.loops.size(), 0), std::vector<int64_t>(copy.loops.size(), 1), {}};
    bool empty = false; // the whole nest is border
    // Narrow each loop to the iterations where every comparison naming it holds: an interval,
    // or every stride-th position of one (a spread image, ConvTaps' input_strides).
    for (Halide::Expr t : terms) {
        for (const auto &[name, at] : pos.fixed) // loops narrowed to one position earlier
            t = substitute(name, Halide::Expr(static_cast<int>(at)), t);
        std::vector<size_t> named = loops_named(t, copy.loops);
        if (named.size() > 1)
            return false; // not a rectangle: an elementwise select
        if (named.empty()) {
            empty = empty || is_const_zero(simplify(t));
            continue;
        }
        size_t j = named[0];
        const Loop &l = copy.loops[j];
        std::vector<int64_t> kept;
        for (int64_t k = l.min; k < l.min + l.extent; k++) {
            Halide::Expr at(static_cast<int>(pos.first[j] + pos.step[j] * k));
            Halide::Expr holds = simplify(substitute(l.name, at, t));
            if (!is_const(holds))
                return false; // names something besides the loop
            if (!is_const_zero(holds))
                kept.push_back(k);
        }
        if (kept.empty()) {
            empty = true;
            break;
        }
        int64_t stride = kept.size() > 1 ? kept[1] - kept[0] : 1;
        for (size_t i = 1; i < kept.size(); i++)
            if (kept[i] - kept[i - 1] != stride)
                return false; // neither an interval nor a progression
        if (stride > 1)
            copy = strided(copy, j, kept[0], stride, static_cast<int64_t>(kept.size()), pos);
        else
            copy = narrow(copy, j, kept.front(), kept.back() + 1, pos);
    }
    bool whole = !empty && copy.loops.size() == n.loops.size();
    for (size_t j = 0; whole && j < n.loops.size(); j++)
        whole = copy.loops[j].extent == n.loops[j].extent;
    if (!whole && !keep_border) {
        Nest fill = n;
        fill.value = border;
        select_nest_instructions(fill);
    }
    if (empty)
        return true;
    // Inside the box the clamps of the load's index are the identity: simplify them away.
    copy.value = simplify(copy.value, true, loop_ranges(copy.loops));
    select_nest_instructions(copy);
    return true;
}

} // namespace nhc::codegen
