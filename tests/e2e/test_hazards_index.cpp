// neff/Hazards indexes each memory's accesses by byte range instead of scanning the whole history;
// it must find exactly the dependencies of the scan. The scan is written here as the oracle, from
// the definition in Hazards.h: an instruction depends on every recorded access to bytes it
// touches where one of the two writes, and a write drops the accesses whose bytes it covers.
// Random programs mix small and large, strided and dense, sliced and whole, on-chip and HBM
// accesses.

#include "neff/Footprint.h"
#include "neff/Hazards.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <set>

using namespace nhc;
using neff::AccessPattern;
using neff::Instr;
using neff::MemSpace;

namespace {

/** The linear scan over all recorded accesses. */
class ScanHazards {
public:
    std::vector<int> add(const Instr &ins, int index) {
        std::vector<std::pair<Access, bool>> touched;
        neff::for_each_operand(ins, [&](const AccessPattern &ap, bool write) {
            touched.push_back({access_of(ap, index, write), write});
        });
        std::set<int> deps;
        for (const auto &[a, write] : touched)
            for (const Access &old : history_)
                if ((write || old.write) && overlaps(old, a))
                    deps.insert(old.instr);
        for (const auto &[a, write] : touched) {
            if (write)
                history_.erase(std::remove_if(history_.begin(), history_.end(),
                                              [&](const Access &old) { return covers(a, old); }),
                               history_.end());
            history_.push_back(a);
        }
        return {deps.begin(), deps.end()};
    }

private:
    struct Access {
        neff::Footprint box;
        std::optional<neff::ByteIntervals> bytes; // in HBM, or in each partition on chip
        int instr;
        bool write;
    };
    static Access access_of(const AccessPattern &ap, int index, bool write) {
        return {neff::footprint(ap), neff::byte_intervals(ap, int64_t(1) << 16), index, write};
    }
    static bool overlaps(const Access &a, const Access &b) {
        return a.box.overlaps(b.box) &&
               (!a.bytes || !b.bytes || neff::intervals_meet(*a.bytes, *b.bytes));
    }
    static bool covers(const Access &outer, const Access &in) {
        const neff::Footprint &o = outer.box, &i = in.box;
        if (!(o.space == i.space && o.var == i.var && o.first_row <= i.first_row &&
              i.end_row <= o.end_row && o.begin <= i.begin && i.end <= o.end))
            return false;
        if (!outer.bytes) // on chip, a box meets every access inside it
            return o.space != MemSpace::HBM;
        return in.bytes && neff::intervals_cover(*outer.bytes, *in.bytes);
    }
    std::vector<Access> history_;
};

struct Rng {
    uint64_t s;
    int below(int n) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return int((s >> 33) % uint64_t(n));
    }
};

AccessPattern on_chip(Rng &r) {
    AccessPattern a;
    a.space = r.below(4) ? MemSpace::SBUF : MemSpace::PSUM;
    a.dtype = neff::DType::F32;
    a.start_partition = r.below(4) * 32;
    a.num_partitions = 1 + r.below(128 - a.start_partition);
    a.offset = 4 * r.below(2048);
    int64_t len = r.below(3) ? 1 + r.below(8) : 1 + r.below(2048); // mostly small
    a.dims = {{r.below(3) ? 1 : 2, len}};
    if (!r.below(4)) // column slices of a few chunks, as grouped transposes write
        a.dims = {{64 + r.below(64), 1 + r.below(4)}, {1, 1 + r.below(48)}};
    return a;
}

AccessPattern hbm(Rng &r) {
    AccessPattern a;
    a.space = MemSpace::HBM;
    a.dtype = neff::DType::F32;
    a.var = r.below(2);
    a.num_partitions = 1 + r.below(16);
    a.partition_step = 4 * (64 + r.below(64));
    a.offset = 4 * r.below(4096);
    a.dims = {{4, 1 + r.below(r.below(2) ? 4 : 64)}};
    return a;
}

Instr random_instr(Rng &r) {
    Instr i;
    switch (r.below(3)) {
    case 0: // load
        i.op = neff::Opcode::Dma;
        i.src = hbm(r);
        i.dst = on_chip(r);
        break;
    case 1: // store
        i.op = neff::Opcode::Dma;
        i.src = on_chip(r);
        i.dst = hbm(r);
        break;
    default: // an on-chip op, sometimes with a second input
        i.op = neff::Opcode::TensorTensor;
        i.src = on_chip(r);
        i.dst = on_chip(r);
        if (r.below(2))
            i.src1 = on_chip(r);
    }
    return i;
}

} // namespace

TEST_CASE("the hazard index finds exactly the dependencies of a scan of the whole history") {
    size_t found = 0; // the programs must have dependencies to find
    for (uint64_t seed = 1; seed <= 20; seed++) {
        Rng r{seed};
        codegen::HazardTracker indexed;
        ScanHazards scan;
        for (int k = 0; k < 1500; k++) {
            Instr i = random_instr(r);
            std::vector<int> want = scan.add(i, k);
            std::vector<int> got = indexed.add(i, k);
            INFO("seed " << seed << ", instruction " << k);
            REQUIRE(got == want);
            found += want.size();
        }
    }
    CHECK(found > 20 * 1500);
}

TEST_CASE("an operand's footprint and element count saturate instead of wrapping past 64 bits") {
    // A NEFF from a stranger may hold any steps: the timing model takes footprints before
    // Machine::check refuses the operand (found by tests/fuzz's NEFF target, as signed overflow).
    AccessPattern ap;
    ap.space = MemSpace::SBUF;
    ap.dtype = neff::DType::F32;
    ap.start_partition = 0;
    ap.num_partitions = 128;
    ap.dims = {{int64_t(1) << 62, 3}}; // 2^62 elements of 4 bytes apart, twice: 2^65 bytes
    neff::Footprint up = neff::footprint(ap);
    CHECK(up.begin == 0);
    CHECK(up.end == INT64_MAX);
    ap.dims = {{-(int64_t(1) << 62), 3}};
    neff::Footprint down = neff::footprint(ap);
    CHECK(down.begin == INT64_MIN);
    CHECK(down.end == 4);
    // Element counts saturate too (the cost queries multiply them).
    ap.dims = {{0, int64_t(1) << 40}, {0, int64_t(1) << 40}};
    CHECK(ap.free_count() == INT64_MAX);
}
