#ifndef NHC_SUPPORT_LOG_H
#define NHC_SUPPORT_LOG_H

/** \file
 * Logging and progress for the command-line tools, in the manner of neuronx-cc
 * (../shared/reference/neuron-compiler.md §1.2 `--verbose`, §1.7): info/debug go to stdout,
 * warning and above to stderr; every message also goes to the log file (when one is open) as
 * `<timestamp> <LEVEL> <pid> [<component>]: message`. Levels use Python's numbers (debug 10,
 * info 20, warning 30, error 40, critical 50) because frameworks pass numeric values such as 35.
 */

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace nhc {

enum class LogLevel { Debug = 10, Info = 20, Warning = 30, Error = 40, Critical = 50 };

const char *log_level_name(LogLevel level);

class Logger {
public:
    /** The process-wide logger used by the tools. */
    static Logger &instance();

    /** Messages below `console_level` are not printed (they still reach the log file). */
    void set_console_level(int console_level) { console_level_ = console_level; }
    int console_level() const { return console_level_; }
    void set_component(std::string component) { component_ = std::move(component); }
    /** Opens (truncates) the log file; returns false if it cannot be written. */
    bool open_logfile(const std::string &path);
    void close_logfile();

    void log(LogLevel level, const std::string &message);
    /** Progress output on stdout that is not a log message (the neuronx-cc style dots). */
    void progress(const std::string &text);

private:
    int console_level_ = static_cast<int>(LogLevel::Warning);
    std::string component_ = "neuron-halide-cc";
    std::ofstream logfile_;
    bool progress_open_ = false; ///< dots printed without a newline yet
};

template <typename... Args>
std::string concat(const Args &...args) {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
}

template <typename... Args>
void log_debug(const Args &...args) {
    Logger::instance().log(LogLevel::Debug, concat(args...));
}
template <typename... Args>
void log_info(const Args &...args) {
    Logger::instance().log(LogLevel::Info, concat(args...));
}
template <typename... Args>
void log_warning(const Args &...args) {
    Logger::instance().log(LogLevel::Warning, concat(args...));
}

/** Marks one named step of a pipeline: logs its start at debug level and, when it ends, its
 *  wall time at info level (a line per stage), or a progress dot when info is not shown. */
class TimedStep {
public:
    explicit TimedStep(std::string name);
    ~TimedStep();
    TimedStep(const TimedStep &) = delete;
    TimedStep &operator=(const TimedStep &) = delete;
    double elapsed_ms() const;

private:
    std::string name_;
    std::chrono::steady_clock::time_point start_;
};

/** Progress of a long step made of `total` like items (code generation's groups, a NEFF's bytes):
 *  at info level, a line at each tenth done with the elapsed time and an estimate of the time
 *  left, extrapolated from the share done so far. Silent below info. Counts are shown divided by
 *  `unit_size` (1e6 for "MB"). */
class ProgressMeter {
public:
    ProgressMeter(std::string what, int64_t total, std::string unit, double unit_size = 1);
    /** Marks one more item done. */
    void advance() { reach(done_ + 1); }
    /** Marks `done` items done in all. */
    void reach(int64_t done);

private:
    std::string what_, unit_;
    int64_t total_, done_ = 0;
    double unit_size_;
    int reported_tenths_ = 0;
    std::chrono::steady_clock::time_point start_;
};

} // namespace nhc

#endif
