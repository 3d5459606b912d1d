// The schedule fuzzer (tests/schedules/ScheduleFuzz.h) at scale: `--variants N` mutated default
// schedules, spread round-robin over the operator families and `--cases` shapes per family, each
// compiled, run on the simulator with race detection and compared with the host reference in a
// forked child. Prints every bug (case, edits, script, what happened) and the counts per family:
// matched, refused (per code), wrong, runtime-refused, internal, crashed, timed-out. A variant is
// replayed alone with `--only I` (same --seed and --cases). Exit status 1 if any variant is a bug.
//
//   build/bench/schedule_fuzz --variants 2400 --seed 1

#include "ScheduleFuzz.h"

#include "driver/Codegen.h"
#include "support/Log.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace nhc;

namespace {

struct Args {
    int variants = 240, cases = 3, only = -1, edits = 3;
    uint64_t seed = 1;
    unsigned timeout = 300;
    std::vector<std::string> families;
    bool show_all = false, show_base = false;
    std::string script; ///< a script file to run on the first case of the first family
};

std::vector<std::string> split_commas(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string part; std::getline(ss, part, ',');)
        out.push_back(part);
    return out;
}

Args parse(int argc, char **argv) {
    Args a;
    a.families = fuzz::families();
    for (int i = 1; i < argc; i++) {
        std::string k = argv[i];
        auto value = [&] {
            if (i + 1 >= argc) {
                std::cerr << "missing value after " << k << "\n";
                std::exit(2);
            }
            return std::string(argv[++i]);
        };
        if (k == "--variants")
            a.variants = std::stoi(value());
        else if (k == "--seed")
            a.seed = std::stoull(value());
        else if (k == "--cases")
            a.cases = std::stoi(value());
        else if (k == "--edits")
            a.edits = std::stoi(value());
        else if (k == "--only")
            a.only = std::stoi(value());
        else if (k == "--timeout")
            a.timeout = static_cast<unsigned>(std::stoi(value()));
        else if (k == "--families")
            a.families = split_commas(value());
        else if (k == "--show-all")
            a.show_all = true;
        else if (k == "--show-base")
            a.show_base = true;
        else if (k == "--script")
            a.script = value();
        else {
            std::cerr << "usage: schedule_fuzz [--variants N] [--seed S] [--cases C] [--only I] "
                         "[--edits E] [--timeout SECONDS] [--families a,b,...] [--show-all] "
                         "[--show-base] [--script FILE [--only I]]\n";
            std::exit(2);
        }
    }
    return a;
}

void report(int i, const fuzz::FuzzCase &c, const fuzz::Variant &v, const fuzz::Result &r) {
    std::cout << "--- variant " << i << ": " << c.family << " " << c.describe << ": "
              << fuzz::outcome_name(r.outcome) << (r.code.empty() ? "" : " " + r.code) << "\n";
    for (const std::string &e : v.edits)
        std::cout << "  edit: " << e << "\n";
    std::cout << v.script << "  => " << r.message.substr(0, 600) << "\n";
}

} // namespace

int main(int argc, char **argv) {
    Args a = parse(argc, argv);
    Logger::instance().set_console_level(100);
    register_codegen_operators();
    auto start = std::chrono::steady_clock::now();
    std::vector<std::vector<fuzz::FuzzCase>> cases(a.families.size());
    for (size_t f = 0; f < a.families.size(); f++)
        for (int k = 0; k < a.cases; k++) {
            fuzz::Rng rng(a.seed * 1000003u + f * 131u + static_cast<uint64_t>(k));
            cases[f].push_back(fuzz::make_case(a.families[f], rng));
        }
    if (a.show_base)
        for (const auto &per_family : cases)
            for (const fuzz::FuzzCase &c : per_family)
                std::cout << "# " << c.family << ": " << c.describe << "\n"
                          << c.base_script << "\n";
    int n = static_cast<int>(a.families.size());
    if (!a.script.empty()) { // a hand-written variant, on the case of variant --only (or 0)
        std::ifstream in(a.script);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        int i = std::max(a.only, 0);
        const fuzz::FuzzCase &c = cases[size_t(i % n)][size_t(i / n % a.cases)];
        fuzz::Result r = fuzz::run_variant(c, text);
        report(i, c, {text, {}}, r);
        return fuzz::is_bug(r.outcome) ? 1 : 0;
    }
    fuzz::Tally tally;
    for (int i = 0; i < a.variants; i++) {
        if (a.only >= 0 && i != a.only)
            continue;
        const fuzz::FuzzCase &c = cases[size_t(i % n)][size_t(i / n % a.cases)];
        fuzz::Rng rng(a.seed * 7919u + static_cast<uint64_t>(i));
        fuzz::Variant v = fuzz::mutate(c, rng, a.edits);
        fuzz::Result r = a.only >= 0 ? fuzz::run_variant(c, v.script)
                                     : fuzz::run_variant_forked(c, v.script, a.timeout);
        tally.add(c.family, r);
        if (fuzz::is_bug(r.outcome) || a.show_all || a.only >= 0)
            report(i, c, v, r);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "\nschedule_fuzz --variants " << a.variants << " --seed " << a.seed << " --cases "
              << a.cases << ": " << tally.bugs() << " bug(s), " << s << " s\n"
              << tally.to_string();
    return tally.bugs() == 0 ? 0 : 1;
}
