// The schedule fuzzer's deterministic subset (ScheduleFuzz.h; bench/schedule_fuzz runs
// thousands): per operator family, mutated default schedules of two shapes, each compiled, run on
// the simulator with race detection and compared with the host reference in a forked child. Every
// variant must match or be refused with a coded error at compile time; the mutations must reach
// both outcomes in every family (a fuzzer whose variants are all refused tests nothing).

#include "ScheduleFuzz.h"

#include "driver/Codegen.h"
#include "support/Log.h"

#include <algorithm>
#include <doctest/doctest.h>
#include <iostream>

using namespace nhc;

namespace {

constexpr int kCasesPerFamily = 2, kVariantsPerFamily = 40;
constexpr uint64_t kSeed = 14; // issue 14
constexpr unsigned kTimeoutSeconds = 60;

/** The first conv case of the fuzzer run with `seed` (bench/schedule_fuzz's first case of the
 *  family), the code generator's operators registered. */
fuzz::FuzzCase first_conv_case(uint64_t seed) {
    Logger::instance().set_console_level(100);
    register_codegen_operators();
    const std::vector<std::string> &all = fuzz::families();
    size_t f = size_t(std::find(all.begin(), all.end(), "conv") - all.begin());
    REQUIRE(f < all.size());
    fuzz::Rng rng(seed * 1000003u + f * 131u);
    return fuzz::make_case("conv", rng);
}

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

TEST_CASE("a split that takes a stage past the bound the script gave it is NHC_EGEN020") {
    // Found by the fuzzer: the padded image of a convolution bounded to its 10 rows, then split
    // by 16. ShiftInwards starts the tile 6 rows early; Halide's check of the explicit bound
    // fails, and the code generator, which selected no instruction for Halide's checks, wrote a
    // NEFF with wrong values.
    fuzz::FuzzCase c = first_conv_case(kSeed);
    REQUIRE(c.describe == "Conv([2,1,8,6], [4,1,3,3]) -> [2,4,8,6] as ConvTaps");
    // At -O2 the convolution's 3 kernel rows are packed into 3 blocks of 8 channels (one input
    // channel and 7 zeros each): x_pad's rows are the 8 output rows.
    std::string bounded = R"(node "node__conv_rows1":
  final0.split(v2, coo, coi, 4).split(v1, ohb, ohr, 8).split(ohr, oho, ohi, 8).split(v0, owo, owi, 6).reorder(owi, ohi, coi, owo, oho, coo, ohb, v3)
  out.compute_at(final0, owo).store_in(SBUF)
  acc.compute_at(final0, owo).store_in(PSUM)
  acc.update().split(r.x, cio, cii, 24).reorder(cii, v0, v1, v2, r.y, r.z, cio, v3).unroll(r.y).unroll(r.z).unroll(cio)
  w_t.compute_root().store_in(SBUF)
  x_pad.compute_at(final0, v3).bound(v0, 0, 8).bound(v1, 0, 8).store_in(SBUF)
  x_pad.update().split(v2, kro, kri, 8).unroll(kro)
  hint partition_dim x_pad 2
  hint partition_dim w_t 3
  hint partition_dim acc 2
  hint partition_dim out 2
)";
    fuzz::Result fits = fuzz::run_variant_forked(c, bounded, kTimeoutSeconds);
    CHECK(fits.outcome == fuzz::Outcome::Matched);
    fuzz::Result past =
        fuzz::run_variant_forked(c, bounded + "  x_pad.split(v1, v1o, v1i, 16)\n", kTimeoutSeconds);
    CHECK(past.outcome == fuzz::Outcome::Refused);
    CHECK(past.code == "NHC_EGEN020");
    CHECK(past.message.find("x_pad") != std::string::npos);
}

TEST_CASE("a padded image whose rows a split clamps is refused, not gathered") {
    // Found by bench/schedule_fuzz (--seed 7, variant 105): x_pad's channel split by 8 leaves
    // an index that instruction selection took for a gather; once an index the loops decide is
    // simplified within their ranges (neff/SelectInstructions, affine), the gather's refusal
    // no longer threw, and the selector read a table row it had not found (a crash).
    fuzz::FuzzCase c = first_conv_case(7);
    REQUIRE(c.describe == "Conv([1,16,8,8], [16,16,3,3], [16]) -> [1,16,3,3] as ConvTaps");
    std::string script = R"(node "node__conv_rows1":
  final0.split(v2, coo, coi, 16).split(v1, ohb, ohr, 3).split(ohr, oho, ohi, 3).split(v0, owo, owi, 3).reorder(owi, ohi, coi, owo, oho, coo, ohb, v3)
  bias.compute_at(final0, coo).store_in(SBUF)
  out.compute_at(final0, owo).store_in(SBUF)
  acc.compute_at(final0, owo).store_in(PSUM)
  acc.update().split(r.x, cio, cii, 48).reorder(cii, v0, v1, v2, r.y, r.z, cio, v3).unroll(r.y).unroll(r.z).unroll(cio)
  w_t.compute_root().store_in(SBUF)
  x_pad.compute_at(final0, v3).bound(v0, 0, 8).bound(v1, 0, 3).store_in(SBUF)
  x_pad.update().split(v2, kro, kri, 8).unroll(kro)
  hint partition_dim x_pad 2
  hint partition_dim w_t 3
  hint partition_dim acc 2
  hint partition_dim out 2
  hint partition_dim bias 0
)";
    fuzz::Result r = fuzz::run_variant_forked(c, script, kTimeoutSeconds);
    CHECK(r.outcome == fuzz::Outcome::Refused);
    CHECK(r.code == "NHC_EGEN008");
}
