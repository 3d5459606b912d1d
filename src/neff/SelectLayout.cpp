// Instruction selection, part three (see SelectInstructions.h): where the elements of an on-chip
// buffer lie (the partition dim, its split into chunks, the dims inside and outside it) and the
// access pattern of an affine access to one, checked to walk one dim per loop and its partitions
// from the partition loop only.

#include "neff/SelectorState.h"

#include "support/Error.h"

namespace nhc::codegen {

using neff::AccessPattern;
using neff::MemSpace;

Placement Buffer::place(int64_t flat) const {
    Placement pl;
    if (pd < 0) {
        pl.elem = flat;
        return pl;
    }
    int64_t dense = 1, inner = 0, outer = 0, outer_stride = 1, chunk = 0, inner_size = 1;
    for (int d = 0; d < static_cast<int>(extents.size()); d++) {
        int64_t c = (flat / dense) % extents[d];
        if (d < pd) {
            inner += c * dense;
            inner_size *= extents[d];
        } else if (d == pd) {
            pl.partition = psplit > 0 ? c % psplit : c;
            chunk = psplit > 0 ? c / psplit : 0;
        } else {
            outer += c * outer_stride;
            outer_stride *= extents[d];
        }
        dense *= extents[d];
    }
    pl.elem = inner + inner_size * (outer + outer_stride * chunk);
    return pl;
}

namespace {

/** The partition and element steps of loop j on a buffer, checked to be linear over the loop. */
std::pair<int64_t, int64_t> steps_of(const Buffer &b, const Affine &a, int j, const Loop &l,
                                     bool &linear) {
    Placement p0 = b.place(a.base), p1 = b.place(a.base + a.strides[j]),
              pl = b.place(a.base + a.strides[j] * (l.extent - 1));
    int64_t dp = p1.partition - p0.partition, de = p1.elem - p0.elem;
    linear = pl.partition == p0.partition + dp * (l.extent - 1) &&
             pl.elem == p0.elem + de * (l.extent - 1);
    return {dp, de};
}

} // namespace

bool Selector::walks_partitions(const Buffer &b, const Affine &a, int j, const Loop &l) const {
    if (b.space == MemSpace::HBM || a.strides[j] == 0 || l.extent <= 1)
        return false;
    bool linear = true;
    return steps_of(b, a, j, l, linear).first != 0;
}

AccessPattern Selector::onchip_ap(const Buffer &b, const Affine &a, const IterSpace &it,
                                  const Nest &n, const char *role) const {
    AccessPattern ap;
    ap.space = b.space;
    ap.dtype = b.dtype;
    int64_t es = neff::dtype_size(b.dtype);
    Placement base = b.place(a.base);
    ap.start_partition = static_cast<int32_t>(base.partition);
    ap.num_partitions = 1;
    std::string what = std::string(role) + " '" + b.name + "'";
    for (int j = 0; j < static_cast<int>(it.loops.size()); j++) {
        if (it.loops[j].extent == 1)
            continue; // a unit loop (an absent M or N) adds no dimension
        bool linear = true;
        auto [dp, de] = steps_of(b, a, j, it.loops[j], linear);
        if (!linear || (dp != 0 && de != 0))
            fail("NHC_EGEN010", n,
                 what + ": loop " + it.loops[j].name +
                     " walks several of its dims at once; give it a layout "
                     "where each loop walks one");
        if (j == it.p) {
            if (dp == 0 && de == 0)
                fail("NHC_EGEN009", n,
                     what +
                         " is the same for every partition (stride 0 along "
                         "loop " +
                         it.loops[j].name +
                         "): broadcast it across partitions in its own stage "
                         "first");
            if (dp != 1)
                fail("NHC_EGEN010", n,
                     what + " is walked by loop " + it.loops[j].name +
                         " along its free axis, not its partitions: transpose "
                         "it first");
            ap.num_partitions = static_cast<int32_t>(it.loops[j].extent);
        } else {
            if (dp != 0)
                fail("NHC_EGEN010", n,
                     what + ": free loop " + it.loops[j].name +
                         " walks its partitions: transpose it first");
            ap.dims.push_back({de, it.loops[j].extent});
        }
    }
    if (ap.dims.empty())
        ap.dims.push_back({1, 1});
    ap.offset = b.offset + base.elem * es;
    return ap;
}

} // namespace nhc::codegen
