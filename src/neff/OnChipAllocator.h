#ifndef NHC_NEFF_ONCHIPALLOCATOR_H
#define NHC_NEFF_ONCHIPALLOCATOR_H

/** \file
 * Address assignment in SBUF (bytes per partition) and PSUM (whole 2 KiB banks) for the
 * allocations the instruction selector meets. Next-fit from a rotating cursor: a freed region is
 * reused only after the rest of the space has been used, so consecutive iterations of a loop get
 * different buffers (double buffering without a schedule hint) while live regions never overlap.
 * Hazards on reused memory are left to the semaphore pass.
 *
 * Weights prefetched (an -O3 whole-program move, driver/WholeProgramCheck.h): a group's
 * allocation may keep a region out of its rotation for the group compiled after it
 * (reserve_for_next), chosen where the space was released longest ago; that group places the
 * stages that live as long as it does (its weights, the broadcasts it builds once) there. Their
 * loads then wait only for the oldest reads of that space, not for the previous group's last
 * ones, and can run while the previous group computes. The rotation, the release times and the
 * kept region pass from one group to the next (AllocationHistory).
 */

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nhc::codegen {

/** What one group's allocation leaves the next: where the rotation resumes, when each granule
 *  was last released (a count of releases since the program began; 0: never), which granules
 *  hold a tile some store read since they were last allocated, and the region kept for the next
 *  group (bytes 0: none). */
struct AllocationHistory {
    int64_t cursor = 0;
    int64_t releases = 0;
    std::vector<int64_t> released_at; ///< per granule; empty: nothing released yet
    std::vector<char> stored;         ///< per granule
    int64_t kept_offset = 0, kept_bytes = 0;
};

/** The alignment of SBUF allocations, bytes per partition (a choice of this allocator, small
 *  enough to waste little room, not a hardware figure). */
constexpr int64_t kSbufGranule = 64;

class OnChipAllocator {
public:
    /** `capacity` bytes per partition, allocations aligned to `granule` bytes. */
    OnChipAllocator(int64_t capacity, int64_t granule)
        : capacity_(capacity), granule_(granule),
          released_at_(static_cast<size_t>(capacity / granule), 0),
          stored_(static_cast<size_t>(capacity / granule), 0) {}

    /** Offset of a new region of `bytes`, or -1 if no gap is large enough. */
    int64_t allocate(int64_t bytes);
    void release(int64_t offset);
    /** Offset of a new region of `bytes` as high in the space as one fits, the cursor left where
     *  it is, or -1: regions kept past a group gather at the top instead of scattering among
     *  the rotating ones, whose room stays in one piece. */
    int64_t allocate_high(int64_t bytes);
    /** Offset of a new region of `bytes` for a stage that lives as long as its group: first fit
     *  in the region the previous group kept for this one, else allocate(). */
    int64_t allocate_group_lifetime(int64_t bytes);
    /** Keeps `bytes` out of this group's allocation for the next group: the window of free
     *  granules, outside this group's own kept region and holding no tile a store read (a later
     *  group may read such a tile where it is, neff/ForwardStores.h), whose latest release is
     *  the earliest (the first such from the cursor on); returns its offset or -1 (then nothing
     *  is kept). */
    int64_t reserve_for_next(int64_t bytes);
    /** A store read bytes [begin, end) of each partition: the tile there may be read where it
     *  is by a later group until that space is allocated again. */
    void mark_stored(int64_t begin, int64_t end);
    /** Marks [offset, offset + bytes) as live (a region an earlier group keeps: never handed
     *  out here, never released here). */
    void reserve(int64_t offset, int64_t bytes);
    int64_t capacity() const { return capacity_; }
    /** The bytes of the live region at `offset` (its request rounded to the granule). */
    int64_t region_bytes(int64_t offset) const { return live_.at(offset); }
    /** Where the next search starts (carried from one group to the next, so that consecutive
     *  groups also use different regions and the next group's loads need not wait for the
     *  previous group's last reads), when each granule was released, and the region kept for
     *  the next group. */
    AllocationHistory history() const;
    /** Resumes from the history an allocator of the same capacity and granule left. */
    void resume(const AllocationHistory &h);

private:
    int64_t capacity_, granule_;
    int64_t cursor_ = 0;
    int64_t releases_ = 0;
    std::vector<int64_t> released_at_;
    std::vector<char> stored_;
    int64_t own_offset_ = 0, own_bytes_ = 0;   ///< kept for this group by the previous one
    int64_t next_offset_ = 0, next_bytes_ = 0; ///< kept by this group for the next
    std::map<int64_t, int64_t> live_;          // offset -> size
    int64_t first_fit_from(int64_t start, int64_t end, int64_t bytes) const;
    /** The free window of `bytes` holding no stored tile whose latest release is the earliest,
     *  outside [avoid, avoid + avoid_bytes), or -1. */
    int64_t least_recent_window(int64_t bytes, int64_t avoid, int64_t avoid_bytes) const;
    /** Marks [offset, offset + bytes) allocated: live, and no longer holding a stored tile. */
    void take(int64_t offset, int64_t bytes);
};

} // namespace nhc::codegen

#endif
