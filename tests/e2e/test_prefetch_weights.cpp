// Weights prefetched (-O3's whole-program check, CompileOptions::prefetch_bytes): each group keeps
// room for the next group's stages that live as long as it does (neff/OnChipAllocator.h), so
// that their loads wait for none of its instructions; the values do not change.

#include "TextCases.h"
#include "autoscheduler/Autoschedule.h"
#include "neff/Footprint.h"
#include "neff/OnChipAllocator.h"

#include <doctest/doctest.h>

using namespace nhc;
using test::load_text;

namespace {

// Three layers, each weight loaded whole by its group; with 4096 rows each group's tiles go
// round the whole SBUF, so that the rotation alone puts each weight where the group before it
// was working.
const std::string kLongLayers = test::three_layers(4096, 512, 512, 384);

// The same, small enough to run on values.
const std::string kLayers = test::three_layers(256, 256, 512, 384);

neff::Footprint sbuf_footprint(const neff::AccessPattern &ap) {
    return ap.space == neff::MemSpace::SBUF ? neff::footprint(ap) : neff::Footprint{};
}

/** How many instructions of the group that loads `before` touch (read or write) SBUF bytes that
 *  the loads of `weight` write. */
int touches_of_weight_region(const neff::Program &p, const std::string &weight,
                             const std::string &before) {
    std::vector<neff::Footprint> region;
    std::string weight_group, previous_group;
    test::for_each_dma_reading(p, weight, [&](const neff::Instr &i) {
        region.push_back(neff::footprint(i.dst));
        weight_group = i.name;
    });
    test::for_each_dma_reading(p, before, [&](const neff::Instr &i) { previous_group = i.name; });
    REQUIRE(!region.empty());
    REQUIRE(previous_group != weight_group);
    int touches = 0;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream) {
            if (i.name != previous_group)
                continue;
            for (const neff::Footprint &r : region)
                for (const neff::AccessPattern *ap : {&i.dst, &i.src, &i.src1})
                    touches += ap->present() && sbuf_footprint(*ap).overlaps(r);
        }
    return touches;
}

} // namespace

TEST_CASE("the allocator keeps for the next group the space released longest ago") {
    codegen::OnChipAllocator a(4096, 64);
    for (int64_t at : {0, 1024, 2048, 3072})
        CHECK(a.allocate(1024) == at);
    for (int64_t at : {2048, 0, 3072, 1024}) // released in this order: [2048, 3072) first
        a.release(at);
    CHECK(a.reserve_for_next(1000) == 2048); // rounded to 1024
    CHECK(a.allocate(2048) == 0);            // the rotation goes around the kept region
    CHECK(a.allocate(1024) == 3072);
    CHECK(a.allocate(64) == -1);
    codegen::AllocationHistory h = a.history();
    CHECK(h.kept_offset == 2048);
    CHECK(h.kept_bytes == 1024);

    // The next group: its group-lifetime stages go to the region kept for it, first fit, and
    // what does not fit there rotates; it keeps room for its own successor elsewhere.
    codegen::OnChipAllocator next(4096, 64);
    next.resume(h);
    CHECK(next.reserve_for_next(1024) == 0); // released before [3072, 4096), and not its own
    CHECK(next.allocate_group_lifetime(512) == 2048);
    CHECK(next.allocate_group_lifetime(512) == 2560);
    CHECK(next.allocate_group_lifetime(512) == 1024); // full: by rotation, from the cursor
    CHECK(next.history().kept_offset == 0);

    // No region kept: group-lifetime stages rotate like any other.
    codegen::OnChipAllocator plain(4096, 64);
    CHECK(plain.allocate_group_lifetime(512) == 0);
    CHECK(plain.allocate(512) == 512);
}

TEST_CASE("the allocator keeps nothing where a stored tile may still be read in place") {
    codegen::OnChipAllocator a(2048, 64);
    CHECK(a.allocate(1024) == 0);
    CHECK(a.allocate(1024) == 1024);
    a.mark_stored(0, 1024); // the tile at 0 was stored: a later group may read it where it is
    a.release(0);           // released first, yet not kept
    a.release(1024);
    CHECK(a.reserve_for_next(1024) == 1024);
    codegen::OnChipAllocator b(2048, 64);
    b.resume(a.history());
    CHECK(b.allocate(1024) == 0); // allocated again: no longer a stored tile
    b.release(0);
    CHECK(b.reserve_for_next(1024) == 0);
}

/** `g` compiled at -O2 as is, and with the plans chosen then and each group's group-lifetime
 *  bytes (as that compile reports them) kept for it by the group before, as -O3's check does. */
std::pair<neff::Program, neff::Program> plain_and_prefetched(const Graph &g) {
    CompileOptions o;
    o.optlevel = 2;
    std::vector<int64_t> lifetimes;
    autosched::PlanMap plans;
    o.group_lifetime_bytes = &lifetimes;
    o.chosen_plans = &plans;
    neff::Program plain = generate_program(g, o);
    REQUIRE(lifetimes.size() == 3);
    for (int64_t bytes : lifetimes)
        CHECK(bytes > 0); // each group stages its weight whole
    CompileOptions with;
    with.optlevel = 2;
    with.fixed_plans = &plans;
    with.prefetch_bytes = &lifetimes;
    return {std::move(plain), generate_program(g, with)};
}

TEST_CASE("weights prefetched: the next group's weights take bytes this group never touches") {
    Graph g = load_text(kLongLayers);
    apply_graph_passes(g, CompileOptions{});
    auto [plain, prefetched] = plain_and_prefetched(g);
    CHECK(touches_of_weight_region(prefetched, "w2", "w1") == 0);
    CHECK(touches_of_weight_region(prefetched, "w3", "w2") == 0);
    // Without the move the rotation puts them where the group before was working.
    CHECK(touches_of_weight_region(plain, "w2", "w1") > 0);
    CHECK(touches_of_weight_region(plain, "w3", "w2") > 0);
}

TEST_CASE("weights prefetched: the values do not change") {
    Graph loaded = load_text(kLayers);
    Graph g = loaded;
    apply_graph_passes(g, CompileOptions{});
    auto [plain, prefetched] = plain_and_prefetched(g);
    auto inputs = test::random_inputs(loaded, 5);
    auto want = alg::run_reference(loaded, inputs);
    test::E2EResult got = test::run_program(prefetched, g, inputs);
    CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
}
