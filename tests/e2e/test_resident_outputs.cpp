// Outputs kept in SBUF for the next group (SchedulePlan::output_resident, -O3's whole-model move):
// which groups may keep theirs (driver/ResidentOutputs), that the regions kept are left alone
// until the reader has run, and that the values do not change.

#include "TextCases.h"
#include "autoscheduler/Autoschedule.h"
#include "autoscheduler/Candidates.h"
#include "driver/ResidentOutputs.h"
#include "neff/Footprint.h"
#include "neff/OnChipAllocator.h"
#include "neff/SelectGroup.h"
#include "schedules/DefaultSchedule.h"
#include "target/Target.h"

#include <doctest/doctest.h>

using namespace nhc;
using test::load_text;
using test::node_with_output;

namespace {

// Three layers, each output read by the next group.
const std::string kLayers = test::three_layers(256, 256, 512, 384);

/** Every plan the -O2 search chose for `g`, made to keep its output, its working tiles in two
 *  fixed buffers. */
autosched::PlanMap resident_plans(const Graph &g) {
    autosched::PlanMap chosen;
    CompileOptions o;
    o.optlevel = 2;
    o.chosen_plans = &chosen;
    generate_program(g, o);
    for (auto &[workload, plan] : chosen) {
        plan.matmul.staging_buffers = 2;
        plan.output_resident = true;
    }
    return chosen;
}

} // namespace

TEST_CASE("an output may stay resident only where the next group is all that reads it") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 64] x, float[64, 64] w1, float[64, 64] w2, float[64, 64] w3)
    => (float[128, 64] y) {
  a = MatMul(x, w1)
  v = Identity(a)
  b = MatMul(v, w2)
  c = MatMul(b, w3)
  y = Add(c, b)
}
)");
    const Node &a = node_with_output(g, "a"), &v = node_with_output(g, "v");
    const Node &b = node_with_output(g, "b"), &c = node_with_output(g, "c");
    const Node &y = node_with_output(g, "y");
    (void)v; // a view: no group of its own, its reader reads `a`
    const ValueIndex values = index_values(g);
    ResidentOutputs r(g, values, {{&a}, {&b}, {&c}, {&y}});
    CHECK(r.may_keep(0));       // a, through the view, read by b's group only
    CHECK_FALSE(r.may_keep(1)); // b is read by c's group and, two groups on, by y's
    CHECK(r.may_keep(2));       // c, read by y's group
    CHECK_FALSE(r.may_keep(3)); // y, a graph output no group reads
    // Regions kept until their reader has been compiled.
    r.keep(0, {{0, 1024}});
    CHECK(r.reserved().size() == 1);
    r.compiled(0);
    CHECK(r.reserved().size() == 1);
    r.compiled(1);
    CHECK(r.reserved().empty());
}

TEST_CASE("candidates: outputs kept resident at -O3 only, where the output takes an eighth of an "
          "SBUF partition or more") {
    const target::TargetInfo &t = target::target_by_name("trn1");
    auto resident_candidates = [&](const char *text, int optlevel) {
        Graph g = load_text(text);
        apply_graph_passes(g, CompileOptions{});
        sched::Group grp = sched::build_node_group(g, node_with_output(g, "y"));
        int n = 0;
        for (const sched::SchedulePlan &p : autosched::candidate_plans(grp, t, optlevel))
            n += p.output_resident;
        return n;
    };
    // [1024, 3072] fp32: 96 KiB per partition; [128, 3072]: 12 KiB, below 176 / 8.
    const char *large = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1024, 256] x, float[256, 3072] w) => (float[1024, 3072] y) {
  y = MatMul(x, w)
}
)";
    const char *small = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x, float[256, 3072] w) => (float[128, 3072] y) {
  y = MatMul(x, w)
}
)";
    CHECK(resident_candidates(large, 2) == 0);
    CHECK(resident_candidates(large, 3) == 8);
    CHECK(resident_candidates(small, 3) == 0);
}

TEST_CASE("a group given the regions an earlier group kept allocates none of their bytes") {
    Graph g = load_text(kLayers);
    apply_graph_passes(g, CompileOptions{});
    const target::TargetInfo &t = target::target_by_name("trn1");
    const Node &first = node_with_output(g, "h1");
    auto bind = [&](const std::string &value) {
        return codegen::HbmBinding{static_cast<int>(value.size()),
                                   codegen::isa_dtype_of(g.value(value).dtype, value)};
    };
    sched::SchedulePlan keep;
    keep.output_resident = true;
    sched::Group kept_group = sched::build_node_group(g, first);
    sched::apply_default_schedule(kept_group, t, keep);
    codegen::SelectOptions so;
    so.target = &t;
    so.node_name = first.name;
    codegen::select_group(codegen::lower_group(kept_group), so, bind);
    const std::vector<std::pair<int64_t, int64_t>> kept = so.kept_sbuf;
    REQUIRE(kept.size() == 2); // two row tiles of 256 rows
    // The same group again, its allocation resuming where the kept tiles are: without them
    // reserved it writes over them, with them it goes around.
    sched::Group again = sched::build_node_group(g, first);
    sched::apply_default_schedule(again, t);
    for (bool reserved : {false, true}) {
        CAPTURE(reserved);
        codegen::SelectOptions next;
        next.target = &t;
        next.node_name = first.name;
        next.sbuf_history.cursor = kept[0].first;
        if (reserved)
            next.reserved_sbuf = kept;
        int writes_on_kept = 0;
        for (const codegen::SelectedInstr &s :
             codegen::select_group(codegen::lower_group(again), next, bind))
            for (const auto &[offset, bytes] : kept)
                writes_on_kept +=
                    s.instr.dst.space == neff::MemSpace::SBUF &&
                    neff::footprint(s.instr.dst)
                        .overlaps({neff::MemSpace::SBUF, -1, 0, 128, offset, offset + bytes});
        CHECK((writes_on_kept > 0) == !reserved);
    }
}

TEST_CASE("resident outputs keep the values, and the next group reads them where they are") {
    Graph loaded = load_text(kLayers);
    Graph g = loaded;
    apply_graph_passes(g, CompileOptions{});
    autosched::PlanMap plans = resident_plans(g);
    REQUIRE(!plans.empty());
    auto inputs = test::random_inputs(loaded, 3);
    auto want = alg::run_reference(loaded, inputs);
    for (bool forward : {false, true}) {
        CAPTURE(forward);
        CompileOptions o;
        o.optlevel = 2;
        o.fixed_plans = &plans;
        o.keep_resident = forward;
        neff::Program p = generate_program(g, o);
        CHECK((test::dmas_reading(p, "r1") == 0) == forward);
        test::E2EResult got = test::run_program(p, g, inputs);
        CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
    }
}

TEST_CASE("the on-chip allocator hands out nothing of a reserved region") {
    codegen::OnChipAllocator a(4096, 64);
    a.reserve(1024, 1024);
    CHECK(a.allocate(2048) == 2048); // [0, 1024) is too small, [1024, 2048) reserved
    CHECK(a.allocate(512) == 0);
    CHECK(a.region_bytes(0) == 512);
    CHECK(a.allocate(1024) == -1); // only [512, 1024) is free
    CHECK(a.allocate(512) == 512);
}

TEST_CASE("a bf16 output kept resident is rounded by the engines as its store would round it") {
    // Auto-cast stores r1, read only as a matmul operand, in bf16 (AutoCast.h): the kept tiles
    // are bf16 (LowerGroup), written by the engines instead of rounded by the store's DMA.
    Graph g = load_text(kLayers);
    CompileOptions cast;
    cast.optlevel = 2;
    cast.auto_cast = "matmult";
    cast.auto_cast_type = "bf16";
    auto inputs = test::random_inputs(g, 4);
    apply_graph_passes(g, cast);
    REQUIRE(g.value("r1").dtype == DType::BFloat16);
    sched::SchedulePlan keep;
    keep.output_resident = true;
    sched::Group grp = sched::build_group(g, nhc::index_values(g),
                                          {&node_with_output(g, "h1"), &node_with_output(g, "r1")});
    sched::apply_default_schedule(grp, target::target_by_name("trn1"), keep);
    codegen::LoweredGroup lg = codegen::lower_group(grp);
    REQUIRE(lg.resident.size() == 1);
    CHECK(lg.stored_as.at(*lg.resident.begin()) == DType::BFloat16);
    autosched::PlanMap plans = resident_plans(g);
    CompileOptions kept = cast;
    kept.fixed_plans = &plans;
    neff::Program with = generate_program(g, kept), without = generate_program(g, cast);
    CHECK(test::dmas_reading(with, "r1") == 0);
    test::E2EResult a = test::run_program(with, g, inputs),
                    b = test::run_program(without, g, inputs);
    CHECK(test::compare(a.outputs.at("y"), b.outputs.at("y"), 0, 0).rel_l2 == 0);
}

TEST_CASE("regions kept past a group are allocated as high as they fit, the cursor left alone") {
    codegen::OnChipAllocator a(4096, 64);
    CHECK(a.allocate(1024) == 0);
    CHECK(a.allocate_high(1000) == 3072); // rounded to 1024, at the top
    CHECK(a.allocate_high(1024) == 2048);
    CHECK(a.allocate(1024) == 1024); // the cursor still where the first allocation left it
    CHECK(a.allocate_high(64) == -1);
    a.release(2048);
    CHECK(a.allocate_high(512) == 2560); // the top of the gap the release left
}
