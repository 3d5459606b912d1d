#include "neff/Hazards.h"

#include "neff/Footprint.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

namespace nhc::codegen {

using neff::AccessPattern;
using neff::Instr;
using neff::MemSpace;

namespace {

/** Sorted, disjoint byte intervals [lo, hi). */
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// An HBM access with more rows than this is kept as its bounding box only (conservative).
constexpr int64_t kMaxListedRows = 1 << 16;

/** The bytes an HBM access pattern touches, as intervals, or nullopt when there are too many
 *  rows to list. Row tiles of one tensor interleave (tile 1's rows lie between tile 0's), so
 *  their bounding boxes overlap where the bytes do not. */
std::optional<Intervals> hbm_intervals(const AccessPattern &ap) {
    int64_t es = neff::dtype_size(ap.dtype);
    std::vector<neff::Dim> dims;
    if (ap.num_partitions > 1)
        dims.push_back({ap.partition_step, ap.num_partitions});
    dims.insert(dims.end(), ap.dims.begin(), ap.dims.end());
    int64_t run = es; // contiguous innermost bytes
    while (!dims.empty() && (dims.back().step == run || dims.back().num == 1)) {
        run *= dims.back().step == run ? dims.back().num : 1;
        dims.pop_back();
    }
    int64_t rows = 1;
    for (const neff::Dim &d : dims)
        rows *= d.num;
    if (rows > kMaxListedRows)
        return std::nullopt;
    Intervals out;
    out.reserve(static_cast<size_t>(rows));
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t r = 0; r < rows; r++) {
        int64_t start = ap.offset;
        for (size_t d = 0; d < dims.size(); d++)
            start += idx[d] * dims[d].step;
        out.emplace_back(start, start + run);
        for (size_t d = dims.size(); d-- > 0;) { // odometer, innermost first
            if (++idx[d] < dims[d].num)
                break;
            idx[d] = 0;
        }
    }
    std::sort(out.begin(), out.end());
    Intervals merged;
    for (const auto &iv : out) {
        if (!merged.empty() && iv.first <= merged.back().second)
            merged.back().second = std::max(merged.back().second, iv.second);
        else
            merged.push_back(iv);
    }
    return merged;
}

bool intervals_meet(const Intervals &a, const Intervals &b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (a[i].first < b[j].second && b[j].first < a[i].second)
            return true;
        (a[i].second <= b[j].second ? i : j)++;
    }
    return false;
}

/** Whether every interval of `inner` lies inside one of `outer` (both merged). */
bool intervals_cover(const Intervals &outer, const Intervals &inner) {
    size_t i = 0;
    for (const auto &iv : inner) {
        while (i < outer.size() && outer[i].second <= iv.first)
            i++;
        if (i == outer.size() || outer[i].first > iv.first || outer[i].second < iv.second)
            return false;
    }
    return true;
}

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
    /** Whether this region certainly contains all of `o`. */
    bool covers(const Region &o) const {
        if (!(o.space == space && o.var == var && p0 <= o.p0 && o.p1 <= p1 && b0 <= o.b0 &&
              o.b1 <= b1))
            return false;
        if (space != MemSpace::HBM)
            return true;
        return bytes && o.bytes && intervals_cover(*bytes, *o.bytes);
    }
};

/** The bounding box of the bytes an access pattern touches, and in HBM the bytes themselves. */
Region region_of(const AccessPattern &ap) {
    Region r;
    neff::Footprint box = neff::footprint(ap);
    r.space = box.space;
    r.var = box.var;
    r.p0 = box.first_row;
    r.p1 = box.end_row;
    r.b0 = box.begin;
    r.b1 = box.end;
    if (ap.space == MemSpace::HBM)
        if (std::optional<Intervals> iv = hbm_intervals(ap))
            r.bytes = std::make_shared<const Intervals>(std::move(*iv));
    return r;
}

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

struct HazardTracker::Access {
    Region region;
    int instr;
    bool write;
};

HazardTracker::HazardTracker() = default;
HazardTracker::~HazardTracker() = default;

std::vector<int> HazardTracker::add(const Instr &ins, int index) {
    std::vector<std::pair<Region, bool>> touched;
    for (const auto &[ap, write] : operands(ins))
        touched.emplace_back(region_of(ap), write);
    std::set<int> deps;
    for (const Access &a : history_)
        for (const auto &[r, write] : touched)
            if ((write || a.write) && a.region.overlaps(r))
                deps.insert(a.instr);
    // A write makes older accesses to the same bytes irrelevant for later instructions, since
    // anything that depends on this write also depends, transitively, on what it depended on.
    for (const auto &[r, write] : touched) {
        if (write) {
            auto covered = [&](const Access &a) { return r.covers(a.region); };
            history_.erase(std::remove_if(history_.begin(), history_.end(), covered),
                           history_.end());
        }
        history_.push_back({r, index, write});
    }
    return std::vector<int>(deps.begin(), deps.end());
}

} // namespace nhc::codegen
