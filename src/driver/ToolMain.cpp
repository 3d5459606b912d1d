#include "driver/ToolMain.h"

#include "support/Error.h"
#include "support/Log.h"

#include <iostream>

namespace nhc {

namespace {

constexpr int kExitUserError = 1;
constexpr int kExitInternalError = 70; // EX_SOFTWARE

} // namespace

void start_logging(const CompileOptions &o) {
    Logger &logger = Logger::instance();
    logger.set_console_level(o.verbose);
    if (!logger.open_logfile(o.logfile))
        user_error("NHC_EIO002", "cannot write the log file '", o.logfile,
                   "' (--logfile); check that its folder exists and is writable");
}

int run_compiler_tool(const std::string &what, const std::function<int(bool &started)> &body) {
    bool started = false;
    try {
        int status = body(started);
        if (started)
            std::cout << "\n" << what << " status PASS" << std::endl;
        return status;
    } catch (const UserError &e) {
        Logger::instance().log(LogLevel::Error, e.formatted());
        if (started)
            std::cout << "\n" << what << " status ERROR" << std::endl;
        return kExitUserError;
    } catch (const std::exception &e) {
        // InternalError, Halide::InternalError, std::bad_alloc, ...: never a crash.
        std::string message = e.what();
        if (!dynamic_cast<const InternalError *>(&e))
            message = "internal compiler error (this is a bug in neuron-halide-cc): " + message;
        Logger::instance().log(LogLevel::Critical, message);
        if (started)
            std::cout << "\n" << what << " status ERROR" << std::endl;
        return kExitInternalError;
    }
}

} // namespace nhc
