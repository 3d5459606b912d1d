#ifndef NHC_SUPPORT_FILES_H
#define NHC_SUPPORT_FILES_H

/** \file
 * Whole files for the model (mapped), the NEFF and tensor files (read): one sized read, not a
 * character iterator (which takes seconds on a 400 MB model); pipes are read to their end.
 * Callers turn a failure into their own coded error, as each names a different kind of file.
 */

#include <cstdint>
#include <string>
#include <vector>

namespace nhc {

/** The bytes of the file at `path` (a regular file, or a pipe read to its end), into `out`;
 *  false if it cannot be opened or read. */
bool read_whole_file(const std::string &path, std::vector<uint8_t> *out);

/** A whole file mapped read-only, its pages taken from the page cache: no buffer of the file's
 *  size is allocated and filled (for a 400 MB model, fresh pages cost more than the read). A
 *  pipe or a device, which cannot be mapped, is read into memory instead. */
class MappedFile {
public:
    /** Maps `path`; ok() is false if it cannot be opened or mapped. */
    explicit MappedFile(const std::string &path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;
    bool ok() const { return ok_; }
    /** True when the bytes are the file's pages (a regular file), false when read into memory. */
    bool mapped() const { return mapped_; }
    const uint8_t *data() const { return data_; }
    size_t size() const { return size_; }
    const std::string &path() const { return path_; }

private:
    std::string path_;
    const uint8_t *data_ = nullptr;
    size_t size_ = 0;
    bool ok_ = false, mapped_ = false;
    std::vector<uint8_t> fallback_; ///< the bytes of a file that is not a regular one
};

} // namespace nhc

#endif
