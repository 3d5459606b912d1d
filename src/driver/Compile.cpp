#include "driver/Compile.h"

#include "driver/Codegen.h"
#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "neff/NeffFile.h"
#include "schedules/ScheduleScript.h"
#include "support/Error.h"
#include "support/Log.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>

namespace nhc {

namespace {

void check_inputs_exist(const CompileOptions &o) {
    std::error_code ec;
    if (!o.schedule_file.empty() && !std::filesystem::is_regular_file(o.schedule_file, ec))
        user_error("NHC_EIO001", "schedule file '", o.schedule_file,
                   "' (--schedule) does not exist");
}

// Options whose feature does not exist yet are refused rather than silently ignored.
void check_implemented(const CompileOptions &o) {
    if (o.auto_cast == "all")
        user_error("NHC_ENYI001", "--auto-cast all is not implemented yet in this version; use "
                                  "--auto-cast matmult or none");
    if (o.auto_cast == "matmult" && o.auto_cast_type == "fp8_e4m3")
        user_error("NHC_ENYI001", "--auto-cast-type ", o.auto_cast_type,
                   " is not implemented "
                   "yet in this version; use bf16, fp16 or tf32");
}

// A block whose node the graph passes replaced (a Conv lowered to im2col and a MatMul, a GELU
// or LayerNorm chain fused into one node) would otherwise be ignored without a word.
void check_scheduled_nodes_kept(const sched::ScheduleScript &script, const Graph &g,
                                const std::map<std::string, std::string> &op_of) {
    std::set<std::string> kept;
    for (const Node &n : g.nodes)
        kept.insert(n.name);
    for (const sched::ScriptBlock &b : script.blocks)
        if (!kept.count(b.node))
            user_error("NHC_ESCH110", script.file, ":", b.line, ": node \"", b.node, "\" (",
                       op_of.count(b.node) ? op_of.at(b.node) : std::string("?"),
                       ") is rewritten by the graph passes (fused into a pattern, or a "
                       "convolution lowered to a matmul); its schedule cannot apply yet");
}

void log_options(const CompileOptions &o) {
    log_info("compiling ", o.model_path, " for ", o.target, " at -O", o.optlevel, ", model type ",
             o.model_type, ", auto-cast ", o.auto_cast,
             o.auto_cast == "none" ? std::string() : " to " + o.auto_cast_type,
             ", logical NC config ", o.logical_nc_config);
    if (o.enable_saturate_infinity && o.target == "trn2")
        log_info("--enable-saturate-infinity has no effect on trn2");
}

/** The options that change the NEFF, recorded in its info.json. */
std::map<std::string, std::string> recorded_options(const CompileOptions &o) {
    std::map<std::string, std::string> recorded = {
        {"target", o.target},
        {"optlevel", std::to_string(o.optlevel)},
        {"model_type", o.model_type},
        {"auto_cast", o.auto_cast},
        {"auto_cast_type", o.auto_cast_type},
        {"logical_nc_config", std::to_string(o.logical_nc_config)}};
    std::string frozen; // the NEFF is specialised to these inputs' values
    for (const FrozenInput &f : o.frozen_inputs)
        frozen += (frozen.empty() ? "" : ",") + f.name;
    if (!frozen.empty())
        recorded["frozen_inputs"] = frozen;
    return recorded;
}

} // namespace

void compile_model(const CompileOptions &options) {
    register_codegen_operators();
    log_options(options);
    check_inputs_exist(options);
    check_implemented(options);

    // The schedule file is parsed before the model, so that its syntax errors come first.
    std::optional<sched::ScheduleScript> script;
    if (!options.schedule_file.empty()) {
        TimedStep step("parse schedule script");
        script = sched::parse_schedule_file(options.schedule_file);
    }
    FrontendOptions fe;
    fe.input_shapes = options.input_shapes;
    fe.frozen_inputs = options.frozen_inputs;
    Graph graph = run_frontend(options.model_path, fe);

    if (options.dump_graph)
        std::cout << "\n" << dump_graph(graph) << std::flush;
    {
        TimedStep step("check operator support");
        check_operator_support(graph);
    }
    CompileOptions codegen_options = options;
    if (script) {
        sched::check_schedule_nodes(*script, graph);
        codegen_options.schedule = &*script;
    }
    std::map<std::string, std::string> op_of; // node name -> ONNX operator, before the passes
    for (const Node &n : graph.nodes)
        op_of[n.name] = n.op_type;
    {
        TimedStep step("graph passes");
        apply_graph_passes(graph, options);
    }
    if (script)
        check_scheduled_nodes_kept(*script, graph, op_of);
    neff::Program program;
    {
        TimedStep step("code generation");
        program = generate_program(graph, codegen_options);
    }
    program.options = recorded_options(options);
    TimedStep step("write NEFF");
    neff::WriteOptions wo;
    wo.compress = !options.enable_fast_loading_neuron_binaries;
    neff::write_file_bytes(options.output, neff::write_neff(program, wo));
    log_info("wrote ", options.output);
}

std::string list_operators_text() {
    register_codegen_operators();
    std::string s;
    for (const OperatorInfo &op : supported_operators())
        s += op.op_type + "\n";
    return s;
}

} // namespace nhc
