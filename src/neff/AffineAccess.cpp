#include "neff/AffineAccess.h"

#include <map>
#include <tuple>

namespace nhc::codegen {

Halide::Internal::Scope<Halide::Internal::Interval> loop_ranges(const std::vector<Loop> &loops) {
    Halide::Internal::Scope<Halide::Internal::Interval> ranges;
    for (const Loop &l : loops)
        ranges.push(l.name, Halide::Internal::Interval(
                                Halide::Expr(static_cast<int>(l.min)),
                                Halide::Expr(static_cast<int>(l.min + l.extent - 1))));
    return ranges;
}

using namespace Halide::Internal;

namespace {

std::optional<Affine> analyse(const Halide::Expr &index, const std::vector<Loop> &loops) {
    Affine a;
    Halide::Expr at_min = index;
    for (const Loop &l : loops)
        at_min = substitute(l.name, Halide::Expr(static_cast<int>(l.min)), at_min);
    at_min = simplify(at_min);
    const int64_t *base = as_const_int(at_min);
    if (!base)
        return std::nullopt;
    a.base = *base;
    for (const Loop &l : loops) {
        Halide::Expr v = Variable::make(Halide::Int(32), l.name);
        Halide::Expr step = simplify(substitute(l.name, v + 1, index) - index);
        const int64_t *s = as_const_int(step);
        if (!s)
            return std::nullopt;
        a.strides.push_back(*s);
    }
    // A stride found at one point is the stride everywhere only if the index is linear: check
    // that the last point predicted from base and strides is the real one.
    Halide::Expr at_max = index;
    int64_t predicted = a.base;
    for (size_t j = 0; j < loops.size(); j++) {
        int64_t last = loops[j].min + loops[j].extent - 1;
        at_max = substitute(loops[j].name, Halide::Expr(static_cast<int>(last)), at_max);
        predicted += a.strides[j] * (loops[j].extent - 1);
    }
    Halide::Expr real_expr = simplify(at_max); // keep the node alive while reading it
    const int64_t *real = as_const_int(real_expr);
    if (!real || *real != predicted)
        return std::nullopt;
    return a;
}

/** Groups of one workload and plan share one lowered Stmt (driver/LoweringCache.h), so each
 *  later group asks again about the same index nodes under the same loops. The answers are
 *  kept per thread (the search selects candidates on several), keyed by the index's node, which
 *  the entry keeps alive so that its address names it, and by the loops; only looked up, never
 *  iterated, so the instructions do not depend on addresses. */
struct MemoKey {
    const IRNode *index;
    std::vector<std::tuple<std::string, int64_t, int64_t>> loops;
    bool operator<(const MemoKey &o) const {
        return std::tie(index, loops) < std::tie(o.index, o.loops);
    }
};
struct MemoEntry {
    Halide::Expr index; // keeps the node alive
    std::optional<Affine> affine;
};
constexpr size_t kMaxMemoEntries = size_t(1) << 16; // then started again: memory stays bounded

} // namespace

std::optional<Affine> affine_index(const Halide::Expr &index, const std::vector<Loop> &loops) {
    thread_local std::map<MemoKey, MemoEntry> memo;
    MemoKey key{index.get(), {}};
    for (const Loop &l : loops)
        key.loops.emplace_back(l.name, l.min, l.extent);
    auto it = memo.find(key);
    if (it != memo.end())
        return it->second.affine;
    if (memo.size() >= kMaxMemoEntries)
        memo.clear();
    std::optional<Affine> a = analyse(index, loops);
    memo.emplace(std::move(key), MemoEntry{index, a});
    return a;
}

} // namespace nhc::codegen
