#ifndef NHC_NEFF_ARCHIVE_H
#define NHC_NEFF_ARCHIVE_H

/** \file
 * The tar payload of a NEFF, through libarchive (gzip by ParallelGzip). Writing is
 * deterministic: members sorted by name, mtime 0, uid/gid 0, no user/group names, mode 0644, and a
 * gzip stream cut into blocks independently of the job count, without a timestamp, so the same
 * members give the same bytes. Reading accepts plain tar and tar.gz.
 */

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nhc::neff {

/** Member name -> bytes; std::map keeps them sorted. */
using ArchiveMembers = std::map<std::string, std::vector<uint8_t>>;

/** A member's `size` bytes: held elsewhere at `data` (written without a copy), or, when `make`
 *  is set, made a piece at a time as they are written (a weight converted or laid out as the
 *  NEFF is written: neff::Variable::make_bytes). */
struct ArchiveMember {
    const uint8_t *data = nullptr;
    size_t size = 0;
    std::function<void(size_t offset, size_t size, uint8_t *dst)> make;
};
/** Member name -> its bytes. */
using ArchiveView = std::map<std::string, ArchiveMember>;

std::vector<uint8_t> write_tar(const ArchiveMembers &members, bool gzip);
/** Where write_tar puts the archive's bytes, in order (a vector, or a file as it is written). */
using ArchiveSink = std::function<void(const uint8_t *data, size_t size)>;
/** Told the members' bytes written so far and in all, as a long write goes (progress). */
using ArchiveProgress = std::function<void(uint64_t done, uint64_t total)>;
/** `jobs` threads compress (gzip only); the bytes do not depend on it. */
void write_tar(const ArchiveView &members, bool gzip, const ArchiveSink &sink,
               const ArchiveProgress &progress = nullptr, int jobs = 1);

/** What an archive may unpack to. A member whose declared size is more than the rest of the
 *  payload can hold (its packed size, times deflate's largest expansion for gzip) or than the
 *  caller accepts is NHC_ENEFF014, before anything is allocated for it: a header is not trusted
 *  for the size of an allocation. */
struct ArchiveLimits {
    uint64_t packed_bytes = 0; ///< the archive's size as stored (the NEFF's payload)
    uint64_t max_unpacked = UINT64_MAX;
};

/** Throws NHC_ENEFF005 if the bytes are not a readable tar / tar.gz, NHC_ENEFF014 for a member
 *  larger than `size` bytes can unpack to. */
ArchiveMembers read_tar(const uint8_t *data, size_t size);

/** The next bytes of an archive into `buf` (at most `capacity`); 0 at its end. */
using ArchiveSource = std::function<size_t(uint8_t *buf, size_t capacity)>;
/** What read_tar_stream read: the members kept, and the sizes of those skipped. */
struct ArchiveRead {
    ArchiveMembers members;
    std::map<std::string, int64_t> skipped_sizes;
};
/** Reads an archive from `source` chunk by chunk, never holding it whole; the bytes of members
 *  for which `skip` is true are read past, only their sizes kept (and counted against `limits`).
 *  NHC_ENEFF005 and NHC_ENEFF014 as read_tar. */
ArchiveRead read_tar_stream(const ArchiveSource &source,
                            const std::function<bool(const std::string &)> &skip,
                            const ArchiveLimits &limits);

} // namespace nhc::neff

#endif
