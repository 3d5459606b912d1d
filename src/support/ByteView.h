#ifndef NHC_SUPPORT_BYTEVIEW_H
#define NHC_SUPPORT_BYTEVIEW_H

/** \file
 * A read-only view of contiguous bytes (C++17 has no std::span): what a constant's or a weight's
 * bytes are to their readers, whether they are held in a vector or left in a mapped model file.
 * It owns nothing; whoever hands one out says how long the bytes live.
 */

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nhc {

class ByteView {
public:
    ByteView() = default;
    ByteView(const uint8_t *data, size_t size) : data_(data), size_(size) {}
    ByteView(const std::vector<uint8_t> &v) : data_(v.data()), size_(v.size()) {}
    ByteView(const ByteView &) = default;
    /** Only to a named view: `t.bytes() = ...` (a tensor's bytes() is a temporary) must not
     *  compile, as it would write nothing. */
    ByteView &operator=(const ByteView &) & = default;

    const uint8_t *data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const uint8_t *begin() const { return data_; }
    const uint8_t *end() const { return data_ + size_; }
    uint8_t operator[](size_t i) const { return data_[i]; }
    std::vector<uint8_t> to_vector() const { return {begin(), end()}; }

    /** Same bytes (contents, not addresses). */
    friend bool operator==(ByteView a, ByteView b) {
        return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data_, b.data_, a.size_) == 0);
    }
    friend bool operator!=(ByteView a, ByteView b) { return !(a == b); }

private:
    const uint8_t *data_ = nullptr;
    size_t size_ = 0;
};

} // namespace nhc

#endif
