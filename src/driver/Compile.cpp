#include "driver/Compile.h"

#include "autoscheduler/TuningDb.h"
#include "driver/AccuracyReport.h"
#include "driver/Codegen.h"
#include "driver/CompileCache.h"
#include "driver/HostPartition.h"
#include "driver/TensorSizes.h"
#include "driver/WholeProgramCheck.h"
#include "frontend/ConstantEvaluator.h"
#include "frontend/ConvertOpset.h"
#include "frontend/Frontend.h"
#include "frontend/OnnxOperators.h"
#include "graph/OperatorSupport.h"
#include "neff/DefJson.h"
#include "neff/NeffFile.h"
#include "runtime/Partition.h"
#include "schedules/ScheduleScript.h"
#include "support/Error.h"
#include "support/Log.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
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
    // fp8 is for the linear layers' weights (graph/AutoCast.h); every value in fp8 is not built.
    if (o.auto_cast == "all" && o.auto_cast_type == "fp8_e4m3")
        user_error("NHC_ENYI001", "--auto-cast all with --auto-cast-type fp8_e4m3 is not "
                                  "implemented yet in this version: fp8 stores the linear "
                                  "layers' weights only; use --auto-cast matmult with fp8_e4m3, "
                                  "or --auto-cast all with bf16 or fp16");
    if (o.logical_nc_config == 2)
        user_error("NHC_ENYI001", "--logical-nc-config 2 is not implemented yet in this version: "
                                  "a NEFF runs on one physical NeuronCore; use "
                                  "--logical-nc-config 1 (the default here)");
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
    if (!o.mixed_precision_accumulation) // recorded when off only: NEFFs of the default unchanged
        recorded["mixed_precision_accumulation"] = "off";
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

/** Looks the compile up in the cache; `key_of` makes its key from the options (with the
 *  tuning database among them). */
CacheLookup
look_up_compile_cache(const CompileOptions &o, autosched::TuningDb *tuning,
                      const std::function<std::string(const CompileOptions &)> &key_of) {
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
        key = key_of(keyed);
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

/** What every device graph of the model is compiled with. */
struct CompileContext {
    const CompileOptions &options;
    autosched::TuningDb *tuning = nullptr;
    const sched::ScheduleScript *script = nullptr;
    sched::ScheduleScript *used = nullptr; ///< --dump-schedules: the blocks of every group
};

/** A device graph after the checks and passes, ready for code generation. */
struct PassedGraph {
    Graph graph;
    std::map<std::string, std::string> onnx_ops; ///< node name -> ONNX operator, before passes
};

/** The device part of the pipeline before code generation: operator support, tensor sizes,
 *  graph passes. */
PassedGraph check_and_pass(Graph graph, const CompileOptions &options) {
    {
        TimedStep step("check operator support");
        check_operator_support(graph);
    }
    {
        TimedStep step("check tensor sizes");
        check_tensor_sizes(graph, target::target_by_name(options.target));
    }
    PassedGraph passed;
    for (const Node &n : graph.nodes)
        passed.onnx_ops[n.name] = n.op_type;
    {
        TimedStep step("graph passes");
        apply_graph_passes(graph, options);
    }
    passed.graph = std::move(graph);
    return passed;
}

/** The rest: the -O3 whole-program check and code generation, with the script's blocks (checked
 *  against the graph by the caller) and adding the groups' schedules to cx.used. */
neff::Program generate(Graph graph, const CompileContext &cx) {
    const CompileOptions &options = cx.options;
    CompileOptions codegen_options = options;
    codegen_options.tuning = cx.tuning;
    codegen_options.schedule = cx.script;
    // -O3: the whole program judges the plans the search chose in windows of groups.
    CheckedPlans checked;
    if (options.optlevel >= 3 && !cx.tuning) {
        TimedStep step("whole-program check");
        checked = check_plans_on_program(graph, codegen_options);
        use_checked_plans(checked, codegen_options);
    }
    sched::ScheduleScript used;
    if (cx.used)
        codegen_options.used_schedules = &used;
    neff::Program program;
    {
        TimedStep step("code generation");
        program = generate_program(std::move(graph), codegen_options); // weights held once
    }
    if (cx.used) {
        cx.used->blocks.insert(cx.used->blocks.end(), used.blocks.begin(), used.blocks.end());
        cx.used->trailing_comments.insert(cx.used->trailing_comments.end(),
                                          used.trailing_comments.begin(),
                                          used.trailing_comments.end());
    }
    program.options = recorded_options(options);
    return program;
}

/** The device pipeline on one imported graph: check_and_pass, the script's blocks checked
 *  against the graph compiled (they name the nodes the passes made, a Conv's `__conv_taps1`,
 *  and a block for a node they rewrote is refused rather than ignored), generate. */
neff::Program compile_graph(Graph graph, const CompileContext &cx) {
    PassedGraph passed = check_and_pass(std::move(graph), cx.options);
    if (cx.script)
        sched::check_schedule_nodes(*cx.script, passed.graph, passed.onnx_ops);
    return generate(std::move(passed.graph), cx);
}

neff::WriteOptions neff_write_options(const CompileOptions &options,
                                      std::optional<ProgressMeter> &written) {
    neff::WriteOptions wo;
    wo.compress = !options.enable_fast_loading_neuron_binaries;
    // The NEFF's bytes do not depend on the job count (ParallelGzip.h); each job holds two 4 MiB
    // blocks and their output in memory.
    wo.jobs = parallel_jobs(options);
    wo.progress = [&](uint64_t done, uint64_t total) {
        if (!written) // gzip of the weights is most of a large model's compile
            written.emplace("write NEFF", int64_t(total), "MB", 1e6);
        written->reach(int64_t(done));
    };
    return wo;
}

/** Host fallback: the segments of the model, or none when every node runs on the device. */
std::vector<ModelSegment> partition_model(const LoadedModel &model, const CompileOptions &o) {
    TimedStep step("partition for host fallback");
    if (o.fallback == "none") {
        check_device_operators(model);
        return {};
    }
    std::vector<ModelSegment> segments = partition_for_host(model);
    if (segments.empty())
        return segments;
    int host_nodes = 0;
    for (const ModelSegment &seg : segments)
        host_nodes += seg.on_host ? seg.model.proto.graph().node_size() : 0;
    log_info("host fallback: ", host_nodes, " of ", model.proto.graph().node_size(),
             " nodes run on the host, in ", segments.size(),
             " segments:", describe_partition(segments));
    return segments;
}

/** The manifest of a partitioned NEFF: the model's inputs and outputs, and per segment its
 *  member's file name (`sgNN.neff` or `sgNN.onnx`) and interface. */
rt::PartitionManifest partition_manifest(const std::vector<ModelSegment> &segments,
                                         const LoadedModel &whole) {
    rt::PartitionManifest manifest;
    std::set<std::string> initializers; // listed among the inputs by models of IR < 4
    for (const auto &t : whole.proto.graph().initializer())
        initializers.insert(t.name());
    for (const auto &vi : whole.proto.graph().input())
        if (!initializers.count(vi.name()))
            manifest.inputs.push_back(vi.name());
    for (const auto &vi : whole.proto.graph().output())
        manifest.outputs.push_back(vi.name());
    for (size_t i = 0; i < segments.size(); i++) {
        const ModelSegment &seg = segments[i];
        char file[32];
        std::snprintf(file, sizeof file, "sg%02zu.%s", i, seg.on_host ? "onnx" : "neff");
        manifest.segments.push_back({seg.on_host, file, seg.inputs, seg.outputs});
    }
    return manifest;
}

/** A partitioned NEFF: each device segment compiled to a NEFF of its own, each host segment
 *  kept as ONNX, and the manifest that orders them; from the compile cache when it holds it. */
void compile_partitioned(std::vector<ModelSegment> &segments, const LoadedModel &whole,
                         const CompileContext &cx, int opset, int declared_opset) {
    const CompileOptions &options = cx.options;
    const rt::PartitionManifest manifest = partition_manifest(segments, whole);
    const std::string name =
        whole.proto.graph().name().empty() ? "main" : whole.proto.graph().name();
    const std::string manifest_json = rt::partition_json(manifest);
    // Every segment as the cache keys it and the NEFF holds it, before any is compiled.
    std::vector<KeyedSegment> keyed(segments.size());
    std::vector<Graph> graphs(segments.size()); // the device segments'
    for (size_t i = 0; i < segments.size(); i++) {
        if (segments[i].on_host) {
            keyed[i].host_onnx = segments[i].model.proto.SerializeAsString();
            continue;
        }
        graphs[i] = import_prepared_model(segments[i].model, opset, declared_opset);
        segments[i].model = LoadedModel(); // the graph holds what it needs of it
        if (options.dump_graph)
            std::cout << "\n" << dump_graph(graphs[i]) << std::flush;
        keyed[i].device_graph = &graphs[i];
    }
    CacheLookup cached = look_up_compile_cache(options, cx.tuning, [&](const CompileOptions &o) {
        return partitioned_cache_key(manifest_json, name, keyed, o);
    });
    if (cached.hit)
        return;
    // Every device segment through the passes, and the script's blocks checked against them
    // all, before any is generated.
    std::vector<PassedGraph> passed(segments.size());
    std::vector<sched::SegmentNodes> device;
    std::map<std::string, std::string> host_ops;
    for (size_t i = 0; i < segments.size(); i++) {
        if (segments[i].on_host) {
            for (const auto &n : segments[i].model.proto.graph().node())
                host_ops[n.name()] = n.op_type();
            continue;
        }
        passed[i] = check_and_pass(std::move(graphs[i]), options);
        device.push_back({&passed[i].graph, &passed[i].onnx_ops});
    }
    if (cx.script)
        sched::check_schedule_nodes(*cx.script, device, host_ops);
    neff::ArchiveMembers members;
    for (size_t i = 0; i < segments.size(); i++) {
        const std::string &file = manifest.segments[i].file;
        if (segments[i].on_host) {
            members[file].assign(keyed[i].host_onnx.begin(), keyed[i].host_onnx.end());
            continue;
        }
        neff::Program program = generate(std::move(passed[i].graph), cx);
        TimedStep step("write NEFF of " + program.name);
        std::optional<ProgressMeter> written;
        members[file] = neff::write_neff(program, neff_write_options(options, written));
    }
    if (cx.used)
        write_used_schedules(*cx.used, options);
    neff::Program shell; // info.json of the whole: its name, target and options
    shell.name = name;
    shell.target = options.target;
    shell.options = recorded_options(options);
    shell.options["fallback"] = options.fallback;
    std::string info = neff::make_info_json(shell);
    members["info.json"].assign(info.begin(), info.end());
    members[neff::kPartitionMember].assign(manifest_json.begin(), manifest_json.end());
    {
        TimedStep step("write NEFF");
        neff::WriteOptions wo;
        wo.compress = false; // the device NEFFs are compressed already (or asked not to be)
        neff::write_partitioned_neff_file(options.output, shell.name, members, wo);
    }
    log_info("wrote ", options.output, " (", segments.size(), " segments)");
    if (!cached.key.empty()) {
        TimedStep store("store in compile cache");
        store_cached_neff(options.cache_dir, cached.key, options.output);
    }
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
    sched::ScheduleScript used; // --dump-schedules
    CompileContext cx{options, tuning.get(), script ? &*script : nullptr,
                      options.dump_schedules.empty() ? nullptr : &used};
    FrontendOptions fe;
    fe.input_shapes = options.input_shapes;
    fe.frozen_inputs = options.frozen_inputs;
    int opset = 0, declared_opset = 0;
    LoadedModel model = prepare_model(options.model_path, fe, &opset, &declared_opset);
    std::vector<ModelSegment> segments = partition_model(model, options);
    if (!segments.empty()) {
        compile_partitioned(segments, model, cx, opset, declared_opset);
        if (options.accuracy_report)
            report_accuracy(options);
        return;
    }
    Graph graph = import_prepared_model(model, opset, declared_opset);
    model = LoadedModel(); // the graph holds what it needs of it

    if (options.dump_graph)
        std::cout << "\n" << dump_graph(graph) << std::flush;
    CacheLookup cached =
        look_up_compile_cache(options, tuning.get(), [&](const CompileOptions &keyed) {
            return compile_cache_key(graph, keyed);
        });
    if (cached.hit) {
        if (options.accuracy_report)
            report_accuracy(options);
        return;
    }
    neff::Program program = compile_graph(std::move(graph), cx);
    if (cx.used)
        write_used_schedules(used, options);
    TimedStep step("write NEFF");
    std::optional<ProgressMeter> written;
    neff::write_neff_file(options.output, program, neff_write_options(options, written));
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
    // constants, and run in a host segment otherwise (--fallback host); the rest are refused.
    std::set<std::string> names;
    for (const std::string &op : onnx_operators(kCanonicalOpset))
        names.insert(op);
    for (const OperatorInfo &op : supported_operators())
        names.insert(op.op_type);
    std::string s;
    for (const std::string &op : names)
        s += op + "\t" +
             (is_supported_operator("", op) ? "device"
              : can_evaluate(op)            ? "host"
                                            : "refused") +
             "\n";
    return s;
}

} // namespace nhc
