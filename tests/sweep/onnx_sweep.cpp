// The libonnx-testdata sweep: every model.onnx under the given folders must either load into the
// Graph IR or be rejected with a coded user error; none may crash or hang. Each model runs in a
// forked child so that a crash or a hang is observed rather than suffered.
//
// usage: nhc_onnx_sweep [--timeout SECONDS] [--verbose] DIR...
// Prints per-folder counts and the rejection codes; exits 1 if any model crashed or hung.

#include "../ForkedRun.h"
#include "frontend/Frontend.h"
#include "support/Error.h"
#include "support/Log.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <vector>

namespace fs = std::filesystem;

namespace {

enum Outcome { Loaded, Rejected, Crashed, Hung };

struct Result {
    Outcome outcome;
    std::string detail; // the code, or what went wrong
};

constexpr int kLoaded = 0, kRejected = 10, kInternal = 20;

Result run_one(const std::string &model, unsigned timeout) {
    nhc::test::ForkedResult r = nhc::test::run_forked(
        [&]() -> std::pair<int, std::string> {
            nhc::Logger::instance().set_console_level(100);
            try {
                nhc::run_frontend(model, {});
            } catch (const nhc::UserError &e) {
                return {kRejected, e.code()};
            } catch (const std::exception &e) {
                return {kInternal, std::string("internal: ") + e.what()};
            }
            return {kLoaded, ""};
        },
        timeout);
    if (r.kind == nhc::test::ForkedResult::TimedOut)
        return {Hung, r.message};
    if (r.kind == nhc::test::ForkedResult::Crashed || r.code == kInternal)
        return {Crashed, r.message};
    return r.code == kLoaded ? Result{Loaded, ""} : Result{Rejected, r.message};
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
