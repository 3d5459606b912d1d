#include "driver/Compile.h"

#include "autoscheduler/TuningDb.h"
#include "driver/AccuracyReport.h"
#include "driver/Codegen.h"
#include "driver/CompileCache.h"
#include "driver/TensorSizes.h"
#include "driver/WholeProgramCheck.h"
#include "frontend/ConstantEvaluator.h"
#include "frontend/ConvertOpset.h"
#include "frontend/Frontend.h"
#include "frontend/OnnxOperators.h"
#include "graph/OperatorSupport.h"
#include "neff/NeffFile.h"
#include "schedules/ScheduleScript.h"
#include "support/Error.h"
#include "support/Log.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
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
    // Said before a long compile, not after it.
    std::filesystem::path dump = std::filesystem::absolute(o.dump_schedules, ec).parent_path();
    if (!o.dump_schedules.empty() && !std::filesystem::is_directory(dump, ec))
        user_error("NHC_EIO002", "cannot write the schedules to '", o.dump_schedules,
                   "' (--dump-schedules): folder '", dump.string(), "' does not exist");
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
    if (o.logical_nc_config == 2)
        user_error("NHC_ENYI001", "--logical-nc-config 2 is not implemented yet in this version: "
                                  "a NEFF runs on one physical NeuronCore; use "
                                  "--logical-nc-config 1 (the default here)");
    // On (the default) is what the code generator does: softmax, layernorm and reductions
    // accumulate in fp32, the engines' internal precision (nc.md:L117, L172), whatever their
    // tensors' type. Accumulating in the tensors' own type is not built.
    if (!o.mixed_precision_accumulation)
        user_error("NHC_ENYI001", "--disable-mixed-precision-accumulation is not implemented yet "
                                  "in this version: softmax, layernorm and reductions accumulate "
                                  "in fp32; leave mixed-precision accumulation on");
}

void log_options(const CompileOptions &o) {
    log_info("compiling ", o.model_path, " for ", o.target, " at -O", o.optlevel, ", model type ",
             o.model_type, ", auto-cast ", o.auto_cast,
             o.auto_cast == "none" ? std::string() : " to " + o.auto_cast_type,
             ", logical NC config ", o.logical_nc_config);
    if (o.model_type != "generic" && o.optlevel < 2)
        log_warning("--model-type ", o.model_type,
                    " adds moves to the -O2/-O3 search; -O1 does not search, so it changes "
                    "nothing here");
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

/** Writes the schedules code generation used (--dump-schedules), a script --schedule takes. */
void write_used_schedules(sched::ScheduleScript &used, const CompileOptions &o) {
    TimedStep step("write schedules");
    std::vector<std::string> &head =
        used.blocks.empty() ? used.trailing_comments : used.blocks.front().leading_comments;
    head.insert(head.begin(),
                {" Schedules neuron-halide-cc used for " + o.model_path,
                 " with --target " + o.target + " -O" + std::to_string(o.optlevel) +
                     " --model-type " + o.model_type + " --auto-cast " + o.auto_cast +
                     (o.auto_cast == "none" ? "" : " --auto-cast-type " + o.auto_cast_type) + ".",
                 " With these options, `--schedule` of this file writes the same NEFF; edit a",
                 " block to change its group's schedule (docs/schedules.md).", ""});
    std::ofstream out(o.dump_schedules, std::ios::binary);
    out << used.to_string();
    if (!out)
        user_error("NHC_EIO002", "cannot write the schedules to '", o.dump_schedules,
                   "' (--dump-schedules)");
    log_info("wrote ", used.blocks.size(), " schedule blocks to ", o.dump_schedules);
}

/** The --tuning-db database (created by neuron-halide-tune), or null. */
std::unique_ptr<autosched::TuningDb> open_tuning_db(const CompileOptions &o) {
    if (o.tuning_db.empty())
        return nullptr;
    TimedStep step("open tuning database");
    std::unique_ptr<autosched::TuningDb> db =
        autosched::TuningDb::open(o.tuning_db, /*create=*/o.tune_trials > 0);
    if (int64_t foreign = db->foreign_rows())
        log_warning("tuning database '", o.tuning_db, "': ", foreign,
                    " records written by another compiler version are ignored (this is ",
                    autosched::TuningDb::compiler_version(), ")");
    log_info("tuning database '", o.tuning_db, "': ", db->rows(), " records of this version");
    return db;
}

struct CacheLookup {
    std::string key;  ///< "" when the cache is not used
    bool hit = false; ///< the cache held the NEFF and wrote it to the output
};

CacheLookup look_up_compile_cache(const Graph &graph, const CompileOptions &o,
                                  autosched::TuningDb *tuning) {
    if (o.cache_dir.empty())
        return {};
    if (!o.dump_schedules.empty()) {
        log_info("compile cache: not used with --dump-schedules, which writes what compiling "
                 "chose");
        return {};
    }
    std::string key;
    {
        TimedStep step("compile cache key");
        CompileOptions keyed = o;
        keyed.tuning = tuning;
        key = compile_cache_key(graph, keyed);
    }
    TimedStep step("look up compile cache");
    if (!fetch_cached_neff(o.cache_dir, key, o.output)) {
        log_info("compile cache: no entry ", key, " in ", o.cache_dir);
        return {key, false};
    }
    log_info("compile cache: hit, entry ", key, " in ", o.cache_dir, " written to ", o.output,
             " without compiling");
    return {key, true};
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
    std::unique_ptr<autosched::TuningDb> tuning = open_tuning_db(options);
    FrontendOptions fe;
    fe.input_shapes = options.input_shapes;
    fe.frozen_inputs = options.frozen_inputs;
    Graph graph = run_frontend(options.model_path, fe);

    if (options.dump_graph)
        std::cout << "\n" << dump_graph(graph) << std::flush;
    CacheLookup cached = look_up_compile_cache(graph, options, tuning.get());
    if (cached.hit) {
        if (options.accuracy_report)
            report_accuracy(options);
        return;
    }
    {
        TimedStep step("check operator support");
        check_operator_support(graph);
    }
    {
        TimedStep step("check tensor sizes");
        check_tensor_sizes(graph, target::target_by_name(options.target));
    }
    std::map<std::string, std::string> onnx_ops; // node name -> ONNX operator, before the passes
    for (const Node &n : graph.nodes)
        onnx_ops[n.name] = n.op_type;
    {
        TimedStep step("graph passes");
        apply_graph_passes(graph, options);
    }
    // Blocks name the nodes that are compiled: those the passes made (a Conv's `__conv_taps1`)
    // are addressable, and a block for a node they rewrote is refused rather than ignored.
    CompileOptions codegen_options = options;
    codegen_options.tuning = tuning.get();
    if (script) {
        sched::check_schedule_nodes(*script, graph, onnx_ops);
        codegen_options.schedule = &*script;
    }
    // -O3: the whole program judges the plans the search chose in windows of groups.
    CheckedPlans checked;
    if (options.optlevel >= 3 && !tuning) {
        TimedStep step("whole-program check");
        checked = check_plans_on_program(graph, codegen_options);
        use_checked_plans(checked, codegen_options);
    }
    sched::ScheduleScript used;
    if (!options.dump_schedules.empty())
        codegen_options.used_schedules = &used;
    neff::Program program;
    {
        TimedStep step("code generation");
        program = generate_program(std::move(graph), codegen_options); // weights held once
    }
    if (!options.dump_schedules.empty())
        write_used_schedules(used, options);
    program.options = recorded_options(options);
    TimedStep step("write NEFF");
    neff::WriteOptions wo;
    wo.compress = !options.enable_fast_loading_neuron_binaries;
    // The NEFF's bytes do not depend on the job count (ParallelGzip.h); each job holds two 4 MiB
    // blocks and their output in memory.
    wo.jobs = parallel_jobs(options);
    std::optional<ProgressMeter> written; // gzip of the weights is most of a large model's compile
    wo.progress = [&](uint64_t done, uint64_t total) {
        if (!written)
            written.emplace("write NEFF", int64_t(total), "MB", 1e6);
        written->reach(int64_t(done));
    };
    neff::write_neff_file(options.output, program, wo);
    log_info("wrote ", options.output);
    if (!cached.key.empty()) {
        TimedStep store("store in compile cache");
        store_cached_neff(options.cache_dir, cached.key, options.output);
    }
    if (options.accuracy_report)
        report_accuracy(options);
}

std::string list_operators_text() {
    register_codegen_operators();
    // Every operator ONNX defines (default domain, the opset models are converted to) and every
    // one code generation registers. Those the front end evaluates compile when their inputs are
    // constants; host fallback does not exist yet, so the rest are refused.
    std::set<std::string> names;
    for (const std::string &op : onnx_operators(kCanonicalOpset))
        names.insert(op);
    for (const OperatorInfo &op : supported_operators())
        names.insert(op.op_type);
    std::string s;
    for (const std::string &op : names)
        s += op + "\t" +
             (is_supported_operator("", op) ? "device"
              : can_evaluate(op)            ? "folded"
                                            : "refused") +
             "\n";
    return s;
}

} // namespace nhc
