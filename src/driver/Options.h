#ifndef NHC_DRIVER_OPTIONS_H
#define NHC_DRIVER_OPTIONS_H

/** \file
 * The command line of `neuron-halide-cc`, with neuronx-cc's option names, values and defaults
 * (../shared/reference/neuron-compiler.md §1.2) plus our own (--input-shape, --schedule,
 * --dump-graph). Parsing uses LLVM's cl library (subcommands `compile` and `list-operators`);
 * a model path as the first argument means `compile`. A repeated option takes its right-most
 * value; -O<N> and --optlevel, and --enable/--disable-mixed-precision-accumulation, are resolved
 * by position. Every rejection is a UserError with an NHC_EARG code.
 */

#include "frontend/FreezeInputs.h"
#include "frontend/InputShapes.h"

#include <map>
#include <string>
#include <vector>

namespace nhc {

namespace sched {
class ScheduleScript;
struct SchedulePlan;
} // namespace sched
namespace autosched {
class TuningDb;
}

struct CompileOptions {
    std::string model_path;
    std::string framework = "ONNX";
    std::string target = "trn1";
    int optlevel = 2;
    std::string model_type = "generic";
    std::string auto_cast = "none";
    std::string auto_cast_type = "bf16";
    /** host: nodes the device cannot run run on the host (driver/HostPartition.h); none: they
     *  are refused (NHC_EUOC002). */
    std::string fallback = "host";
    bool enable_saturate_infinity = false;
    bool enable_fast_loading_neuron_binaries = false;
    bool mixed_precision_accumulation = true; ///< on by default since neuronx-cc 2.27
    int logical_nc_config = 1;                ///< 2 (neuronx-cc's trn2 default) is refused
    std::string output = "file.neff";
    std::string logfile = "log-neuron-cc.txt";
    int verbose = 30; ///< Python logging level; "warning"
    /** Threads that measure the autoscheduler's candidates and compress the NEFF (neither
     *  changes the NEFF's bytes); 0: the machine's, at most 8 (parallel_jobs). */
    int num_parallel_jobs = 0;
    std::vector<InputShapeOverride> input_shapes;
    std::vector<FrozenInput> frozen_inputs; ///< --freeze-input
    std::string schedule_file;
    const sched::ScheduleScript *schedule = nullptr; ///< the parsed --schedule file, if any
    std::string dump_schedules; ///< --dump-schedules: where to write the schedules used
    /** Where code generation records the schedule of every group it schedules, or nullptr. */
    sched::ScheduleScript *used_schedules = nullptr;
    bool dump_graph = false;
    /** The compile cache's folder (driver/CompileCache.h): --cache-dir, else the environment's
     *  (default_cache_dir); "" with --no-cache, and in compiles made by code rather than the
     *  command line. */
    std::string cache_dir;
    /** --accuracy-report: after compiling, compile again without auto-cast, run both on the
     *  same inputs and print each output's error (driver/AccuracyReport.h). */
    bool accuracy_report = false;
    /** --tuning-db: compile with the database's best plans (neuron-halide-tune's database when
     *  tune_trials > 0). */
    std::string tuning_db;
    /** neuron-halide-tune: measure up to this many candidates per workload, recording each in
     *  tuning_db (0: compile only). */
    int tune_trials = 0;
    autosched::TuningDb *tuning = nullptr; ///< the opened tuning_db, if any
    /** Plans decided before code generation, by workload text (driver/WholeProgramCheck.h). */
    const std::map<std::string, sched::SchedulePlan> *fixed_plans = nullptr;
    /** Where code generation reports the plan of every workload that had a choice, or null. */
    std::map<std::string, sched::SchedulePlan> *chosen_plans = nullptr;
    /** Where it reports, by workload text, how much faster each searched workload's choice
     *  was than its default between its neighbours (autosched::Autoscheduler::window_gains). */
    std::map<std::string, double> *window_gains = nullptr;
    /** SearchOptions::whole_model_moves: -O3's whole-program check turns them off if the
     *  program is faster without. */
    bool whole_model_moves = true;
    /** Weights without their bytes: a program only timed, never run on values. */
    bool without_weight_bytes = false;
    /** A group of the workload and plan of one lowered before takes that lowering
     *  (driver/LoweringCache.h); off in tests that compare against lowering every group. */
    bool reuse_lowered_groups = true;
    /** At -O2 and -O3, tensors stay in SBUF between groups where they can
     *  (neff/ForwardStores.h); -O3's whole-program check turns it off if the program is faster
     *  without (WholeProgramCheck.h), and tests to compare. */
    bool keep_resident = true;
    /** Loads broadcast over the partitions built on the PE (codegen::SelectOptions::
     *  broadcast_on_pe); -O3's whole-program check turns it on if the program is faster so. */
    bool broadcast_on_pe = false;
    /** With keep_resident, a forwarded tile is read where it is rather than copied where possible
     *  (neff/ForwardStores.h); -O3's whole-program check turns it off if the program is faster
     *  without. */
    bool read_in_place = true;
    /** Where code generation reports how many loads stayed on chip that way, or null. */
    int *loads_kept_resident = nullptr;
    /** Weights prefetched (-O3's whole-program check): per group in compile order, the SBUF bytes
     *  per partition the group before it keeps out of its own allocation for the group's
     *  stages that live as long as it does (codegen::SelectOptions::keep_for_next); null: none. */
    const std::vector<int64_t> *prefetch_bytes = nullptr;
    /** Where code generation reports those bytes per group (what prefetch_bytes takes), or null. */
    std::vector<int64_t> *group_lifetime_bytes = nullptr;
};

enum class Command { Compile, ListOperators };

struct ParsedCommandLine {
    Command command = Command::Compile;
    CompileOptions options; ///< for Command::Compile
};

/** Parses argv. May be called more than once in a process (tests): it resets the parser first.
 *  --help and --version print and exit the process, as in every LLVM tool. */
ParsedCommandLine parse_command_line(int argc, const char *const *argv);

/** The threads --num-parallel-jobs gives (CompileOptions::num_parallel_jobs): as asked, else
 *  the machine's, at most 8 (neuronx-cc's parallel jobs defaulted to 8, neuron-compiler.md
 *  L76-77). */
int parallel_jobs(const CompileOptions &options);

/** Lines printed by --version. */
std::string version_text();

/** Allowed values, for messages and docs. */
const std::vector<std::string> &allowed_targets();

} // namespace nhc

#endif
