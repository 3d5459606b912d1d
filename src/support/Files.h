#ifndef NHC_SUPPORT_FILES_H
#define NHC_SUPPORT_FILES_H

/** \file
 * Whole-file reads for the model, the NEFF and tensor files: one sized read, not a character
 * iterator (which takes seconds on a 400 MB model). Callers turn a failure into their own coded
 * error, as each names a different kind of file.
 */

#include <cstdint>
#include <string>
#include <vector>

namespace nhc {

/** The bytes of the regular file at `path`, into `out`; false if it cannot be opened or read. */
bool read_whole_file(const std::string &path, std::vector<uint8_t> *out);

} // namespace nhc

#endif
