#ifndef NHC_NEFF_ARCHIVE_H
#define NHC_NEFF_ARCHIVE_H

/** \file
 * The tar payload of a NEFF, through libarchive. Writing is deterministic: members sorted by
 * name, mtime 0, uid/gid 0, no user/group names, mode 0644, and a gzip header without a timestamp,
 * so the same members give the same bytes. Reading accepts plain tar and tar.gz.
 */

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nhc::neff {

/** Member name -> bytes; std::map keeps them sorted. */
using ArchiveMembers = std::map<std::string, std::vector<uint8_t>>;

std::vector<uint8_t> write_tar(const ArchiveMembers &members, bool gzip);
/** Throws NHC_ENEFF005 if the bytes are not a readable tar / tar.gz. */
ArchiveMembers read_tar(const uint8_t *data, size_t size);

} // namespace nhc::neff

#endif
