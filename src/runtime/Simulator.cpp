#include "runtime/Simulator.h"

#include "neff/ComputeCost.h"
#include "neff/Footprint.h"
#include "runtime/RaceDetector.h"
#include "support/Error.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <sstream>

namespace nhc::rt {

using neff::Engine;
using neff::Instr;

using neff::Footprint;

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Completion {
    double time;
    uint64_t seq; ///< issue order: ties resolve deterministically
    int32_t sem;
    int64_t release; ///< what the race detector publishes with the signal (-1: nothing)
    bool operator>(const Completion &o) const {
        return time != o.time ? time > o.time : seq > o.seq;
    }
};

struct QueueState {
    double last_start = 0;
    double last_done = 0;         ///< transfers of a queue complete in order (nc.md:L244)
    std::deque<double> in_flight; ///< completion times of transfers not yet retired
};

class Sim {
public:
    Sim(Machine &m, const SimOptions &o) : m_(m), t_(m.target()), p_(m.program()), opt_(o) {
        dma_free_.assign(size_t(t_.dma.num_engines), 0.0);
        port_free_.assign(size_t(neff::num_shared_ports(t_)), 0.0);
        std::fill(std::begin(ready_at_), std::end(ready_at_), -1.0);
        res_.summary.dma_engines = t_.dma.num_engines;
        if (o.check_races) {
            races_ = std::make_unique<RaceDetector>(p_);
        }
    }

    SimResult run() {
        while (step()) {
        }
        return std::move(res_);
    }

private:
    bool ready(const Instr &i) const {
        for (const auto &w : i.waits) {
            if (sem(w.sem) < w.value) {
                return false;
            }
        }
        return true;
    }
    uint32_t sem(uint32_t s) const {
        auto it = sems_.find(s);
        return it == sems_.end() ? 0 : it->second;
    }

    /** Issues one instruction or retires completions; false when the program has finished. */
    bool step() {
        int best = -1;
        double best_t = kNever;
        for (int e = 0; e < neff::kNumEngines; e++) {
            if (pc_[e] < p_.streams[e].size() && ready(p_.streams[e][pc_[e]])) {
                if (ready_at_[e] < 0) {
                    ready_at_[e] = now_; // its waits hold from the event just retired
                }
                double t = std::max({free_[e], now_, port_free(Engine(e), p_.streams[e][pc_[e]])});
                if (t < best_t) {
                    best = e;
                    best_t = t;
                }
            }
        }
        double next = events_.empty() ? kNever : events_.top().time;
        if (best < 0 && events_.empty()) {
            check_finished();
            return false;
        }
        if (next <= best_t) {
            now_ = next;
            while (!events_.empty() && events_.top().time == next) {
                if (events_.top().sem >= 0) {
                    sems_[uint32_t(events_.top().sem)]++;
                    if (races_) {
                        races_->on_signal(uint32_t(events_.top().sem), events_.top().release);
                    }
                }
                events_.pop();
            }
            return true;
        }
        now_ = best_t;
        issue(Engine(best), best_t);
        return true;
    }

    void issue(Engine e, double start) {
        int ei = int(e);
        size_t index = pc_[ei]++;
        const Instr &i = p_.streams[ei][index];
        Where w{e, index, &i};
        ExecInfo info = execute_instr(m_, i, w);
        release_ = races_ ? races_->on_issue(e, index, i) : -1;
        Summary &s = res_.summary;
        s.instructions[ei]++;
        if (info.is_dma) {
            ready_at_[ei] = -1;
            double end = start + t_.dma.issue_ns;
            if (i.src1.present()) { // indirect: GpSimd generates its descriptors (nc.md:L267)
                end += target::swdge_descriptor_ns(t_, i.src1.free_count());
            }
            busy(e, start, end, i, index);
            transfer(i, index, info.dma, end);
            return;
        }
        bool waited = !i.waits.empty() && ready_at_[ei] > free_[ei];
        bool chained = depends_on_previous(e, i); // always: it records this one's writes
        info.cost.dependent = waited || chained;
        ready_at_[ei] = -1;
        double end = start + target::compute_ns(t_, info.cost);
        take_ports(e, i, end);
        busy(e, start, end, i, index);
        s.flops += info.flops;
        if (info.flops > 0) {
            s.ideal_pe_ns += info.flops / info.peak_flops_per_ns;
        }
        complete(end, i.signal);
    }

    void busy(Engine e, double start, double end, const Instr &i, size_t index) {
        int ei = int(e);
        free_[ei] = end;
        res_.summary.busy_ns[ei] += end - start;
        res_.summary.total_ns = std::max(res_.summary.total_ns, end);
        if (opt_.trace && i.op != neff::Opcode::Dma) {
            res_.trace.push_back({target::engine_name(e), label(i), index, start, end, 0});
        }
    }

    void transfer(const Instr &i, size_t index, const target::DmaQuery &q, double issued) {
        QueueState &qs = queues_[i.queue];
        double ready = std::max(issued + t_.dma.fixed_latency_ns, qs.last_start);
        while (!qs.in_flight.empty() && qs.in_flight.front() <= ready) {
            qs.in_flight.pop_front();
        }
        int limit = t_.dma.max_in_flight_per_queue;
        if (limit > 0 && int(qs.in_flight.size()) >= limit) {
            // Wait for enough earlier transfers of this queue to retire.
            ready = std::max(ready, qs.in_flight[qs.in_flight.size() - size_t(limit)]);
        }
        qs.last_start = ready;
        double done = ready;
        std::vector<target::DmaShare> shares = target::dma_split(t_, q);
        int busy_engines = busy_dma_engines(shares, ready);
        for (const auto &share : shares) {
            double s = std::max(ready, dma_free_[size_t(share.engine)]);
            double e = s + target::dma_engine_ns(t_, share, busy_engines);
            dma_free_[size_t(share.engine)] = e;
            res_.summary.dma_busy_ns += e - s;
            done = std::max(done, e);
        }
        done = std::max(done, qs.last_done); // completes in order within its queue (nc.md:L244)
        qs.last_done = done;
        qs.in_flight.push_back(done); // stays sorted: done is at least every earlier one's
        res_.summary.dma_bytes += q.bytes;
        res_.summary.dma_transfers++;
        res_.summary.total_ns = std::max(res_.summary.total_ns, done);
        if (opt_.trace) {
            res_.trace.push_back(
                {"dma q" + std::to_string(i.queue), label(i), index, ready, done, q.bytes});
        }
        complete(done, i.signal);
    }

    void complete(double time, int32_t signal) { events_.push({time, seq_++, signal, release_}); }

    /** DMA engines moving data at `when`: this transfer's own plus the others still busy. */
    int busy_dma_engines(const std::vector<target::DmaShare> &shares, double when) const {
        int n = int(shares.size());
        for (size_t k = 0; k < dma_free_.size(); k++) {
            bool mine = std::any_of(shares.begin(), shares.end(), [&](const target::DmaShare &sh) {
                return sh.engine == int(k);
            });
            n += !mine && dma_free_[k] > when;
        }
        return n;
    }

    /** A compute instruction that reads what the previous compute instruction of its engine
     *  wrote is a dependent back-to-back instruction (nc.md:L161-162). PE accumulation chains
     *  are pipelined and exempt. Remembers this instruction's writes for the next one. */
    bool depends_on_previous(Engine e, const Instr &i) {
        if (e == Engine::PE || i.op == neff::Opcode::Nop) {
            return false;
        }
        instr_footprints(i, reads_, writes_);
        bool dep = any_overlap(reads_, last_writes_[int(e)]);
        last_writes_[int(e)].swap(writes_);
        return dep;
    }

    /** When the shared ports instruction `i` occupies on `e` are free (neff::shared_ports). */
    double port_free(Engine e, const Instr &i) {
        ports_.clear();
        neff::shared_ports(t_, e, i, ports_, port_reads_, port_writes_);
        double t = 0;
        for (int p : ports_) {
            t = std::max(t, port_free_[size_t(p)]);
        }
        return t;
    }
    void take_ports(Engine e, const Instr &i, double end) {
        ports_.clear();
        neff::shared_ports(t_, e, i, ports_, port_reads_, port_writes_);
        for (int p : ports_) {
            port_free_[size_t(p)] = std::max(port_free_[size_t(p)], end);
        }
    }

    static std::string label(const Instr &i) {
        std::string s = neff::opcode_name(i.op);
        return i.name.empty() ? s : s + " " + i.name;
    }

    void check_finished() const {
        std::ostringstream os;
        int blocked = 0;
        for (int e = 0; e < neff::kNumEngines; e++) {
            if (pc_[e] >= p_.streams[e].size()) {
                continue;
            }
            const Instr &i = p_.streams[e][pc_[e]];
            os << (blocked++ ? "; " : "") << Where{Engine(e), pc_[e], &i}.str() << " waits for";
            for (const auto &w : i.waits) {
                os << " s" << w.sem << ">=" << w.value << " (is " << sem(w.sem) << ")";
            }
        }
        if (blocked) {
            user_error("NHC_ERT007", "semaphore deadlock at ", now_, " ns: ", os.str());
        }
    }

    Machine &m_;
    const target::TargetInfo &t_;
    const neff::Program &p_;
    SimOptions opt_;
    SimResult res_;
    double now_ = 0;
    double free_[neff::kNumEngines] = {};
    size_t pc_[neff::kNumEngines] = {};
    std::map<uint32_t, uint32_t> sems_;
    std::map<int32_t, QueueState> queues_;
    std::vector<double> dma_free_;
    double ready_at_[neff::kNumEngines]; ///< when the next instruction's waits came to hold
    std::vector<Footprint> last_writes_[neff::kNumEngines];
    std::vector<Footprint> reads_, writes_, port_reads_, port_writes_; // scratch
    std::vector<int> ports_;        ///< scratch: neff::shared_ports of one instruction
    std::vector<double> port_free_; ///< per shared port (neff::shared_ports), when it is free
    std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> events_;
    uint64_t seq_ = 0;
    std::unique_ptr<RaceDetector> races_; ///< null unless SimOptions::check_races
    int64_t release_ = -1;                ///< of the instruction being issued
};

} // namespace

SimResult simulate(Machine &m, const SimOptions &opt) {
    return Sim(m, opt).run();
}

} // namespace nhc::rt
