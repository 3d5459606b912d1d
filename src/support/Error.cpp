#include "support/Error.h"

namespace nhc {

void internal_error_at(const char *file, int line, const std::string &message) {
    std::ostringstream os;
    os << "internal compiler error at " << file << ":" << line << ": " << message
       << " (this is a bug in neuron-halide-cc; please report it with the model and command line)";
    throw InternalError(os.str());
}

} // namespace nhc
