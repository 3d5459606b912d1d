// The schedule fuzzer's deterministic subset (ScheduleFuzz.h; bench/schedule_fuzz runs
// thousands): per operator family, mutated default schedules of two shapes, each compiled, run on
// the simulator with race detection and compared with the host reference in a forked child. Every
// variant must match or be refused with a coded error at compile time; the mutations must reach
// both outcomes in every family (a fuzzer whose variants are all refused tests nothing).

#include "ScheduleFuzz.h"

#include "driver/Codegen.h"
#include "support/Log.h"

#include <doctest/doctest.h>
#include <iostream>

using namespace nhc;

namespace {

constexpr int kCasesPerFamily = 2, kVariantsPerFamily = 40;
constexpr uint64_t kSeed = 14; // issue 14
constexpr unsigned kTimeoutSeconds = 60;

} // namespace

TEST_CASE("mutated schedules of every family compile and match, or are refused with a code") {
    Logger::instance().set_console_level(100);
    register_codegen_operators();
    fuzz::Tally tally;
    for (size_t f = 0; f < fuzz::families().size(); f++) {
        const std::string &family = fuzz::families()[f];
        std::vector<fuzz::FuzzCase> cases;
        for (int k = 0; k < kCasesPerFamily; k++) {
            fuzz::Rng rng(kSeed * 1000003u + f * 131u + static_cast<uint64_t>(k));
            cases.push_back(fuzz::make_case(family, rng));
        }
        for (int i = 0; i < kVariantsPerFamily; i++) {
            const fuzz::FuzzCase &c = cases[static_cast<size_t>(i % kCasesPerFamily)];
            fuzz::Rng rng(kSeed * 7919u + f * 977u + static_cast<uint64_t>(i));
            fuzz::Variant v = fuzz::mutate(c, rng);
            fuzz::Result r = fuzz::run_variant_forked(c, v.script, kTimeoutSeconds);
            tally.add(family, r);
            INFO(family << " " << c.describe << " variant " << i << ": "
                        << fuzz::outcome_name(r.outcome) << " " << r.code << "\n"
                        << v.script << "=> " << r.message);
            CHECK_FALSE(fuzz::is_bug(r.outcome));
        }
        const fuzz::Tally::Row &row = tally.rows[family];
        INFO(family);
        CHECK(row.outcomes.count(fuzz::Outcome::Matched));
        CHECK(row.outcomes.count(fuzz::Outcome::Refused));
    }
    std::cout << tally.to_string();
}
