#include "driver/Compile.h"

#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "support/Error.h"
#include "support/Log.h"

#include <filesystem>
#include <iostream>

namespace nhc {

namespace {

void check_inputs_exist(const CompileOptions &o) {
    std::error_code ec;
    if (!o.schedule_file.empty() && !std::filesystem::is_regular_file(o.schedule_file, ec))
        user_error("NHC_EIO001", "schedule file '", o.schedule_file,
                   "' (--schedule) does not exist");
}

void log_options(const CompileOptions &o) {
    log_info("compiling ", o.model_path, " for ", o.target, " at -O", o.optlevel, ", model type ",
             o.model_type, ", auto-cast ", o.auto_cast,
             o.auto_cast == "none" ? std::string() : " to " + o.auto_cast_type,
             ", logical NC config ", o.logical_nc_config);
    if (o.enable_saturate_infinity && o.target == "trn2")
        log_info("--enable-saturate-infinity has no effect on trn2");
}

[[noreturn]] void not_yet_implemented(const char *step) {
    user_error("NHC_ENYI001", "the pipeline stops at step '", step,
               "': it is not implemented yet in this version of neuron-halide-cc, so no NEFF "
               "was written");
}

} // namespace

void compile_model(const CompileOptions &options) {
    log_options(options);
    check_inputs_exist(options);

    FrontendOptions fe;
    fe.input_shapes = options.input_shapes;
    Graph graph = run_frontend(options.model_path, fe);

    if (options.dump_graph)
        std::cout << "\n" << dump_graph(graph) << std::flush;
    {
        TimedStep step("check operator support");
        check_operator_support(graph);
    }
    not_yet_implemented("graph passes and code generation");
}

std::string list_operators_text() {
    std::string s;
    for (const OperatorInfo &op : supported_operators())
        s += op.op_type + "\n";
    return s;
}

} // namespace nhc
