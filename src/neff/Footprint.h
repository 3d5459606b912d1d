#ifndef NHC_NEFF_FOOTPRINT_H
#define NHC_NEFF_FOOTPRINT_H

/** \file
 * The bytes an operand may touch, as a box: a memory (SBUF, PSUM, or one HBM variable), a range of
 * partitions (rows for HBM) and a byte range inside each partition. A box covers every element of
 * the access pattern, and may cover bytes between strided elements too. Used where an
 * over-approximation errs on the safe side: the compiler's hazards (a dependence assumed), the
 * simulator's timing (a dependence charged, a port contended) and its race detector (which then
 * compares bytes). Also here, for the same users: an instruction's operands, and the exact bytes
 * of an operand as intervals.
 */

#include "neff/Isa.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace nhc::neff {

struct Footprint {
    MemSpace space = MemSpace::None;
    int32_t var = -1;           ///< HBM variable
    int64_t first_row = 0;      ///< first partition (SBUF/PSUM); 0 for HBM, rows folded in bytes
    int64_t end_row = 0;        ///< one past the last partition
    int64_t begin = 0, end = 0; ///< byte range inside each partition (HBM: inside the variable)

    bool overlaps(const Footprint &o) const {
        return space == o.space && var == o.var && first_row < o.end_row && o.first_row < end_row &&
               begin < o.end && o.begin < end;
    }
};

/** a * b and a + b clamped to int64's range. A NEFF from a stranger may hold any counts and
 *  steps: Machine::check refuses an operand out of its memory, and the timing model, which takes
 *  footprints before that, must not overflow on the way (found by tests/fuzz's NEFF target). */
inline int64_t saturating_mul(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_mul_overflow(a, b, &r))
        return r;
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}
inline int64_t saturating_add(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return b < 0 ? INT64_MIN : INT64_MAX;
}

/** The box of an access pattern (an absent operand gives an empty box in MemSpace::None). */
inline Footprint footprint(const AccessPattern &ap) {
    Footprint f;
    if (!ap.present()) {
        return f;
    }
    bool hbm = ap.space == MemSpace::HBM;
    int64_t esize = dtype_size(ap.dtype);
    int64_t unit = hbm ? 1 : esize; // HBM steps are bytes, on-chip steps elements
    int64_t lo = ap.offset, hi = ap.offset;
    for (const Dim &d : ap.dims) {
        int64_t span = saturating_mul(saturating_mul(d.step, unit), d.num - 1);
        int64_t &bound = span < 0 ? lo : hi;
        bound = saturating_add(bound, span);
    }
    f.space = ap.space;
    if (hbm) {
        // Rows are partition_step apart inside the variable: fold them into the byte range.
        int64_t rows = std::max<int64_t>(1, ap.num_partitions);
        int64_t span = saturating_mul(ap.partition_step, rows - 1);
        int64_t &bound = span < 0 ? lo : hi;
        bound = saturating_add(bound, span);
        f.var = ap.var;
        f.first_row = 0;
        f.end_row = 1;
    } else {
        f.first_row = ap.start_partition;
        f.end_row = int64_t(ap.start_partition) + ap.num_partitions;
    }
    f.begin = lo;
    f.end = saturating_add(hi, esize);
    return f;
}

/** Calls f(operand, is_write) for each present operand of `i`: dst and accum (written), then src,
 *  src1, pred and the [P, 1] scalars (read). */
template <typename F>
void for_each_operand(const Instr &i, F &&f) {
    for (const AccessPattern *ap : {&i.dst, &i.accum}) {
        if (ap->present()) {
            f(*ap, true);
        }
    }
    for (const AccessPattern *ap : {&i.src, &i.src1, &i.pred}) {
        if (ap->present()) {
            f(*ap, false);
        }
    }
    for (const Scalar *sc : {&i.s0, &i.s1}) {
        if (sc->is_ap && sc->ap.present()) {
            f(sc->ap, false);
        }
    }
}

/** Boxes of what an instruction reads and writes. */
inline void instr_footprints(const Instr &i, std::vector<Footprint> &reads,
                             std::vector<Footprint> &writes) {
    reads.clear();
    writes.clear();
    for_each_operand(i, [&](const AccessPattern &ap, bool write) {
        (write ? writes : reads).push_back(footprint(ap));
    });
}

inline bool any_overlap(const std::vector<Footprint> &a, const std::vector<Footprint> &b) {
    for (const Footprint &x : a) {
        for (const Footprint &y : b) {
            if (x.overlaps(y)) {
                return true;
            }
        }
    }
    return false;
}

/** Sorted, disjoint byte intervals [lo, hi). */
using ByteIntervals = std::vector<std::pair<int64_t, int64_t>>;

/** The bytes an operand touches, as intervals: in HBM every row's, inside the variable; on chip
 *  one partition's, which every partition of its box repeats. nullopt when there are more than
 *  `max_runs` contiguous runs to list. Row tiles of one tensor interleave (tile 1's rows lie
 *  between tile 0's), so their boxes overlap where their bytes do not. */
std::optional<ByteIntervals> byte_intervals(const AccessPattern &ap, int64_t max_runs);
/** Whether two interval lists share a byte. */
bool intervals_meet(const ByteIntervals &a, const ByteIntervals &b);
/** Whether every interval of `inner` lies inside one of `outer`. */
bool intervals_cover(const ByteIntervals &outer, const ByteIntervals &inner);

} // namespace nhc::neff

#endif
