// neuron-halide-cc: compile an ONNX model to a NEFF for an AWS NeuronCore.
// Exit status: 0 on success, 1 on a user error (a coded message on stderr), 70 on an internal
// compiler error (a bug), as neuronx-cc exits non-zero on any error (driver/ToolMain.h).

#include "driver/Compile.h"
#include "driver/Options.h"
#include "driver/ToolMain.h"
#include "support/MallocTunables.h"

#include <iostream>

int main(int argc, char **argv) {
    nhc::reexec_with_malloc_tunables(argv);
    return nhc::run_compiler_tool("Compiler", [&](bool &compiling) {
        nhc::ParsedCommandLine cmd = nhc::parse_command_line(argc, argv);
        if (cmd.command == nhc::Command::ListOperators) {
            std::cout << nhc::list_operators_text();
            return 0;
        }
        nhc::start_logging(cmd.options);
        compiling = true;
        nhc::compile_model(cmd.options);
        return 0;
    });
}
