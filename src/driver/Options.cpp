#include "driver/Options.h"

#include "driver/CompileCache.h"
#include "support/Error.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <onnx/common/version.h>

#include <algorithm>
#include <cstring>
#include <google/protobuf/stubs/common.h>
#include <thread>

namespace cl = llvm::cl;

namespace nhc {

namespace {

cl::OptionCategory &category() {
    static cl::OptionCategory c("neuron-halide-cc options");
    return c;
}

cl::SubCommand &compile_cmd() {
    static cl::SubCommand s("compile", "Compile an ONNX model to a NEFF (the default command)");
    return s;
}

cl::SubCommand &list_ops_cmd() {
    static cl::SubCommand s(
        "list-operators", "Print every ONNX operator and where it runs (device, folded, refused)");
    return s;
}

// The options live for the whole process, as LLVM's cl requires; built on first use so that
// their registration order is fixed.
struct CompileFlags {
    template <typename T>
    using Opt = cl::opt<T>;
    cl::opt<std::string> model{cl::Positional, cl::desc("<model.onnx>"), cl::sub(compile_cmd()),
                               cl::cat(category())};
    Opt<std::string> framework{"framework",
                               cl::desc("Input format: ONNX"),
                               cl::value_desc("name"),
                               cl::sub(compile_cmd()),
                               cl::ZeroOrMore,
                               cl::cat(category())};
    Opt<std::string> target{"target",
                            cl::desc("inf2|trn1|trn1n|trn2 (default trn1)"),
                            cl::value_desc("name"),
                            cl::sub(compile_cmd()),
                            cl::ZeroOrMore,
                            cl::cat(category())};
    Opt<std::string> olevel{"O",
                            cl::desc("Optimization level: -O1, -O2 (default), -O3"),
                            cl::Prefix,
                            cl::value_desc("N"),
                            cl::sub(compile_cmd()),
                            cl::ZeroOrMore,
                            cl::cat(category())};
    Opt<std::string> optlevel{
        "optlevel",          cl::desc("Optimization level 1|2|3 (same as -O<N>)"),
        cl::value_desc("N"), cl::sub(compile_cmd()),
        cl::ZeroOrMore,      cl::cat(category())};
    Opt<std::string> model_type{
        "model-type",           cl::desc("generic|transformer|unet-inference"),
        cl::value_desc("type"), cl::sub(compile_cmd()),
        cl::ZeroOrMore,         cl::cat(category())};
    Opt<std::string> auto_cast{"auto-cast",           cl::desc("none|matmult|all (default none)"),
                               cl::value_desc("ops"), cl::sub(compile_cmd()),
                               cl::ZeroOrMore,        cl::cat(category())};
    Opt<std::string> auto_cast_type{
        "auto-cast-type",       cl::desc("bf16|fp16|tf32|fp8_e4m3 (default bf16)"),
        cl::value_desc("type"), cl::sub(compile_cmd()),
        cl::ZeroOrMore,         cl::cat(category())};
    Opt<std::string> fallback{
        "fallback",
        cl::desc("host|none: run the nodes the device cannot run on the host (default host)"),
        cl::value_desc("where"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    Opt<bool> saturate_inf{"enable-saturate-infinity",
                           cl::desc("Convert +-inf to +-MAX_FLOAT before matmul transposes (trn1)"),
                           cl::sub(compile_cmd()), cl::ZeroOrMore, cl::cat(category())};
    Opt<bool> fast_loading{"enable-fast-loading-neuron-binaries",
                           cl::desc("Write the NEFF payload uncompressed"), cl::sub(compile_cmd()),
                           cl::ZeroOrMore, cl::cat(category())};
    Opt<bool> enable_mpa{"enable-mixed-precision-accumulation",
                         cl::desc("Accumulate softmax/layernorm/reductions in fp32 (default on)"),
                         cl::sub(compile_cmd()), cl::ZeroOrMore, cl::cat(category())};
    Opt<bool> disable_mpa{"disable-mixed-precision-accumulation",
                          cl::desc("Turn mixed-precision accumulation off"), cl::sub(compile_cmd()),
                          cl::ZeroOrMore, cl::cat(category())};
    Opt<std::string> lnc{
        "logical-nc-config",
        cl::desc("1|2 physical cores per logical core (2 only on trn2; default 2 on trn2, else 1)"),
        cl::value_desc("N"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    cl::alias lnc_alias1{"lnc", cl::desc("Alias for --logical-nc-config"), cl::aliasopt(lnc)};
    Opt<std::string> output{"output",
                            cl::desc("NEFF destination (default file.neff)"),
                            cl::value_desc("path"),
                            cl::sub(compile_cmd()),
                            cl::ZeroOrMore,
                            cl::cat(category())};
    Opt<std::string> logfile{"logfile",
                             cl::desc("Log file (default log-neuron-cc.txt)"),
                             cl::value_desc("path"),
                             cl::sub(compile_cmd()),
                             cl::ZeroOrMore,
                             cl::cat(category())};
    Opt<std::string> verbose{
        "verbose",
        cl::desc("debug|info|warning|error|critical or a number (default warning)"),
        cl::value_desc("level"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    Opt<std::string> jobs{
        "num-parallel-jobs",
        cl::desc("Threads that measure the search's candidates and compress the NEFF (default: the "
                 "machine's, at most 8)"),
        cl::value_desc("N"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    cl::list<std::string> input_shapes{
        "input-shape",
        cl::desc("Fix an input's shape: name=d0,d1,... (repeatable)"),
        cl::value_desc("name=dims"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    cl::list<std::string> frozen_inputs{
        "freeze-input",
        cl::desc("Compile with an input fixed to a tensor file's value: name=file.npy|.pb "
                 "(repeatable; the NEFF no longer takes that input)"),
        cl::value_desc("name=file"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    Opt<std::string> schedule{
        "schedule",
        cl::desc("Schedule script overriding the schedules of the nodes it names"),
        cl::value_desc("file"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    Opt<std::string> dump_schedules{
        "dump-schedules",
        cl::desc("Write the schedule of every group compiled, as a script --schedule takes"),
        cl::value_desc("file"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    Opt<std::string> tuning_db{
        "tuning-db",
        cl::desc("Tuning database (neuron-halide-tune): compile with its best recorded schedules"),
        cl::value_desc("file"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    Opt<std::string> cache_dir{
        "cache-dir",
        cl::desc("Compile cache folder: an unchanged model compiled with the same options is not "
                 "compiled again (default $NEURON_HALIDE_CACHE_DIR, else "
                 "$XDG_CACHE_HOME/neuron-halide, else ~/.cache/neuron-halide)"),
        cl::value_desc("dir"),
        cl::sub(compile_cmd()),
        cl::ZeroOrMore,
        cl::cat(category())};
    Opt<bool> no_cache{"no-cache", cl::desc("Compile without looking in or storing to the cache"),
                       cl::sub(compile_cmd()), cl::ZeroOrMore, cl::cat(category())};
    Opt<bool> dump_graph{"dump-graph", cl::desc("Print the Graph IR after the front end"),
                         cl::sub(compile_cmd()), cl::ZeroOrMore, cl::cat(category())};
    Opt<bool> accuracy_report{
        "accuracy-report",
        cl::desc("Compile again without auto-cast, run both NEFFs on the same made-up inputs and "
                 "print each output's error against the uncast one"),
        cl::sub(compile_cmd()), cl::ZeroOrMore, cl::cat(category())};
};

CompileFlags &flags() {
    static CompileFlags f;
    return f;
}

std::string join(const std::vector<std::string> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); i++)
        s += (i ? "|" : "") + v[i];
    return s;
}

const std::string &one_of(const char *option, const std::string &value,
                          const std::vector<std::string> &allowed) {
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
        user_error("NHC_EARG002", "option --", option, " got '", value, "'; expected one of ",
                   join(allowed));
    return value;
}

int int_in_range(const char *option, const std::string &value, int lo, int hi) {
    bool digits = !value.empty() && value.size() <= 9 &&
                  value.find_first_not_of("0123456789") == std::string::npos;
    int v = digits ? std::stoi(value) : -1;
    if (!digits || v < lo || v > hi)
        user_error("NHC_EARG002", "option ", option, " got '", value,
                   "'; expected an integer from ", lo, " to ", hi);
    return v;
}

int parse_verbose(const std::string &v) {
    static const std::vector<std::pair<std::string, int>> names = {
        {"debug", 10}, {"info", 20}, {"warning", 30}, {"error", 40}, {"critical", 50}};
    std::string lower = v;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    for (const auto &[n, level] : names)
        if (lower == n)
            return level;
    if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos && v.size() <= 3)
        return std::stoi(v);
    user_error("NHC_EARG002", "option --verbose got '", v,
               "'; expected debug|info|warning|error|critical or a number such as 35");
}

// LLVM 14's reset does not restore options without a cl::init default, so a value is only
// trusted when the option occurred in this parse.
template <typename T>
T given_or(const cl::opt<T> &opt, T fallback) {
    return opt.getNumOccurrences() ? T(opt) : fallback;
}

std::string resolve_cache_dir(const CompileFlags &f) {
    bool no_cache = given_or(f.no_cache, false);
    if (f.cache_dir.getNumOccurrences()) {
        if (no_cache)
            user_error("NHC_EARG002", "options --cache-dir and --no-cache contradict each other; "
                                      "expected one of them");
        if (f.cache_dir.empty())
            user_error("NHC_EARG002", "option --cache-dir got an empty path; expected a folder");
        return f.cache_dir;
    }
    return no_cache ? "" : default_cache_dir();
}

CompileOptions resolve(const CompileFlags &f) {
    CompileOptions o;
    o.model_path = given_or<std::string>(f.model, "");
    if (o.model_path.empty())
        user_error("NHC_EARG010",
                   "no model file given; usage: neuron-halide-cc compile <model.onnx> "
                   "[options] (see --help)");
    if (f.framework.getNumOccurrences()) {
        std::string fw = f.framework;
        std::transform(fw.begin(), fw.end(), fw.begin(), ::toupper);
        o.framework = one_of("framework", fw, {"ONNX"});
    }
    if (f.target.getNumOccurrences())
        o.target = one_of("target", f.target, allowed_targets());
    // -O<N> and --optlevel N are one option: the right-most occurrence wins.
    bool use_short =
        f.olevel.getNumOccurrences() &&
        (!f.optlevel.getNumOccurrences() || f.olevel.getPosition() > f.optlevel.getPosition());
    if (use_short)
        o.optlevel = int_in_range("-O", f.olevel, 1, 3);
    else if (f.optlevel.getNumOccurrences())
        o.optlevel = int_in_range("--optlevel", f.optlevel, 1, 3);
    if (f.model_type.getNumOccurrences())
        o.model_type =
            one_of("model-type", f.model_type, {"generic", "transformer", "unet-inference"});
    if (f.auto_cast.getNumOccurrences())
        o.auto_cast = one_of("auto-cast", f.auto_cast, {"none", "matmult", "all"});
    if (f.auto_cast_type.getNumOccurrences())
        o.auto_cast_type =
            one_of("auto-cast-type", f.auto_cast_type, {"bf16", "fp16", "tf32", "fp8_e4m3"});
    if (f.fallback.getNumOccurrences())
        o.fallback = one_of("fallback", f.fallback, {"host", "none"});
    o.enable_saturate_infinity = given_or(f.saturate_inf, false);
    o.enable_fast_loading_neuron_binaries = given_or(f.fast_loading, false);
    if (f.disable_mpa.getNumOccurrences() &&
        (!f.enable_mpa.getNumOccurrences() ||
         f.disable_mpa.getPosition() > f.enable_mpa.getPosition()))
        o.mixed_precision_accumulation = !f.disable_mpa;
    else if (f.enable_mpa.getNumOccurrences())
        o.mixed_precision_accumulation = f.enable_mpa;
    // neuronx-cc's default on trn2 is 2; a NEFF of ours runs on one NeuronCore, so ours is 1
    // everywhere and 2 is refused when compiling (check_implemented), not recorded and ignored.
    o.logical_nc_config = 1;
    if (f.lnc.getNumOccurrences()) {
        o.logical_nc_config = int_in_range("--logical-nc-config", f.lnc, 1, 2);
        if (o.logical_nc_config == 2 && o.target != "trn2")
            user_error("NHC_EARG001",
                       "--logical-nc-config 2 is only supported on trn2, but the "
                       "target is ",
                       o.target, "; use --logical-nc-config 1 (like NCC_EARG001)");
    }
    if (f.output.getNumOccurrences()) {
        if (f.output.empty())
            user_error("NHC_EARG002", "option --output got an empty path; expected a file name");
        o.output = f.output;
    }
    if (f.logfile.getNumOccurrences())
        o.logfile = f.logfile;
    if (f.verbose.getNumOccurrences())
        o.verbose = parse_verbose(f.verbose);
    if (f.jobs.getNumOccurrences())
        o.num_parallel_jobs = int_in_range("--num-parallel-jobs", f.jobs, 1, 1024);
    for (const std::string &spec : f.input_shapes)
        o.input_shapes.push_back(parse_input_shape(spec));
    for (const std::string &spec : f.frozen_inputs)
        o.frozen_inputs.push_back(parse_frozen_input(spec));
    o.schedule_file = given_or<std::string>(f.schedule, "");
    o.dump_schedules = given_or<std::string>(f.dump_schedules, "");
    o.dump_graph = given_or(f.dump_graph, false);
    o.accuracy_report = given_or(f.accuracy_report, false);
    o.tuning_db = given_or<std::string>(f.tuning_db, "");
    o.cache_dir = resolve_cache_dir(f);
    if (f.tuning_db.getNumOccurrences() && o.tuning_db.empty())
        user_error("NHC_EARG002", "option --tuning-db got an empty path; expected a file name");
    return o;
}

bool is_subcommand(const char *arg) {
    return !std::strcmp(arg, "compile") || !std::strcmp(arg, "list-operators");
}

} // namespace

int parallel_jobs(const CompileOptions &options) {
    constexpr int kDefaultMaxJobs = 8;
    return options.num_parallel_jobs > 0
               ? options.num_parallel_jobs
               : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1,
                            kDefaultMaxJobs);
}

const std::vector<std::string> &allowed_targets() {
    static const std::vector<std::string> t = {"inf2", "trn1", "trn1n", "trn2"};
    return t;
}

std::string version_text() {
    std::string s;
    s += "neuron-halide-cc version " NHC_VERSION "\n";
    s += "Halide version " NHC_HALIDE_VERSION "\n";
    s += "LLVM version " LLVM_VERSION_STRING "\n";
    s += std::string("ONNX version ") + onnx::LAST_RELEASE_VERSION + "\n";
    s += "protobuf version " + google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION) +
         "\n";
    s += "NEFF version 2.0\n";
    return s;
}

ParsedCommandLine parse_command_line(int argc, const char *const *argv) {
    CompileFlags &f = flags();
    (void)list_ops_cmd();
    // LLVM 14 resets named options here but not positional ones.
    cl::ResetAllOptionOccurrences();
    f.model.reset();
    f.input_shapes.clear();
    f.frozen_inputs.clear();
    cl::HideUnrelatedOptions(category(), compile_cmd());
    cl::HideUnrelatedOptions(category());
    cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << version_text(); });

    // `neuron-halide-cc model.onnx -O3` means `neuron-halide-cc compile model.onnx -O3`.
    std::vector<const char *> args(argv, argv + argc);
    if (argc >= 2 && argv[1][0] != '-' && !is_subcommand(argv[1]))
        args.insert(args.begin() + 1, "compile");
    if (args.size() < 2)
        user_error("NHC_EARG010",
                   "no command or model given; usage: neuron-halide-cc "
                   "<model.onnx> [options], neuron-halide-cc compile <model.onnx> [options], or "
                   "neuron-halide-cc list-operators (see --help)");

    std::string errors;
    llvm::raw_string_ostream err_stream(errors);
    if (!cl::ParseCommandLineOptions(
            static_cast<int>(args.size()), args.data(),
            "neuron-halide-cc: ONNX to NEFF compiler for AWS NeuronCores\n", &err_stream)) {
        err_stream.flush();
        while (!errors.empty() && errors.back() == '\n')
            errors.pop_back();
        user_error("NHC_EARG003", "invalid command line: ", errors);
    }
    ParsedCommandLine out;
    if (list_ops_cmd())
        out.command = Command::ListOperators;
    else if (compile_cmd()) {
        out.command = Command::Compile;
        out.options = resolve(f);
    } else {
        user_error("NHC_EARG010",
                   "no command given; expected compile, list-operators or a model file");
    }
    return out;
}

} // namespace nhc
