#include "neff/ScheduleInstructions.h"

#include "neff/ComputeCost.h"
#include "neff/DmaCost.h"
#include "neff/Footprint.h"
#include "neff/Hazards.h"
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

/** What the schedule models: -O1's coarse costs (estimated_ns); -O2's adds the dependency
 *  overhead; the replay of a scheduled order (replay_estimate) charges what the simulator charges
 *  (neff/ComputeCost.h's costs, the shared SBUF and PSUM ports, and DMA engines taken by transfers
 *  as they are issued). The list schedule uses the first two only: ReadyQueue's signatures leave
 *  the ports out. */
enum class Model { Coarse, WithDependencyOverhead, AsSimulated };

/** Where the list scheduler expects each engine, DMA queue and DMA engine to be free. All
 *  queues share the DMA engines, as in the simulator (target::dma_split): a transfer waits for
 *  the engines it is split over, so loads issued together are estimated one after another rather
 *  than each at the full bandwidth of its queue. */
class Resources {
    /** DMA queue numbers the schedule keeps state for (issue and store queues together). */
    static constexpr size_t kMaxQueues = 64;

public:
    Resources(const target::TargetInfo &t, const std::vector<SelectedInstr> &instrs, Model model)
        : t_(t), instrs_(instrs), dependency_overhead_(model != Model::Coarse),
          as_simulated_(model == Model::AsSimulated), shares_(instrs.size()),
          compute_ns_(instrs.size(), 0), ports_(instrs.size()),
          port_free_(size_t(1 + t.psum_banks), 0), free_(neff::kNumEngines + kMaxQueues, 0),
          dma_free_(size_t(t.dma.num_engines), 0), last_(neff::kNumEngines, -1) {
        for (size_t i = 0; i < instrs.size(); i++) { // once: start() asks at every step
            const SelectedInstr &si = instrs[i];
            if (si.instr.op == Opcode::Dma)
                shares_[i] = target::dma_split(t, neff::dma_query(si.instr));
            else if (as_simulated_) {
                compute_ns_[i] = target::compute_ns(t, neff::compute_query(t, si.engine, si.instr));
                ports_[i] = shared_ports(si);
            } else
                compute_ns_[i] = estimated_ns(t, si.engine, si.instr);
        }
        if (dependency_overhead_) {
            reads_.resize(instrs.size());
            writes_.resize(instrs.size());
            for (size_t i = 0; i < instrs.size(); i++)
                if (pays_overhead(instrs[i]))
                    neff::instr_footprints(instrs[i].instr, reads_[i], writes_[i]);
        }
    }

    /** Whether `i` reads what the last instruction issued on its engine wrote: a dependent
     *  back-to-back instruction, which the simulator charges the dependency overhead (nc.md:L161,
     *  Simulator.cpp's depends_on_previous). */
    bool chained(int i) const {
        const SelectedInstr &si = instrs_[size_t(i)];
        if (!dependency_overhead_ || !pays_overhead(si))
            return false;
        int last = last_[size_t(si.engine)];
        return last >= 0 && neff::any_overlap(reads_[size_t(i)], writes_[size_t(last)]);
    }

    /** When instruction `i` could start if it were issued now and were ready at `ready`. */
    double start(int i, double ready) const {
        double s = std::max(ready, free_[resource(i)]);
        for (int p : ports_[size_t(i)])
            s = std::max(s, port_free_[size_t(p)]);
        if (!as_simulated_) // the simulator's engines take transfers as they are issued
            for (const target::DmaShare &sh : shares_[size_t(i)])
                s = std::max(s, dma_free_[size_t(sh.engine)] - t_.dma.fixed_latency_ns);
        return s;
    }

    /** Takes the resources of instruction `i` from `start` on; returns when its results are
     *  ready. */
    double take(int i, double start, bool waited) {
        const SelectedInstr &si = instrs_[size_t(i)];
        double finish = start;
        if (pays_overhead(si) && dependency_overhead_) {
            // The simulator charges the overhead to an instruction that waited for another
            // engine with its own engine idle, or that reads its predecessor's writes.
            if (waited || chained(i))
                finish += t_.dependent_overhead / t_.clock_ghz(si.engine);
            last_[size_t(si.engine)] = i;
        }
        if (si.instr.op == Opcode::Dma) {
            const std::vector<target::DmaShare> &shares = shares_[size_t(i)];
            double data = start + t_.dma.fixed_latency_ns;
            finish = data;
            for (const target::DmaShare &sh : shares) {
                double &f = dma_free_[size_t(sh.engine)];
                f = std::max(f, data) + target::dma_engine_ns(t_, sh, int(shares.size()));
                finish = std::max(finish, f);
            }
            // As in the simulator, a queue's transfers start in order, each after its fixed
            // latency, while earlier ones are still moving data, and complete in order.
            double &done = queue_done_[size_t(si.instr.queue)];
            finish = done = std::max(finish, done);
            free_[resource(i)] = start;
            return finish;
        }
        finish += compute_ns_[size_t(i)];
        free_[resource(i)] = finish;
        for (int p : ports_[size_t(i)])
            port_free_[size_t(p)] = std::max(port_free_[size_t(p)], finish);
        return finish;
    }

    /** What instruction `i` waits for besides its operands: its engine or DMA queue, and the
     *  DMA engines its transfer is split over. Instructions with one signature can start at
     *  max(their ready time, start(i, 0)). */
    std::vector<int> signature(int i) const {
        std::vector<int> sig = {resource(i)};
        for (const target::DmaShare &sh : shares_[size_t(i)])
            sig.push_back(sh.engine);
        return sig;
    }

private:
    /** The shared ports a compute instruction occupies, as the simulator charges them
     *  (nc.md:L227): 0 for the VectorE/GpSimdE SBUF port (NC-v2), 1 + b for the VectorE/ScalarE
     *  port of PSUM bank b (NC-v2: one port for every bank). */
    std::vector<int> shared_ports(const SelectedInstr &si) const {
        std::vector<int> ports;
        if (si.instr.op == Opcode::Dma || si.instr.op == Opcode::Nop)
            return ports;
        bool sbuf_port =
            t_.dve_pool_share_sbuf_port && (si.engine == Engine::DVE || si.engine == Engine::POOL);
        bool psum_port = si.engine == Engine::DVE || si.engine == Engine::ACT;
        std::vector<neff::Footprint> reads, writes;
        neff::instr_footprints(si.instr, reads, writes);
        bool sbuf_used = false;
        for (const auto *v : {&reads, &writes})
            for (const neff::Footprint &fp : *v) {
                sbuf_used |= fp.space == neff::MemSpace::SBUF;
                if (!psum_port || fp.space != neff::MemSpace::PSUM)
                    continue;
                int64_t lo = 0, hi = t_.psum_banks - 1;
                if (t_.dve_act_psum_contention_per_bank) {
                    lo = fp.begin / t_.psum_bank_bytes;
                    hi = std::min<int64_t>(hi, (fp.end - 1) / t_.psum_bank_bytes);
                }
                for (int64_t b = lo; b <= hi; b++)
                    ports.push_back(1 + static_cast<int>(b));
            }
        if (sbuf_port && sbuf_used)
            ports.push_back(0);
        return ports;
    }

    static bool pays_overhead(const SelectedInstr &si) {
        return si.instr.op != Opcode::Dma && si.instr.op != Opcode::Nop && si.engine != Engine::PE;
    }

    /** An instruction's engine, or its DMA queue (transfers of one queue start in order). */
    int resource(int i) const {
        const SelectedInstr &si = instrs_[size_t(i)];
        return si.instr.op == Opcode::Dma ? neff::kNumEngines + si.instr.queue
                                          : static_cast<int>(si.engine);
    }

    const target::TargetInfo &t_;
    const std::vector<SelectedInstr> &instrs_;
    bool dependency_overhead_, as_simulated_;
    std::vector<std::vector<target::DmaShare>> shares_; // per DMA instruction
    /** Per compute instruction, its engine time: estimated_ns, or as simulated the simulator's
     *  own cost query (neff/ComputeCost.h). */
    std::vector<double> compute_ns_;
    std::vector<std::vector<int>> ports_; ///< as simulated: shared_ports per instruction
    std::vector<double> port_free_;       ///< per shared port, when it is free
    std::vector<double> free_, dma_free_;
    std::vector<double> queue_done_ = std::vector<double>(kMaxQueues, 0); ///< per queue, last done
    std::vector<int> last_; ///< per engine, the last compute instruction issued
    std::vector<std::vector<neff::Footprint>> reads_, writes_; // per compute instruction
};

/** The ready instructions; pop() gives the one that can start first, among equals the lowest
 *  (priority, index) (issue_priority): what a scan of all of them gives, without its quadratic
 *  cost on programs of a hundred thousand DMAs. Instructions are grouped by signature: in a
 *  group, those ready by the time the group's resources are free (`available`) start together,
 *  so its first is the lowest (priority, index); the others (`waiting`) start when ready.
 *  Resources only get busier, so an instruction never moves back from available to waiting. */
class ReadyQueue {
public:
    ReadyQueue(const Resources &res, const std::vector<int> &priority)
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
    const Resources &res_;
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

/** Each instruction's successors by Hazards.h's dependencies, and how many it waits for. */
void dependencies(const std::vector<SelectedInstr> &instrs, std::vector<std::vector<int>> &succs,
                  std::vector<int> &pending) {
    HazardTracker hazards;
    for (int i = 0; i < static_cast<int>(instrs.size()); i++) {
        std::vector<int> deps = hazards.add(instrs[size_t(i)].instr, i);
        pending[size_t(i)] = static_cast<int>(deps.size());
        for (int d : deps)
            succs[size_t(d)].push_back(i);
    }
}

/** replay_estimate of `instrs`, whose dependencies `succs` gives. */
double replay(const std::vector<SelectedInstr> &instrs, const std::vector<std::vector<int>> &succs,
              const target::TargetInfo &t) {
    int n = static_cast<int>(instrs.size());
    std::vector<int> pending(n, 0);
    for (const std::vector<int> &after : succs)
        for (int s : after)
            pending[size_t(s)]++;
    // Each engine's stream, in the order given; a DMA is in the stream of the engine issuing it.
    std::vector<std::vector<int>> stream(neff::kNumEngines);
    std::vector<bool> waits(n, false); // on a semaphore: a transfer or another engine's result
    for (int i = 0; i < n; i++) {
        stream[size_t(instrs[size_t(i)].engine)].push_back(i);
        for (int s : succs[size_t(i)])
            waits[size_t(s)] = waits[size_t(s)] || instrs[size_t(i)].instr.op == Opcode::Dma ||
                               instrs[size_t(i)].engine != instrs[size_t(s)].engine;
    }
    Resources res(t, instrs, Model::AsSimulated);
    std::vector<size_t> next(neff::kNumEngines, 0);
    std::vector<double> ready_at(n, 0), engine_free(neff::kNumEngines, 0);
    double makespan = 0;
    for (int issued = 0; issued < n; issued++) {
        // As the simulator does: of the engines whose next instruction's inputs are done, the
        // one that can start it first (the lowest engine among equals).
        int engine = -1;
        double start = std::numeric_limits<double>::infinity();
        for (int e = 0; e < neff::kNumEngines; e++) {
            if (next[size_t(e)] == stream[size_t(e)].size())
                continue;
            int i = stream[size_t(e)][next[size_t(e)]];
            if (pending[size_t(i)] > 0)
                continue;
            double s = std::max(res.start(i, ready_at[size_t(i)]), engine_free[size_t(e)]);
            if (s < start)
                engine = e, start = s;
        }
        nhc_assert(engine >= 0, "the replayed order issues an instruction before its inputs");
        int i = stream[size_t(engine)][next[size_t(engine)]++];
        const Instr &ins = instrs[size_t(i)].instr;
        bool waited = waits[size_t(i)] && ready_at[size_t(i)] > engine_free[size_t(engine)];
        double finish = 0;
        if (ins.op == Opcode::Dma) {
            // Its engine issues it (TargetInfo::dma.issue_ns), generating an indirect transfer's
            // descriptors first (nc.md:L267); the transfer starts from there.
            double issued = start + t.dma.issue_ns;
            if (ins.src1.present())
                issued += target::swdge_descriptor_ns(t, ins.src1.free_count());
            finish = res.take(i, issued, waited);
            engine_free[size_t(engine)] = issued;
        } else {
            finish = res.take(i, start, waited);
            engine_free[size_t(engine)] = finish;
        }
        makespan = std::max(makespan, finish);
        for (int s : succs[size_t(i)]) {
            ready_at[size_t(s)] = std::max(ready_at[size_t(s)], finish);
            pending[size_t(s)]--;
        }
    }
    return makespan;
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
    dependencies(instrs, succs, pending);
    std::vector<double> ready_at(n, 0);
    Resources res(t, instrs, dependency_overhead ? Model::WithDependencyOverhead : Model::Coarse);
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
        *replayed_ns = replay(instrs, moved, t);
    }
    return makespan;
}

double replay_estimate(const std::vector<SelectedInstr> &instrs, const target::TargetInfo &t) {
    std::vector<std::vector<int>> succs(instrs.size());
    std::vector<int> pending(instrs.size(), 0);
    dependencies(instrs, succs, pending);
    return replay(instrs, succs, t);
}

} // namespace nhc::codegen
