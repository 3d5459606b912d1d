// --model-type (issue 16): the moves a model type adds to the -O2/-O3 search. transformer adds a
// fused attention group's PSUM stages in fixed buffers (sched::AttentionPlan); generic gives an
// attention group no choice. The values of every attention plan are those of the default.

#include "TextCases.h"
#include "autoscheduler/Autoschedule.h"
#include "autoscheduler/Candidates.h"
#include "neff/Assembler.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/Group.h"
#include "schedules/ScheduleScript.h"
#include "target/Target.h"

#include <doctest/doctest.h>

#include <set>

using namespace nhc;

namespace {

const target::TargetInfo &trn1() {
    return target::target_by_name("trn1");
}

// Two heads: scores (Q and K both stored with d innermost, so both are transposed on the PE),
// Softmax and the context product, one fused group.
const char *kAttention = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 128, 64] q, float[1, 2, 128, 64] k, float[1, 2, 128, 64] v)
    => (float[1, 2, 128, 64] y) {
  kt = Transpose <perm = [0, 1, 3, 2]> (k)
  s = MatMul(q, kt)
  p = Softmax <axis = -1> (s)
  y = MatMul(p, v)
}
)";

Graph passed(const char *text) {
    Graph g = test::load_text(text);
    apply_graph_passes(g, CompileOptions{});
    return g;
}

/** The graph's scores MatMul, Softmax and context MatMul, as the one group code generation
 *  forms of them. */
sched::Group attention_group(const Graph &g) {
    std::vector<const Node *> nodes;
    for (const Node &n : g.nodes)
        if (n.op_type == "MatMul" || n.op_type == "Softmax")
            nodes.push_back(&n);
    REQUIRE(nodes.size() == 3);
    return sched::build_group(g, nodes, {});
}

sched::SchedulePlan attention_plan(int qk, int p, int scores, int outputs) {
    sched::SchedulePlan plan;
    plan.attention = {qk, p, scores, outputs};
    return plan;
}

/** The attention compiled at -O1 from the script of its schedule under `plan`. */
neff::Program compiled_with(const Graph &g, const sched::SchedulePlan &plan) {
    sched::Group grp = attention_group(g);
    sched::apply_default_schedule(grp, trn1(), plan);
    sched::ScheduleScript script;
    script.blocks.push_back(sched::describe_schedule(grp));
    CompileOptions o;
    o.optlevel = 1;
    o.schedule = &script;
    return generate_program(g, o);
}

/** The PSUM banks the PE's transposes write. */
std::set<int64_t> transpose_banks(const neff::Program &p) {
    std::set<int64_t> banks;
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        if (i.op == neff::Opcode::Transpose)
            banks.insert(i.dst.offset / trn1().psum_bank_bytes);
    return banks;
}

} // namespace

TEST_CASE("transformer adds attention plans to the search; generic gives attention none") {
    Graph g = passed(kAttention);
    sched::Group grp = attention_group(g);
    REQUIRE(sched::takes_attention_plan(grp));
    CHECK_FALSE(sched::takes_matmul_plan(grp));
    CHECK(autosched::candidate_plans(grp, trn1(), 3, "generic").size() == 1);
    CHECK(autosched::candidate_plans(grp, trn1(), 1, "transformer").size() == 1);
    auto o2 = autosched::candidate_plans(grp, trn1(), 2, "transformer");
    auto o3 = autosched::candidate_plans(grp, trn1(), 3, "transformer");
    CHECK(o2.size() == size_t(autosched::measured_budget(2)));
    CHECK(o3.size() > o2.size());
    CHECK(o2.front().is_default());
    for (const sched::SchedulePlan &plan : o3) {
        CAPTURE(plan.describe());
        CHECK(plan.matmul == sched::MatmulPlan()); // attention plans only
        sched::SchedulePlan back;
        CHECK(sched::parse_plan(plan.describe(), back));
        CHECK(back == plan);
    }
    // A matmul group has the same candidates under every model type.
    const Node *scores = nullptr;
    for (const Node &n : g.nodes)
        if (n.op_type == "MatMul" && !scores)
            scores = &n;
    sched::Group alone = sched::build_node_group(g, *scores);
    CHECK(autosched::candidate_plans(alone, trn1(), 3, "transformer").size() ==
          autosched::candidate_plans(alone, trn1(), 3, "generic").size());
    sched::SchedulePlan p;
    for (const char *junk :
         {"attention", "attention, q/k transposes in 0 buffers", "attention, scores in x buffers",
          "attention, n <= 128", "attention, outputs in 2 buffers, q/k transposes in 1 buffers"}) {
        CAPTURE(junk);
        CHECK_FALSE(sched::parse_plan(junk, p));
    }
}

TEST_CASE("an attention plan's stages take turns in its fixed PSUM banks, with the same values") {
    Graph loaded = test::load_text(kAttention);
    Graph g = passed(kAttention);
    auto inputs = test::random_inputs(loaded, 5);
    neff::Program rotating = compiled_with(g, {});
    neff::Program fixed = compiled_with(g, attention_plan(1, 1, 0, 0));
    // Per head, Q^T, K^T and P^T: six transposes. By default each takes the next bank; held to
    // one bank each, the three stages write three.
    CHECK(transpose_banks(rotating).size() > 3);
    CHECK(transpose_banks(fixed).size() == 3);
    HostTensor a = test::run_program(std::move(rotating), g, inputs).outputs.at("y");
    HostTensor b = test::run_program(std::move(fixed), g, inputs).outputs.at("y");
    REQUIRE(a.numel() == b.numel());
    for (int64_t i = 0; i < a.numel(); i++)
        REQUIRE(a.get_f64(i) == b.get_f64(i));
    auto want = alg::run_reference(loaded, inputs);
    CHECK(test::compare(a, want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
}

TEST_CASE(
    "at -O2 transformer searches the attention, generic does not; -O1 is the same either way") {
    Graph g = passed(kAttention);
    auto searched = [&](const std::string &type, int level) {
        autosched::SearchOptions o;
        o.optlevel = level;
        o.model_type = type;
        autosched::Autoscheduler a(g, trn1(), o);
        sched::Group probe = attention_group(g);
        a.plan_for(
            probe, {}, [&] { return attention_group(g); },
            [] { return autosched::ProgramContext(); });
        return a.stats();
    };
    CHECK(searched("generic", 2).workloads == 0);
    autosched::SearchStats t = searched("transformer", 2);
    CHECK(t.workloads == 1);
    CHECK(t.measured >= 2);
    CHECK(t.chosen_ns <= t.default_ns);
    CHECK(searched("transformer", 1).workloads == 0);
    CompileOptions generic, transformer;
    generic.optlevel = transformer.optlevel = 1;
    transformer.model_type = "transformer";
    CHECK(neff::print_program(generate_program(g, generic)) ==
          neff::print_program(generate_program(g, transformer)));
}
