#include "support/Files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nhc {

namespace {

/** Everything left to read from `fd`, appended to `out`: for pipes and devices, whose size is
 *  not known beforehand. */
bool read_to_end(int fd, std::vector<uint8_t> *out) {
    constexpr size_t kChunk = size_t(1) << 20;
    for (;;) {
        size_t at = out->size();
        out->resize(at + kChunk);
        ssize_t n = read(fd, out->data() + at, kChunk);
        if (n < 0) {
            out->resize(at);
            return false;
        }
        out->resize(at + size_t(n));
        if (n == 0)
            return true;
    }
}

/** A regular file's `size` bytes from `fd`, in as many reads as the kernel needs. */
bool read_exactly(int fd, size_t size, std::vector<uint8_t> *out) {
    out->resize(size);
    size_t at = 0;
    while (at < size) {
        ssize_t n = read(fd, out->data() + at, size - at);
        if (n <= 0)
            return false;
        at += size_t(n);
    }
    return true;
}

} // namespace

bool read_whole_file(const std::string &path, std::vector<uint8_t> *out) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    out->clear();
    struct stat st {};
    bool ok =
        fstat(fd, &st) == 0 &&
        (S_ISREG(st.st_mode) ? read_exactly(fd, size_t(st.st_size), out) : read_to_end(fd, out));
    close(fd);
    return ok;
}

MappedFile::MappedFile(const std::string &path) : path_(path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        close(fd);
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        // A pipe or a device (`<(...)`, /dev/stdin): read into memory, nothing to map.
        ok_ = read_to_end(fd, &fallback_);
        data_ = fallback_.data();
        size_ = fallback_.size();
    } else if (st.st_size == 0) {
        ok_ = true; // an empty file: nothing to map
    } else {
        size_ = size_t(st.st_size);
        // MAP_POPULATE maps every page at once rather than faulting them in one by one.
        void *p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (p != MAP_FAILED) {
            data_ = static_cast<const uint8_t *>(p);
            mapped_ = true;
            ok_ = true;
        }
    }
    close(fd);
}

MappedFile::~MappedFile() {
    if (mapped_)
        munmap(const_cast<uint8_t *>(data_), size_);
}

} // namespace nhc
