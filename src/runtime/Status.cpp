#include "runtime/Status.h"

namespace nhc::rt {

const char *nrt_status_name(NrtStatus s) {
    switch (s) {
    case NRT_SUCCESS:
        return "NRT_SUCCESS";
    case NRT_FAILURE:
        return "NRT_FAILURE";
    case NRT_INVALID:
        return "NRT_INVALID";
    case NRT_INVALID_HANDLE:
        return "NRT_INVALID_HANDLE";
    case NRT_RESOURCE:
        return "NRT_RESOURCE";
    case NRT_TIMEOUT:
        return "NRT_TIMEOUT";
    case NRT_UNSUPPORTED_NEFF_VERSION:
        return "NRT_UNSUPPORTED_NEFF_VERSION";
    case NRT_EXEC_BAD_INPUT:
        return "NRT_EXEC_BAD_INPUT";
    case NRT_EXEC_COMPLETED_WITH_ERR:
        return "NRT_EXEC_COMPLETED_WITH_ERR";
    case NRT_OOB:
        return "NRT_OOB";
    }
    return "NRT_UNKNOWN";
}

NrtStatus status_for_code(const std::string &code) {
    if (code == "NHC_ENEFF002") {
        return NRT_UNSUPPORTED_NEFF_VERSION;
    }
    if (code == "NHC_ERT001" || code == "NHC_ERT002" || code == "NHC_ERT003") {
        return NRT_EXEC_BAD_INPUT; // missing / unknown / misshapen input
    }
    if (code == "NHC_ERT007") {
        return NRT_TIMEOUT; // a semaphore deadlock hangs the device until the exec timeout
    }
    if (code == "NHC_ERT017") {
        return NRT_RESOURCE; // HBM capacity
    }
    if (code == "NHC_ERT020") {
        return NRT_OOB; // out-of-bounds indirect copy (neuron-compiler.md §3.3)
    }
    if (code == "NHC_ERT012") {
        return NRT_FAILURE; // not implemented in the simulator
    }
    if (code.rfind("NHC_ENEFF", 0) == 0 || code.rfind("NHC_ERT", 0) == 0) {
        return NRT_INVALID; // bad NEFF, bad instruction or descriptor
    }
    return NRT_FAILURE;
}

Result result_from(const UserError &e) {
    return Result{status_for_code(e.code()), e.code(), e.what()};
}

} // namespace nhc::rt
