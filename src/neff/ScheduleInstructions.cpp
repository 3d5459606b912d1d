#include "neff/ScheduleInstructions.h"

#include "neff/ReplaySchedule.h"
#include "neff/ScheduleResources.h"
#include "support/Error.h"
#include "target/CostModel.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace nhc::codegen {

using neff::Engine;
using neff::Instr;
using neff::Opcode;

namespace {

using Kind = target::CostQuery::Kind;

Kind cost_kind(Opcode op) {
    switch (op) {
    case Opcode::Matmul:
        return Kind::Matmul;
    case Opcode::Transpose:
        return Kind::Transpose;
    case Opcode::Activation:
        return Kind::Activation;
    case Opcode::TensorTensor:
        return Kind::TensorTensor;
    case Opcode::TensorScalar:
        return Kind::TensorScalar;
    case Opcode::TensorCopy:
        return Kind::TensorCopy;
    case Opcode::TensorReduce:
        return Kind::TensorReduce;
    case Opcode::Memset:
        return Kind::Memset;
    case Opcode::Iota:
        return Kind::Iota;
    case Opcode::Select:
        return Kind::Select;
    default:
        return Kind::Nop;
    }
}

/** A DMA's time on the engines it is split over: its bytes at the short-row rate, plus the fixed
 *  latency before it starts (target::DmaParams; a pessimistic estimate is enough to order). */
double dma_ns(const target::TargetInfo &t, const Instr &i) {
    const target::DmaParams &d = t.dma;
    const neff::AccessPattern &side = i.src.space == neff::MemSpace::HBM ? i.dst : i.src;
    int partitions = std::max(1, side.num_partitions);
    int engines = std::min(d.num_engines,
                           (partitions + d.partitions_per_engine - 1) / d.partitions_per_engine);
    // Charged like the simulator: the larger of the element sizes (a cast reads its source).
    double bytes = double(i.dst.num_partitions) * double(i.dst.free_count()) *
                   double(std::max(neff::dtype_size(i.dst.dtype), neff::dtype_size(i.src.dtype)));
    return d.fixed_latency_ns +
           bytes / (std::max(1, engines) * d.bytes_per_ns * std::min(1.0, d.small_row_efficiency));
}

/** The ready instructions; pop() gives the one that can start first, among equals the lowest
 *  (priority, index) (issue_priority): what a scan of all of them gives, without its quadratic
 *  cost on programs of a hundred thousand DMAs. Instructions are grouped by signature: in a
 *  group, those ready by the time the group's resources are free (`available`) start together,
 *  so its first is the lowest (priority, index); the others (`waiting`) start when ready.
 *  Resources only get busier, so an instruction never moves back from available to waiting. */
class ReadyQueue {
public:
    ReadyQueue(const ScheduleResources &res, const std::vector<int> &priority)
        : res_(res), priority_(priority) {}

    void push(int i, double ready_at) {
        auto [it, fresh] = group_of_.emplace(res_.signature(i), int(groups_.size()));
        if (fresh)
            groups_.push_back(Group{i, {}, {}});
        groups_[size_t(it->second)].waiting.insert({ready_at, i});
        size_++;
    }
    bool empty() const { return size_ == 0; }

    /** The instruction to issue, removed from the queue. */
    struct Pick {
        double start;
        int index;
        bool waited; ///< ready after its engine was free: it waited for another engine
    };
    Pick pop() {
        Rank best{std::numeric_limits<double>::infinity(), 0, -1};
        Group *from = nullptr;
        for (Group &g : groups_) {
            if (g.waiting.empty() && g.available.empty())
                continue;
            double free_at = res_.start(g.member, 0);
            while (!g.waiting.empty() && g.waiting.begin()->first <= free_at) {
                g.available.insert(key(g.waiting.begin()->second));
                g.waiting.erase(g.waiting.begin());
            }
            Rank first = g.available.empty()
                             ? rank(g.waiting.begin()->first, g.waiting.begin()->second)
                             : rank(free_at, g.available.begin()->second);
            if (first < best)
                best = first, from = &g;
        }
        int chosen = std::get<2>(best);
        size_--;
        if (from->available.empty() || from->available.begin()->second != chosen) {
            from->waiting.erase(from->waiting.begin());
            return {std::get<0>(best), chosen, true};
        }
        // Among the instructions that can start now, the first that does not read what its
        // engine's last instruction wrote, looking a few ahead: a dependent back-to-back
        // instruction costs the engine the dependency overhead (nc.md:L161).
        auto it = from->available.begin();
        if (res_.chained(it->second)) {
            auto look = std::next(it);
            for (int k = 0; k < kLookahead && look != from->available.end(); k++, ++look)
                if (!res_.chained(look->second)) {
                    it = look;
                    break;
                }
        }
        chosen = it->second;
        from->available.erase(it);
        return {std::get<0>(best), chosen, false};
    }

private:
    /** How far past the first ready instruction pop() looks for one that is not chained: enough
     *  for the other heads of an attention group, and bounded, so the scheduler stays near linear.
     */
    static constexpr int kLookahead = 8;
    using Rank = std::tuple<double, int, int>; ///< (start, priority, index)
    std::pair<int, int> key(int i) const { return {priority_[size_t(i)], i}; }
    Rank rank(double start, int i) const { return {start, priority_[size_t(i)], i}; }

    struct Group {
        int member; ///< any instruction of the signature, to ask when its resources are free
        std::set<std::pair<double, int>> waiting; ///< (ready time, index)
        std::set<std::pair<int, int>> available;  ///< (priority, index)
    };
    const ScheduleResources &res_;
    const std::vector<int> &priority_;
    std::map<std::vector<int>, int> group_of_;
    std::vector<Group> groups_;
    size_t size_ = 0;
};

/** The order among instructions that can start at the same time: a load from HBM ranks as the
 *  first store (to HBM) that depends on it, every other instruction as itself. Loads that are
 *  ready together, as an A-resident matmul's operands all are at the start, then go out in the
 *  order the output needs them rather than the order of the loop nest: the first column tile's
 *  B before A's later row tiles, whose root loop comes first in the program (MatMul 2048^3 bf16,
 *  bench/README.md). Indices are program order, so the instructions that depend on `i` come
 *  after it and one backward sweep suffices. */
std::vector<int> issue_priority(const std::vector<SelectedInstr> &instrs,
                                const std::vector<std::vector<int>> &succs) {
    int n = static_cast<int>(instrs.size());
    std::vector<int> first_store(static_cast<size_t>(n), n), priority(static_cast<size_t>(n), 0);
    for (int i = n - 1; i >= 0; i--) {
        const Instr &ins = instrs[size_t(i)].instr;
        bool dma = ins.op == Opcode::Dma;
        if (dma && ins.dst.space == neff::MemSpace::HBM)
            first_store[size_t(i)] = i;
        else
            for (int s : succs[size_t(i)])
                first_store[size_t(i)] = std::min(first_store[size_t(i)], first_store[size_t(s)]);
        bool load =
            dma && ins.src.space == neff::MemSpace::HBM && ins.dst.space != neff::MemSpace::HBM;
        priority[size_t(i)] = load ? first_store[size_t(i)] : i;
    }
    return priority;
}

/** SelectedInstr::by_critical_path: those instructions take their priorities (the set of them
 *  stays the same) in the order of their longest estimated path to the end of the program,
 *  longest first. Among a group's PE instructions that can start at once, the transposes whose
 *  copies the next row tile's matmuls wait for then come before the last matmuls of the current
 *  one, whose results only an epilogue and a store wait for. */
void rank_by_critical_path(const std::vector<SelectedInstr> &instrs,
                           const std::vector<std::vector<int>> &succs, const target::TargetInfo &t,
                           std::vector<int> &priority) {
    int n = static_cast<int>(instrs.size());
    std::vector<int> ranked;
    for (int i = 0; i < n; i++)
        if (instrs[size_t(i)].by_critical_path)
            ranked.push_back(i);
    if (ranked.empty())
        return;
    std::vector<double> to_end(size_t(n), 0); // successors come later in program order
    for (int i = n - 1; i >= 0; i--) {
        double longest = 0;
        for (int s : succs[size_t(i)])
            longest = std::max(longest, to_end[size_t(s)]);
        to_end[size_t(i)] =
            longest + estimated_ns(t, instrs[size_t(i)].engine, instrs[size_t(i)].instr);
    }
    std::vector<int> priorities;
    for (int i : ranked)
        priorities.push_back(priority[size_t(i)]);
    std::sort(priorities.begin(), priorities.end());
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](int a, int b) { return to_end[size_t(a)] > to_end[size_t(b)]; });
    for (size_t k = 0; k < ranked.size(); k++)
        priority[size_t(ranked[k])] = priorities[k];
}

} // namespace

double estimated_ns(const target::TargetInfo &t, Engine e, const Instr &i) {
    if (i.op == Opcode::Dma)
        return dma_ns(t, i);
    target::CostQuery q;
    q.kind = cost_kind(i.op);
    if (q.kind == Kind::Nop)
        return 0;
    q.engine = e;
    q.n = i.dst.present() ? i.dst.free_count() : 0;
    q.partitions = i.dst.num_partitions;
    if (i.op == Opcode::TensorReduce)
        q.n = i.src.free_count();
    if (i.op == Opcode::Matmul || i.op == Opcode::Transpose) {
        q.stationary_free = i.src.num_partitions > 0 ? i.dst.num_partitions : 0;
        q.fp32_matmul = i.src.dtype == neff::DType::F32;
    }
    return target::compute_ns(t, q);
}

double schedule_instructions(std::vector<SelectedInstr> &instrs, const target::TargetInfo &t,
                             bool dependency_overhead, double *replayed_ns) {
    int n = static_cast<int>(instrs.size());
    std::vector<std::vector<int>> succs(n);
    std::vector<int> pending(n, 0);
    instruction_dependencies(instrs, succs, pending);
    std::vector<double> ready_at(n, 0);
    ScheduleResources res(t, instrs,
                          dependency_overhead ? ScheduleModel::WithDependencyOverhead
                                              : ScheduleModel::Coarse);
    std::vector<int> priority = issue_priority(instrs, succs);
    rank_by_critical_path(instrs, succs, t, priority);
    ReadyQueue ready(res, priority);
    for (int i = 0; i < n; i++)
        if (pending[i] == 0)
            ready.push(i, ready_at[size_t(i)]);
    std::vector<int> order;
    order.reserve(n);
    double makespan = 0;
    while (!ready.empty()) {
        auto [start, i, waited] = ready.pop();
        double finish = res.take(i, start, waited);
        makespan = std::max(makespan, finish);
        order.push_back(i);
        for (int s : succs[size_t(i)]) {
            ready_at[size_t(s)] = std::max(ready_at[size_t(s)], finish);
            if (--pending[size_t(s)] == 0)
                ready.push(s, ready_at[size_t(s)]);
        }
    }
    nhc_assert(static_cast<int>(order.size()) == n, "instruction dependencies form a cycle");
    std::vector<SelectedInstr> reordered;
    reordered.reserve(instrs.size());
    for (int i : order)
        reordered.push_back(std::move(instrs[static_cast<size_t>(i)]));
    instrs = std::move(reordered);
    if (replayed_ns) { // the dependencies again, by position in the new order
        std::vector<int> position(instrs.size(), 0);
        for (int k = 0; k < n; k++)
            position[size_t(order[size_t(k)])] = k;
        std::vector<std::vector<int>> moved(instrs.size());
        for (int i = 0; i < n; i++)
            for (int s : succs[size_t(i)])
                moved[size_t(position[size_t(i)])].push_back(position[size_t(s)]);
        *replayed_ns = replay_estimate(instrs, moved, t);
    }
    return makespan;
}

} // namespace nhc::codegen
