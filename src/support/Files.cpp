#include "support/Files.h"

#include <fcntl.h>
#include <fstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nhc {

bool read_whole_file(const std::string &path, std::vector<uint8_t> *out) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        return false;
    std::streamoff size = in.tellg();
    if (size < 0)
        return false;
    out->assign(static_cast<size_t>(size), 0);
    in.seekg(0);
    in.read(reinterpret_cast<char *>(out->data()), std::streamsize(size));
    return bool(in);
}

MappedFile::MappedFile(const std::string &path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        size_ = size_t(st.st_size);
        if (size_ == 0) {
            ok_ = true; // an empty file: nothing to map
        } else {
            // MAP_POPULATE maps every page at once rather than faulting them in one by one.
            void *p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
            if (p != MAP_FAILED) {
                data_ = static_cast<const uint8_t *>(p);
                ok_ = true;
            }
        }
    }
    close(fd);
}

MappedFile::~MappedFile() {
    if (data_)
        munmap(const_cast<uint8_t *>(data_), size_);
}

} // namespace nhc
