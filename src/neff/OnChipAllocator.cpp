#include "neff/OnChipAllocator.h"

#include "support/Error.h"

#include <algorithm>
#include <deque>
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
    take(at, bytes);
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
    take(end - bytes, bytes);
    return end - bytes;
}

int64_t OnChipAllocator::allocate_group_lifetime(int64_t bytes) {
    const int64_t rounded = (bytes + granule_ - 1) / granule_ * granule_;
    int64_t at =
        own_bytes_ > 0 ? first_fit_from(own_offset_, own_offset_ + own_bytes_, rounded) : -1;
    if (at < 0)
        return allocate(bytes);
    take(at, rounded);
    return at;
}

int64_t OnChipAllocator::least_recent_window(int64_t bytes, int64_t avoid,
                                             int64_t avoid_bytes) const {
    const int64_t n = static_cast<int64_t>(released_at_.size()), w = bytes / granule_;
    if (w <= 0 || w > n)
        return -1;
    std::vector<char> taken(static_cast<size_t>(n), 0);
    auto mark_taken = [&](int64_t off, int64_t size) {
        for (int64_t g = off / granule_; g < std::min(n, (off + size + granule_ - 1) / granule_);
             g++)
            taken[static_cast<size_t>(g)] = 1;
    };
    for (const auto &[off, size] : live_)
        mark_taken(off, size);
    mark_taken(avoid, avoid_bytes);
    for (int64_t g = 0; g < n; g++)
        taken[static_cast<size_t>(g)] |= stored_[static_cast<size_t>(g)];
    // Over each run of free granules, the latest release in every window of w granules (a
    // sliding maximum); the earliest such wins, the first from the cursor on among equals.
    const int64_t first = cursor_ / granule_;
    int64_t best = -1, best_release = 0, best_order = 0, run_start = 0;
    std::deque<int64_t> latest; // the window's granules, their releases decreasing
    for (int64_t g = 0; g < n; g++) {
        if (taken[static_cast<size_t>(g)]) {
            latest.clear();
            run_start = g + 1;
            continue;
        }
        while (!latest.empty() && released_at_[static_cast<size_t>(latest.back())] <=
                                      released_at_[static_cast<size_t>(g)])
            latest.pop_back();
        latest.push_back(g);
        const int64_t start = g - w + 1;
        if (start < run_start)
            continue;
        while (latest.front() < start)
            latest.pop_front();
        const int64_t release = released_at_[static_cast<size_t>(latest.front())];
        const int64_t order = (start - first + n) % n;
        if (best < 0 || release < best_release || (release == best_release && order < best_order)) {
            best = start;
            best_release = release;
            best_order = order;
        }
    }
    return best < 0 ? -1 : best * granule_;
}

void OnChipAllocator::take(int64_t offset, int64_t bytes) {
    live_[offset] = bytes;
    const int64_t n = static_cast<int64_t>(stored_.size());
    for (int64_t g = offset / granule_; g < std::min(n, (offset + bytes) / granule_); g++)
        stored_[static_cast<size_t>(g)] = 0;
}

void OnChipAllocator::mark_stored(int64_t begin, int64_t end) {
    const int64_t n = static_cast<int64_t>(stored_.size());
    for (int64_t g = std::max<int64_t>(0, begin / granule_);
         g < std::min(n, (end + granule_ - 1) / granule_); g++)
        stored_[static_cast<size_t>(g)] = 1;
}

int64_t OnChipAllocator::reserve_for_next(int64_t bytes) {
    const int64_t rounded = (bytes + granule_ - 1) / granule_ * granule_;
    int64_t at = least_recent_window(rounded, own_offset_, own_bytes_);
    if (at < 0)
        return -1;
    live_[at] = rounded; // never released here: its release time stays the one before
    next_offset_ = at;
    next_bytes_ = rounded;
    return at;
}

AllocationHistory OnChipAllocator::history() const {
    return {cursor_, releases_, released_at_, stored_, next_offset_, next_bytes_};
}

void OnChipAllocator::resume(const AllocationHistory &h) {
    cursor_ = h.cursor >= 0 && h.cursor < capacity_ ? h.cursor : 0;
    releases_ = h.releases;
    if (h.released_at.size() == released_at_.size())
        released_at_ = h.released_at;
    if (h.stored.size() == stored_.size())
        stored_ = h.stored;
    own_offset_ = h.kept_offset;
    own_bytes_ = h.kept_bytes;
}

void OnChipAllocator::reserve(int64_t offset, int64_t bytes) {
    nhc_assert(offset >= 0 && bytes > 0 && offset + bytes <= capacity_ &&
                   first_fit_from(offset, offset + bytes, bytes) == offset,
               "a reserved region overlaps another or leaves the space: " << offset << "+"
                                                                          << bytes);
    live_[offset] = bytes;
}

void OnChipAllocator::release(int64_t offset) {
    auto it = live_.find(offset);
    nhc_assert(it != live_.end(), "release of a region that is not allocated: " << offset);
    releases_++;
    const int64_t n = static_cast<int64_t>(released_at_.size());
    for (int64_t g = offset / granule_; g < std::min(n, (offset + it->second) / granule_); g++)
        released_at_[static_cast<size_t>(g)] = releases_;
    live_.erase(it);
}

} // namespace nhc::codegen
