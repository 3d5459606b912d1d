#ifndef NHC_NEFF_ONCHIPALLOCATOR_H
#define NHC_NEFF_ONCHIPALLOCATOR_H

/** \file
 * Address assignment in SBUF (bytes per partition) and PSUM (whole 2 KiB banks) for the
 * allocations the instruction selector meets. Next-fit from a rotating cursor: a freed region is
 * reused only after the rest of the space has been used, so consecutive iterations of a loop get
 * different buffers (double buffering without a schedule hint) while live regions never overlap.
 * Hazards on reused memory are left to the semaphore pass.
 */

#include <cstdint>
#include <map>
#include <string>

namespace nhc::codegen {

class OnChipAllocator {
public:
    /** `capacity` bytes per partition, allocations aligned to `granule` bytes. */
    OnChipAllocator(int64_t capacity, int64_t granule) : capacity_(capacity), granule_(granule) {}

    /** Offset of a new region of `bytes`, or -1 if no gap is large enough. */
    int64_t allocate(int64_t bytes);
    void release(int64_t offset);
    /** Offset of a new region of `bytes` as high in the space as one fits, the cursor left where
     *  it is, or -1: regions kept past a group gather at the top instead of scattering among
     *  the rotating ones, whose room stays in one piece. */
    int64_t allocate_high(int64_t bytes);
    /** Marks [offset, offset + bytes) as live (a region an earlier group keeps: never handed
     *  out here, never released here). */
    void reserve(int64_t offset, int64_t bytes);
    int64_t capacity() const { return capacity_; }
    /** The bytes of the live region at `offset` (its request rounded to the granule). */
    int64_t region_bytes(int64_t offset) const { return live_.at(offset); }
    /** Where the next search starts; carried from one group to the next, so that consecutive
     *  groups also use different regions and the next group's loads need not wait for the
     *  previous group's last reads. */
    int64_t cursor() const { return cursor_; }
    void set_cursor(int64_t at) { cursor_ = at >= 0 && at < capacity_ ? at : 0; }

private:
    int64_t capacity_, granule_;
    int64_t cursor_ = 0;
    std::map<int64_t, int64_t> live_; // offset -> size
    int64_t first_fit_from(int64_t start, int64_t end, int64_t bytes) const;
};

} // namespace nhc::codegen

#endif
