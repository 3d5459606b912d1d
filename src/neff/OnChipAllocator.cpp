#include "neff/OnChipAllocator.h"

#include "support/Error.h"

#include <iterator>

namespace nhc::codegen {

int64_t OnChipAllocator::first_fit_from(int64_t start, int64_t end, int64_t bytes) const {
    int64_t pos = start;
    for (const auto &[off, size] : live_) {
        if (off + size <= pos)
            continue;
        if (off >= pos + bytes)
            break;
        pos = off + size;
    }
    return pos + bytes <= end ? pos : -1;
}

int64_t OnChipAllocator::allocate(int64_t bytes) {
    bytes = (bytes + granule_ - 1) / granule_ * granule_;
    if (bytes > capacity_)
        return -1;
    int64_t at = first_fit_from(cursor_, capacity_, bytes);
    if (at < 0)
        at = first_fit_from(0, capacity_, bytes);
    if (at < 0)
        return -1;
    live_[at] = bytes;
    cursor_ = at + bytes >= capacity_ ? 0 : at + bytes;
    return at;
}

int64_t OnChipAllocator::allocate_high(int64_t bytes) {
    bytes = (bytes + granule_ - 1) / granule_ * granule_;
    int64_t end = capacity_; // walk the gaps from the top down
    for (auto it = live_.rbegin(); it != live_.rend(); ++it) {
        if (end - (it->first + it->second) >= bytes)
            break;
        end = it->first;
    }
    int64_t below = 0; // the live region below `end`, if any, ends here
    auto next = live_.lower_bound(end);
    if (next != live_.begin())
        below = std::prev(next)->first + std::prev(next)->second;
    if (end - below < bytes)
        return -1;
    live_[end - bytes] = bytes;
    return end - bytes;
}

void OnChipAllocator::reserve(int64_t offset, int64_t bytes) {
    nhc_assert(offset >= 0 && bytes > 0 && offset + bytes <= capacity_ &&
                   first_fit_from(offset, offset + bytes, bytes) == offset,
               "a reserved region overlaps another or leaves the space: " << offset << "+"
                                                                          << bytes);
    live_[offset] = bytes;
}

void OnChipAllocator::release(int64_t offset) {
    nhc_assert(live_.erase(offset) == 1, "release of a region that is not allocated: " << offset);
}

} // namespace nhc::codegen
