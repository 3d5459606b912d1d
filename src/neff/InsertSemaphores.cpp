#include "neff/InsertSemaphores.h"

#include "support/Error.h"

#include <map>

namespace nhc::codegen {

using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;

uint32_t engine_semaphore(Engine e) {
    return static_cast<uint32_t>(e);
}
uint32_t dma_queue_semaphore(int queue) {
    return neff::kNumEngines + static_cast<uint32_t>(queue);
}

namespace {

struct Region {
    MemSpace space = MemSpace::None;
    int var = -1;
    int64_t p0 = 0, p1 = 0, b0 = 0, b1 = 0; // [p0, p1) x [b0, b1)

    bool overlaps(const Region &o) const {
        return space == o.space && var == o.var && p0 < o.p1 && o.p0 < p1 && b0 < o.b1 && o.b0 < b1;
    }
};

/** The bounding box of the bytes an access pattern touches. */
Region region_of(const AccessPattern &ap) {
    Region r;
    r.space = ap.space;
    int64_t es = neff::dtype_size(ap.dtype);
    int64_t lo = 0, hi = 0;
    for (const neff::Dim &d : ap.dims) {
        int64_t span = d.step * (d.num - 1) * (ap.space == MemSpace::HBM ? 1 : es);
        (span < 0 ? lo : hi) += span;
    }
    if (ap.space == MemSpace::HBM) {
        // Rows are folded into the byte range of the variable.
        int64_t rows = ap.partition_step * (ap.num_partitions - 1);
        (rows < 0 ? lo : hi) += rows;
        r.var = ap.var;
        r.p0 = 0;
        r.p1 = 1;
    } else {
        r.p0 = ap.start_partition;
        r.p1 = ap.start_partition + ap.num_partitions;
    }
    r.b0 = ap.offset + lo;
    r.b1 = ap.offset + hi + es;
    return r;
}

struct Event {
    uint32_t sem;
    uint32_t count;
};

struct Access {
    Region region;
    Event event;
    bool write;
};

std::vector<std::pair<AccessPattern, bool>> operands(const Instr &i) {
    std::vector<std::pair<AccessPattern, bool>> ops;
    auto add = [&](const AccessPattern &ap, bool write) {
        if (ap.present())
            ops.emplace_back(ap, write);
    };
    add(i.dst, true);
    add(i.accum, true);
    add(i.src, false);
    add(i.src1, false);
    add(i.pred, false);
    if (i.s0.is_ap)
        add(i.s0.ap, false);
    if (i.s1.is_ap)
        add(i.s1.ap, false);
    return ops;
}

} // namespace

void insert_semaphores(std::vector<SelectedInstr> &instrs, neff::Program &program) {
    std::map<uint32_t, uint32_t> counts; // completions issued so far per semaphore
    std::vector<Access> history;
    for (SelectedInstr &si : instrs) {
        Instr &ins = si.instr;
        uint32_t own = ins.op == neff::Opcode::Dma ? dma_queue_semaphore(ins.queue)
                                                   : engine_semaphore(si.engine);
        std::map<uint32_t, uint32_t> waits;
        auto need = [&](const Event &e) {
            if (e.sem != own)
                waits[e.sem] = std::max(waits[e.sem], e.count);
        };
        std::vector<std::pair<Region, bool>> touched;
        for (const auto &[ap, write] : operands(ins))
            touched.emplace_back(region_of(ap), write);
        for (const Access &a : history)
            for (const auto &[r, write] : touched)
                if ((write || a.write) && a.region.overlaps(r))
                    need(a.event);
        for (const auto &[sem, value] : waits)
            ins.waits.push_back({sem, value});
        ins.signal = static_cast<int32_t>(own);
        Event done{own, ++counts[own]};
        // A write makes older accesses to the same bytes irrelevant for later instructions, since
        // anything that waits for this write also waits, transitively, for what it waited on.
        for (const auto &[r, write] : touched) {
            if (write) {
                auto covered = [&](const Access &a) {
                    return a.region.space == r.space && a.region.var == r.var &&
                           r.p0 <= a.region.p0 && a.region.p1 <= r.p1 && r.b0 <= a.region.b0 &&
                           a.region.b1 <= r.b1;
                };
                history.erase(std::remove_if(history.begin(), history.end(), covered),
                              history.end());
            }
            history.push_back({r, done, write});
        }
        program.stream(si.engine).push_back(std::move(ins));
    }
}

} // namespace nhc::codegen
