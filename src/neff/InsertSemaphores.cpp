#include "neff/InsertSemaphores.h"

#include "neff/Hazards.h"
#include "support/Error.h"

#include <map>

namespace nhc::codegen {

using neff::Engine;
using neff::Instr;

uint32_t engine_semaphore(Engine e) {
    return static_cast<uint32_t>(e);
}
uint32_t dma_queue_semaphore(int queue) {
    return neff::kNumEngines + static_cast<uint32_t>(queue);
}

namespace {

struct Event {
    uint32_t sem;
    uint32_t count;
};

} // namespace

void insert_semaphores(std::vector<SelectedInstr> &instrs, neff::Program &program) {
    std::map<uint32_t, uint32_t> counts; // completions issued so far per semaphore
    std::vector<Event> done;             // per instruction: the count that marks its completion
    HazardTracker hazards;
    for (SelectedInstr &si : instrs) {
        Instr &ins = si.instr;
        uint32_t own = ins.op == neff::Opcode::Dma ? dma_queue_semaphore(ins.queue)
                                                   : engine_semaphore(si.engine);
        std::map<uint32_t, uint32_t> waits;
        bool dma = ins.op == neff::Opcode::Dma;
        for (int d : hazards.add(ins, static_cast<int>(done.size()))) {
            const Event &e = done[static_cast<size_t>(d)];
            // An engine runs its stream in order; a DMA queue only starts and completes its
            // transfers in order, and two transfers may move data at once on different DMA
            // engines, so a DMA waits for the earlier transfers of its own queue it depends on.
            if (e.sem != own || dma)
                waits[e.sem] = std::max(waits[e.sem], e.count);
        }
        for (const auto &[sem, value] : waits)
            ins.waits.push_back({sem, value});
        ins.signal = static_cast<int32_t>(own);
        done.push_back({own, ++counts[own]});
        program.stream(si.engine).push_back(std::move(ins));
    }
}

} // namespace nhc::codegen
