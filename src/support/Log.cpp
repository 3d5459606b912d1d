#include "support/Log.h"

#include <ctime>
#include <iomanip>
#include <iostream>
#include <unistd.h>

namespace nhc {

const char *log_level_name(LogLevel level) {
    switch (level) {
    case LogLevel::Debug:
        return "DEBUG";
    case LogLevel::Info:
        return "INFO";
    case LogLevel::Warning:
        return "WARNING";
    case LogLevel::Error:
        return "ERROR";
    case LogLevel::Critical:
        return "CRITICAL";
    }
    return "?";
}

Logger &Logger::instance() {
    static Logger logger;
    return logger;
}

bool Logger::open_logfile(const std::string &path) {
    logfile_.close();
    logfile_.open(path, std::ios::out | std::ios::trunc);
    return logfile_.good();
}

void Logger::close_logfile() {
    logfile_.close();
}

static std::string timestamp() {
    auto now = std::chrono::system_clock::now();
    std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm_utc{};
    gmtime_r(&t, &tm_utc);
    std::ostringstream os;
    os << std::put_time(&tm_utc, "%Y-%m-%dT%H:%M:%SZ");
    return os.str();
}

void Logger::log(LogLevel level, const std::string &message) {
    if (logfile_.is_open()) {
        logfile_ << timestamp() << " " << log_level_name(level) << " " << getpid() << " ["
                 << component_ << "]: " << message << "\n";
        logfile_.flush();
    }
    if (static_cast<int>(level) < console_level_)
        return;
    if (progress_open_) {
        std::cout << std::endl;
        progress_open_ = false;
    }
    if (level >= LogLevel::Warning)
        std::cerr << log_level_name(level) << ": " << message << std::endl;
    else
        std::cout << message << std::endl;
}

void Logger::progress(const std::string &text) {
    if (console_level_ > static_cast<int>(LogLevel::Warning))
        return; // --verbose error/critical: quiet
    std::cout << text << std::flush;
    progress_open_ = true;
}

TimedStep::TimedStep(std::string name)
    : name_(std::move(name)), start_(std::chrono::steady_clock::now()) {
    log_debug("begin ", name_);
}

double TimedStep::elapsed_ms() const {
    auto d = std::chrono::steady_clock::now() - start_;
    return std::chrono::duration<double, std::milli>(d).count();
}

TimedStep::~TimedStep() {
    Logger &logger = Logger::instance();
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << "  " << std::left << std::setw(34) << name_ << " "
       << std::right << std::setw(9) << elapsed_ms() << " ms";
    if (logger.console_level() <= static_cast<int>(LogLevel::Info))
        logger.log(LogLevel::Info, os.str());
    else {
        logger.log(LogLevel::Debug, os.str()); // reaches the log file only
        logger.progress(".");
    }
}

ProgressMeter::ProgressMeter(std::string what, int64_t total, std::string unit, double unit_size)
    : what_(std::move(what)), unit_(std::move(unit)), total_(total), unit_size_(unit_size),
      start_(std::chrono::steady_clock::now()) {}

void ProgressMeter::reach(int64_t done) {
    done_ = done;
    int tenths = total_ > 0 ? static_cast<int>(done_ * 10 / total_) : 10;
    if (tenths <= reported_tenths_ || done_ <= 0)
        return;
    reported_tenths_ = tenths;
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double left = elapsed * static_cast<double>(total_ - done_) / static_cast<double>(done_);
    std::ostringstream os;
    os << std::fixed << std::setprecision(unit_size_ == 1 ? 0 : 1) << what_ << ": " << tenths * 10
       << "% (" << done_ / unit_size_ << " of " << total_ / unit_size_ << " " << unit_ << ")"
       << std::setprecision(1) << ", " << elapsed << " s elapsed";
    if (done_ < total_)
        os << ", about " << left << " s left";
    log_info(os.str());
}

} // namespace nhc
