#include "neff/OnChipAllocator.h"

#include "support/Error.h"

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

void OnChipAllocator::release(int64_t offset) {
    nhc_assert(live_.erase(offset) == 1, "release of a region that is not allocated: " << offset);
}

} // namespace nhc::codegen
