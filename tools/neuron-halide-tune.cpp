// neuron-halide-tune: an autoscheduler tuning session (issue 16). Compiles the model as
// neuron-halide-cc does, measuring up to --trials candidate schedules of every unique workload on
// the timing simulator and recording each in the tuning database (--db, SQLite); a later
// `neuron-halide-cc --tuning-db FILE` compiles with the best recorded ones.
//
//   neuron-halide-tune <model.onnx> --db tune.db [--trials N] [--jobs J] [neuron-halide-cc options]
//
// A session that is killed loses no committed record, and a new session on the same database
// measures only the candidates not recorded yet. Several sessions may share one database.
// Exit status as neuron-halide-cc's: 0, 1 on a user error, 70 on an internal error.

#include "driver/Compile.h"
#include "driver/Options.h"
#include "driver/ToolMain.h"
#include "support/Error.h"
#include "support/MallocTunables.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr int kInfoLevel = 20;     // Python logging's INFO, as --verbose info
constexpr int kDefaultTrials = 16; // per workload: every -O3 matmul candidate but one

struct TuneFlags {
    std::string db;
    int trials = kDefaultTrials;
    int jobs = 0; ///< 0: the compiler's default (parallel_jobs)
};

int positive_int(const std::string &option, const std::string &value) {
    char *end = nullptr;
    long v = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end || v < 1 || v > 100000)
        nhc::user_error("NHC_EARG002", "option ", option, " got '", value,
                        "'; expected a whole number from 1 to 100000");
    return static_cast<int>(v);
}

/** Takes the tuner's own options out of argv (`--db F`, `--db=F`, `--trials N`, `--jobs J`);
 *  the rest are neuron-halide-cc's. */
TuneFlags take_tune_flags(int argc, char **argv, std::vector<const char *> &rest) {
    TuneFlags f;
    rest.push_back(argv[0]);
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-help" || arg == "-h") {
            std::cout << "USAGE: neuron-halide-tune <model.onnx> --db FILE [--trials N] "
                         "[neuron-halide-cc compile options]\n\n"
                         "  --db FILE    tuning database (SQLite), created if missing\n"
                         "  --trials N   candidates measured per workload (default "
                      << kDefaultTrials
                      << ")\n"
                         "  --jobs J     candidates measured at once (default: the machine's "
                         "threads, at most 8;\n"
                         "               the records are the same for any J)\n\n"
                         "Compile options: neuron-halide-cc compile --help\n";
            std::exit(0);
        }
        std::string name = arg.substr(0, arg.find('='));
        if (name != "--db" && name != "--trials" && name != "--jobs") {
            rest.push_back(argv[i]);
            continue;
        }
        std::string value;
        if (arg.find('=') != std::string::npos)
            value = arg.substr(arg.find('=') + 1);
        else if (i + 1 < argc)
            value = argv[++i];
        else
            nhc::user_error("NHC_EARG003", "option ", name, " needs a value");
        if (name == "--db")
            f.db = value;
        else if (name == "--trials")
            f.trials = positive_int(name, value);
        else
            f.jobs = positive_int(name, value);
    }
    if (f.db.empty())
        nhc::user_error("NHC_EARG017", "no tuning database given; usage: neuron-halide-tune "
                                       "<model.onnx> --db FILE [--trials N] [compile options]");
    return f;
}

} // namespace

int main(int argc, char **argv) {
    nhc::reexec_with_malloc_tunables(argv);
    return nhc::run_compiler_tool("Tuning", [&](bool &tuning) {
        std::vector<const char *> rest;
        TuneFlags tf = take_tune_flags(argc, argv, rest);
        nhc::ParsedCommandLine cmd =
            nhc::parse_command_line(static_cast<int>(rest.size()), rest.data());
        if (cmd.command != nhc::Command::Compile)
            nhc::user_error("NHC_EARG003",
                            "neuron-halide-tune takes a model to tune, not a command");
        nhc::CompileOptions o = cmd.options;
        // A tuner measures its candidates every time: it takes nothing from the compile cache
        // and stores nothing in it (what --no-cache says, so that is accepted).
        for (const char *arg : rest)
            if (std::string(arg).rfind("--cache-dir", 0) == 0)
                nhc::user_error("NHC_EARG003", "neuron-halide-tune does not take --cache-dir: a "
                                               "tuner measures every time and uses no cache");
        o.cache_dir.clear();
        // A session is long: its progress (with the time left) shows unless --verbose says.
        bool verbose_given = false;
        for (const char *arg : rest)
            verbose_given |= std::string(arg).rfind("--verbose", 0) == 0;
        if (!verbose_given)
            o.verbose = kInfoLevel;
        o.tuning_db = tf.db;
        o.tune_trials = tf.trials;
        if (tf.jobs > 0)
            o.num_parallel_jobs = tf.jobs;
        nhc::start_logging(o);
        tuning = true;
        nhc::compile_model(o);
        return 0;
    });
}
