#include "neff/Hazards.h"

#include "neff/Footprint.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace nhc::codegen {

using neff::AccessPattern;
using neff::Instr;
using neff::MemSpace;

namespace {

using Intervals = neff::ByteIntervals;
using neff::intervals_cover;
using neff::intervals_meet;

// An access with more runs than this is kept as its bounding box only (conservative).
constexpr int64_t kMaxListedRuns = 1 << 16;

struct Region {
    MemSpace space = MemSpace::None;
    int var = -1;
    int64_t p0 = 0, p1 = 0, b0 = 0, b1 = 0; // [p0, p1) x [b0, b1): the bounding box
    std::shared_ptr<const Intervals> bytes; // HBM: the exact bytes, when listed

    bool overlaps(const Region &o) const {
        if (!(space == o.space && var == o.var && p0 < o.p1 && o.p0 < p1 && b0 < o.b1 && o.b0 < b1))
            return false;
        return !bytes || !o.bytes || intervals_meet(*bytes, *o.bytes);
    }
    /** Whether this region certainly contains all of `o`. On chip, a region known only by its
     *  box meets every access inside the box (overlaps), so the box is enough. */
    bool covers(const Region &o) const {
        if (!(o.space == space && o.var == var && p0 <= o.p0 && o.p1 <= p1 && b0 <= o.b0 &&
              o.b1 <= b1))
            return false;
        if (!bytes)
            return space != MemSpace::HBM;
        return o.bytes && intervals_cover(*bytes, *o.bytes);
    }
};

/** The bounding box of the bytes an access pattern touches, and the bytes themselves (on chip,
 *  those of each of its partitions). */
Region region_of(const AccessPattern &ap) {
    Region r;
    neff::Footprint box = neff::footprint(ap);
    r.space = box.space;
    r.var = box.var;
    r.p0 = box.first_row;
    r.p1 = box.end_row;
    r.b0 = box.begin;
    r.b1 = box.end;
    // On chip, the runs are what an access of several free dims touches in each partition: the
    // bounding box of four transposes' results written as column slices of one tile would also
    // cover the slices that other row tiles write in between.
    if (std::optional<Intervals> iv = neff::byte_intervals(ap, kMaxListedRuns))
        r.bytes = std::make_shared<const Intervals>(std::move(*iv));
    return r;
}

} // namespace

struct HazardTracker::Access {
    Region region;
    int instr;
    bool write;
};

/** The accesses to one memory, indexed by byte range so that a query visits only those that can
 *  overlap it, not the whole history (a schedule of 120,000 one-element DMAs made the linear
 *  scan quadratic: minutes). One ordered map per length class c (b1 - b0 in [2^c, 2^(c+1))),
 *  keyed by the first byte: an access of class c can meet [b0, b1) only if it starts in
 *  (b0 - 2^(c+1), b1). */
class HazardTracker::MemoryHistory {
public:
    /** Calls f(access) for every recorded access whose byte range meets r's (a superset of those
     *  that overlap r); f returns whether to erase it. */
    template <typename F>
    void visit(const Region &r, F f) {
        for (int c = 0; c < kClasses; c++) {
            std::multimap<int64_t, Access> &m = by_class_[c];
            if (m.empty())
                continue;
            auto it = m.upper_bound(r.b0 - (int64_t(2) << c));
            auto end = m.lower_bound(r.b1);
            while (it != end)
                it = f(it->second) ? m.erase(it) : std::next(it);
        }
    }
    void add(const Access &a) {
        int64_t len = a.region.b1 - a.region.b0;
        if (len <= 0)
            return; // touches no byte: meets nothing
        int c = 0;
        while (c + 1 < kClasses && (int64_t(2) << c) <= len)
            c++;
        by_class_[c].emplace(a.region.b0, a);
    }

private:
    static constexpr int kClasses = 62;
    std::multimap<int64_t, Access> by_class_[kClasses];
};

HazardTracker::HazardTracker() = default;
HazardTracker::~HazardTracker() = default;

std::vector<int> HazardTracker::add(const Instr &ins, int index) {
    std::vector<std::pair<Region, bool>> touched;
    neff::for_each_operand(ins, [&](const AccessPattern &ap, bool write) {
        touched.emplace_back(region_of(ap), write);
    });
    std::set<int> deps;
    // Named, not structured bindings: C++17 lambdas cannot capture those (clang refuses).
    for (const auto &touch : touched) {
        const Region &r = touch.first;
        bool write = touch.second;
        memory(static_cast<int>(r.space), r.var).visit(r, [&](const Access &a) {
            if ((write || a.write) && a.region.overlaps(r))
                deps.insert(a.instr);
            return false;
        });
    }
    // A write makes older accesses to the same bytes irrelevant for later instructions, since
    // anything that depends on this write also depends, transitively, on what it depended on.
    for (const auto &touch : touched) {
        const Region &r = touch.first;
        bool write = touch.second;
        MemoryHistory &same_memory = memory(static_cast<int>(r.space), r.var);
        if (write)
            same_memory.visit(r, [&](const Access &a) { return r.covers(a.region); });
        same_memory.add({r, index, write});
    }
    return std::vector<int>(deps.begin(), deps.end());
}

HazardTracker::MemoryHistory &HazardTracker::memory(int space, int var) {
    std::unique_ptr<MemoryHistory> &h = history_[{space, var}];
    if (!h)
        h = std::make_unique<MemoryHistory>();
    return *h;
}

} // namespace nhc::codegen
