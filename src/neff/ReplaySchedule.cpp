#include "neff/ReplaySchedule.h"

#include "neff/ScheduleResources.h"
#include "support/Error.h"

#include <algorithm>
#include <limits>

namespace nhc::codegen {

using neff::Instr;
using neff::Opcode;

double replay_estimate(const std::vector<SelectedInstr> &instrs,
                       const std::vector<std::vector<int>> &succs, const target::TargetInfo &t) {
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
    ScheduleResources res(t, instrs, ScheduleModel::AsSimulated);
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

double replay_estimate(const std::vector<SelectedInstr> &instrs, const target::TargetInfo &t) {
    std::vector<std::vector<int>> succs(instrs.size());
    std::vector<int> pending(instrs.size(), 0);
    instruction_dependencies(instrs, succs, pending);
    return replay_estimate(instrs, succs, t);
}

} // namespace nhc::codegen
