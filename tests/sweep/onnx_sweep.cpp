// The libonnx-testdata sweep: every model.onnx under the given folders must either load into the
// Graph IR or be rejected with a coded user error; none may crash or hang. Each model runs in a
// forked child so that a crash or a hang is observed rather than suffered.
//
// usage: nhc_onnx_sweep [--timeout SECONDS] [--verbose] DIR...
// Prints per-folder counts and the rejection codes; exits 1 if any model crashed or hung.

#include "frontend/Frontend.h"
#include "support/Error.h"
#include "support/Log.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

enum Outcome { Loaded, Rejected, Crashed, Hung };

struct Result {
    Outcome outcome;
    std::string detail; // the code, or what went wrong
};

constexpr int kExitLoaded = 0, kExitRejected = 10, kExitInternal = 20;

[[noreturn]] void child(const std::string &model, int fd, unsigned timeout) {
    alarm(timeout);
    nhc::Logger::instance().set_console_level(100);
    std::string msg;
    int code = kExitLoaded;
    try {
        nhc::run_frontend(model, {});
    } catch (const nhc::UserError &e) {
        msg = e.code();
        code = kExitRejected;
    } catch (const std::exception &e) {
        msg = std::string("internal: ") + e.what();
        code = kExitInternal;
    }
    msg = msg.substr(0, 400);
    ssize_t ignored = write(fd, msg.data(), msg.size());
    (void)ignored;
    _exit(code);
}

Result run_one(const std::string &model, unsigned timeout) {
    int fds[2];
    if (pipe(fds) != 0)
        return {Crashed, "pipe failed"};
    std::cout.flush();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(model, fds[1], timeout);
    }
    close(fds[1]);
    std::string msg;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        msg.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGALRM ? Result{Hung, "timed out"}
                                           : Result{Crashed, strsignal(WTERMSIG(status))};
    int code = WEXITSTATUS(status);
    if (code == kExitLoaded)
        return {Loaded, ""};
    if (code == kExitRejected)
        return {Rejected, msg};
    return {Crashed, msg.empty() ? "exit " + std::to_string(code) : msg};
}

} // namespace

int main(int argc, char **argv) {
    unsigned timeout = 120;
    bool verbose = false;
    std::vector<std::string> dirs;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--timeout" && i + 1 < argc)
            timeout = static_cast<unsigned>(std::stoul(argv[++i]));
        else if (a == "--verbose")
            verbose = true;
        else
            dirs.push_back(a);
    }
    int total_bad = 0, total = 0;
    std::map<std::string, int> codes;
    std::cout
        << "folder                                   models  loaded  rejected  crashed  hung\n";
    for (const std::string &dir : dirs) {
        if (!fs::is_directory(dir)) {
            std::cerr << "sweep folder '" << dir << "' does not exist (install libonnx-testdata)\n";
            return 2;
        }
        std::vector<std::string> models;
        for (const auto &e : fs::recursive_directory_iterator(dir))
            if (e.path().filename() == "model.onnx")
                models.push_back(e.path().string());
        std::sort(models.begin(), models.end());
        int count[4] = {0, 0, 0, 0};
        for (const std::string &m : models) {
            Result r = run_one(m, timeout);
            count[r.outcome]++;
            if (r.outcome == Rejected)
                codes[r.detail]++;
            if (r.outcome >= Crashed || verbose)
                std::cout << (r.outcome >= Crashed ? "  FAIL " : "  ") << m << ": "
                          << (r.outcome == Loaded ? "loaded" : r.detail) << "\n";
        }
        total += static_cast<int>(models.size());
        total_bad += count[Crashed] + count[Hung];
        printf("%-40s %6zu %7d %9d %8d %5d\n", dir.c_str(), models.size(), count[Loaded],
               count[Rejected], count[Crashed], count[Hung]);
        std::fflush(stdout);
    }
    std::cout << "rejections by code:";
    for (const auto &[code, n] : codes)
        std::cout << " " << code << "=" << n;
    std::cout << "\n" << total << " models, " << total_bad << " crashed or hung\n";
    return total_bad == 0 ? 0 : 1;
}
