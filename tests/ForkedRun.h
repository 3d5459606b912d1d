#ifndef NHC_TESTS_FORKEDRUN_H
#define NHC_TESTS_FORKEDRUN_H

// Runs one piece of work in a forked child with a time limit, so that a crash or a hang is
// observed rather than suffered (the libonnx-testdata sweep and the conformance runner).

#include <csignal>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace nhc::test {

struct ForkedResult {
    enum Kind { Exited, Crashed, TimedOut } kind = Crashed;
    int code = 0;        ///< the work's code when it exited
    std::string message; ///< the work's message, or how the child died
};

/** `work` returns (code, message); it must not throw. Messages are cut to 400 characters. */
inline ForkedResult run_forked(const std::function<std::pair<int, std::string>()> &work,
                               unsigned timeout_seconds) {
    int fds[2];
    if (pipe(fds) != 0)
        return {ForkedResult::Crashed, 0, "pipe failed"};
    std::cout.flush();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(timeout_seconds);
        std::pair<int, std::string> r = work();
        std::string msg = std::to_string(r.first) + " " + r.second.substr(0, 400);
        ssize_t ignored = write(fds[1], msg.data(), msg.size());
        (void)ignored;
        _exit(0);
    }
    close(fds[1]);
    std::string msg;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
        msg.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGALRM
                   ? ForkedResult{ForkedResult::TimedOut, 0, "timed out"}
                   : ForkedResult{ForkedResult::Crashed, 0, strsignal(WTERMSIG(status))};
    if (msg.empty())
        return {ForkedResult::Crashed, 0,
                "no result (exit " + std::to_string(WEXITSTATUS(status)) + ")"};
    size_t space = msg.find(' ');
    return {ForkedResult::Exited, std::stoi(msg.substr(0, space)), msg.substr(space + 1)};
}

} // namespace nhc::test

#endif
