#ifndef NHC_NEFF_SCHEDULERESOURCES_H
#define NHC_NEFF_SCHEDULERESOURCES_H

/** \file
 * What the list schedule (ScheduleInstructions.h) and its replay (ReplaySchedule.h) account for:
 * the dependencies between instructions (Hazards.h), and when each engine, DMA queue, DMA engine
 * and shared port is free, under one of three models of what an instruction costs. Internal to
 * those two passes.
 */

#include "neff/ComputeCost.h"
#include "neff/DmaCost.h"
#include "neff/Footprint.h"
#include "neff/Hazards.h"
#include "neff/ScheduleInstructions.h"
#include "target/CostModel.h"

#include <algorithm>
#include <vector>

namespace nhc::codegen {

/** Each instruction's successors by Hazards.h's dependencies, and how many it waits for. */
inline void instruction_dependencies(const std::vector<SelectedInstr> &instrs,
                                     std::vector<std::vector<int>> &succs,
                                     std::vector<int> &pending) {
    HazardTracker hazards;
    for (int i = 0; i < static_cast<int>(instrs.size()); i++) {
        std::vector<int> deps = hazards.add(instrs[size_t(i)].instr, i);
        pending[size_t(i)] = static_cast<int>(deps.size());
        for (int d : deps)
            succs[size_t(d)].push_back(i);
    }
}

/** What the schedule models: -O1's coarse costs (estimated_ns); -O2's adds the dependency
 *  overhead; the replay of a scheduled order (replay_estimate) charges what the simulator charges
 *  (neff/ComputeCost.h's costs, the shared SBUF and PSUM ports, and DMA engines taken by transfers
 *  as they are issued). The list schedule uses the first two only: the signatures of its ready
 *  queue (ScheduleInstructions.cpp) leave the ports out. */
enum class ScheduleModel { Coarse, WithDependencyOverhead, AsSimulated };

/** Where the list schedule (or the replay) expects each engine, DMA queue, DMA engine and shared
 *  port to be free. All queues share the DMA engines, as in the simulator (target::dma_split): a
 *  transfer's data waits for the engines it is split over, so loads issued together are estimated
 *  one after another rather than each at the full bandwidth of its queue. In the list schedule's
 *  models a transfer is also held back until those engines would be free for it; in the replay's
 *  it is issued as soon as its queue allows and queues behind the transfers issued before it. */
class ScheduleResources {
    /** DMA queue numbers the schedule keeps state for (issue and store queues together). */
    static constexpr size_t kMaxQueues = 64;

public:
    ScheduleResources(const target::TargetInfo &t, const std::vector<SelectedInstr> &instrs,
                      ScheduleModel model)
        : t_(t), instrs_(instrs), dependency_overhead_(model != ScheduleModel::Coarse),
          as_simulated_(model == ScheduleModel::AsSimulated), shares_(instrs.size()),
          compute_ns_(instrs.size(), 0), ports_(instrs.size()),
          port_free_(size_t(neff::num_shared_ports(t)), 0),
          free_(neff::kNumEngines + kMaxQueues, 0), dma_free_(size_t(t.dma.num_engines), 0),
          last_(neff::kNumEngines, -1) {
        std::vector<neff::Footprint> reads_scratch, writes_scratch;
        for (size_t i = 0; i < instrs.size(); i++) { // once: start() asks at every step
            const SelectedInstr &si = instrs[i];
            if (si.instr.op == neff::Opcode::Dma)
                shares_[i] = target::dma_split(t, neff::dma_query(si.instr));
            else if (as_simulated_) {
                compute_ns_[i] = target::compute_ns(t, neff::compute_query(t, si.engine, si.instr));
                neff::shared_ports(t, si.engine, si.instr, ports_[i], reads_scratch,
                                   writes_scratch);
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
        if (si.instr.op == neff::Opcode::Dma) {
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
    static bool pays_overhead(const SelectedInstr &si) {
        return si.instr.op != neff::Opcode::Dma && si.instr.op != neff::Opcode::Nop &&
               si.engine != neff::Engine::PE;
    }

    /** An instruction's engine, or its DMA queue (transfers of one queue start in order). */
    int resource(int i) const {
        const SelectedInstr &si = instrs_[size_t(i)];
        return si.instr.op == neff::Opcode::Dma ? neff::kNumEngines + si.instr.queue
                                                : static_cast<int>(si.engine);
    }

    const target::TargetInfo &t_;
    const std::vector<SelectedInstr> &instrs_;
    bool dependency_overhead_, as_simulated_;
    std::vector<std::vector<target::DmaShare>> shares_; // per DMA instruction
    /** Per compute instruction, its engine time: estimated_ns, or as simulated the simulator's
     *  own cost query (neff/ComputeCost.h). */
    std::vector<double> compute_ns_;
    std::vector<std::vector<int>> ports_; ///< as simulated: neff::shared_ports of each
    std::vector<double> port_free_;       ///< per shared port, when it is free
    std::vector<double> free_, dma_free_;
    std::vector<double> queue_done_ = std::vector<double>(kMaxQueues, 0); ///< per queue, last done
    std::vector<int> last_; ///< per engine, the last compute instruction issued
    std::vector<std::vector<neff::Footprint>> reads_, writes_; // per compute instruction
};

} // namespace nhc::codegen

#endif
