// neuron-halide-cc: compile an ONNX model to a NEFF for an AWS NeuronCore.
// Exit status: 0 on success, 1 on a user error (a coded message on stderr), 70 on an internal
// compiler error (a bug), as neuronx-cc exits non-zero on any error.

#include "driver/Compile.h"
#include "driver/Options.h"
#include "support/Error.h"
#include "support/Log.h"

#include <iostream>

namespace {

constexpr int kExitUserError = 1;
constexpr int kExitInternalError = 70; // EX_SOFTWARE

int run(int argc, char **argv, bool &compiling) {
    nhc::ParsedCommandLine cmd = nhc::parse_command_line(argc, argv);
    if (cmd.command == nhc::Command::ListOperators) {
        std::string ops = nhc::list_operators_text();
        if (ops.empty())
            std::cerr << "no ONNX operator is supported yet: the algorithms and the code "
                         "generator are not implemented in this version\n";
        std::cout << ops;
        return 0;
    }
    const nhc::CompileOptions &o = cmd.options;
    nhc::Logger &logger = nhc::Logger::instance();
    logger.set_console_level(o.verbose);
    if (!logger.open_logfile(o.logfile))
        nhc::user_error("NHC_EIO002", "cannot write the log file '", o.logfile,
                        "' (--logfile); check that its folder exists and is writable");
    compiling = true;
    nhc::compile_model(o);
    std::cout << "\nCompiler status PASS" << std::endl;
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    bool compiling = false;
    try {
        return run(argc, argv, compiling);
    } catch (const nhc::UserError &e) {
        nhc::Logger::instance().log(nhc::LogLevel::Error, e.formatted());
        if (compiling)
            std::cout << "\nCompiler status ERROR" << std::endl;
        return kExitUserError;
    } catch (const std::exception &e) {
        // InternalError, Halide::InternalError, std::bad_alloc, ...: never a crash.
        std::string what = e.what();
        if (!dynamic_cast<const nhc::InternalError *>(&e))
            what = "internal compiler error (this is a bug in neuron-halide-cc): " + what;
        nhc::Logger::instance().log(nhc::LogLevel::Critical, what);
        if (compiling)
            std::cout << "\nCompiler status ERROR" << std::endl;
        return kExitInternalError;
    }
}
