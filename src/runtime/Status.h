#ifndef NHC_RUNTIME_STATUS_H
#define NHC_RUNTIME_STATUS_H

/** \file
 * NRT-like status codes (neuron-compiler.md §3.3) carried next to our NHC_E codes: a load or
 * execute result says both what kind of failure the real runtime would report and which of our
 * documented errors it is.
 */

#include "support/Error.h"

#include <string>

namespace nhc::rt {

enum NrtStatus : int {
    NRT_SUCCESS = 0,
    NRT_FAILURE = 1,
    NRT_INVALID = 2, ///< invalid NEFF, bad instruction, bad DMA descriptor, I/O mismatch
    NRT_INVALID_HANDLE = 3,
    NRT_RESOURCE = 4,
    NRT_TIMEOUT = 5,
    NRT_UNSUPPORTED_NEFF_VERSION = 10,
    NRT_EXEC_BAD_INPUT = 1002,
    NRT_EXEC_COMPLETED_WITH_ERR = 1004,
    NRT_OOB = 1006,
};

const char *nrt_status_name(NrtStatus s);
/** The status a user error code maps to (e.g. NHC_ENEFF002 -> NRT_UNSUPPORTED_NEFF_VERSION). */
NrtStatus status_for_code(const std::string &code);

/** Outcome of a status-returning call. */
struct Result {
    NrtStatus status = NRT_SUCCESS;
    std::string code; ///< NHC_E... or empty on success
    std::string message;
    bool ok() const { return status == NRT_SUCCESS; }
};

/** Converts a UserError into a Result. */
Result result_from(const UserError &e);

} // namespace nhc::rt

#endif
