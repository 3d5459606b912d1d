// --model-type (issue 16): the moves a model type adds to the -O2/-O3 search. transformer and
// unet-inference add a fused attention group's PSUM stages in fixed buffers, its heads stored
// per batch item and its operands loaded per head (sched::AttentionPlan); generic gives an
// attention group no choice. The values of every attention
// plan are those of the default. And the windows the search times candidates in make the program's
// residency, which is what let it tell the attention plans apart. unet-inference computes a
// GroupNorm and the activation after it in one group, the statistics on chip (graph/GroupNorm).

#include "TextCases.h"
#include "autoscheduler/Autoschedule.h"
#include "autoscheduler/Candidates.h"
#include "autoscheduler/MeasureGroup.h"
#include "autoscheduler/Workload.h"
#include "graph/GroupNorm.h"
#include "neff/Assembler.h"
#include "neff/LowerGroup.h"
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
/** Attention of `heads` heads over `positions`, d = 64: softmax(q k^T) v, K as stored rows. */
std::string attention_text(int heads, int positions) {
    std::string t =
        "float[1, " + std::to_string(heads) + ", " + std::to_string(positions) + ", 64]";
    return R"(
<ir_version: 8, opset_import: ["" : 17]>
g ()" + t + " q, " +
           t + " k, " + t + R"( v)
    => ()" +
           t + R"( y) {
  kt = Transpose <perm = [0, 1, 3, 2]> (k)
  s = MatMul(q, kt)
  p = Softmax <axis = -1> (s)
  y = MatMul(p, v)
}
)";
}

const std::string kAttention = attention_text(2, 128);

// Two batch items of two heads, read from and written back to [b, s, h, d] (the Transposes of
// an exported attention): Q, K and V are staged per batch item, the output stored transposed.
const char *kMergedHeads = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 128, 2, 64] q, float[2, 128, 2, 64] k, float[2, 128, 2, 64] v)
    => (float[2, 128, 2, 64] y) {
  qh = Transpose <perm = [0, 2, 1, 3]> (q)
  kt = Transpose <perm = [0, 2, 3, 1]> (k)
  vh = Transpose <perm = [0, 2, 1, 3]> (v)
  s = MatMul(qh, kt)
  p = Softmax <axis = -1> (s)
  c = MatMul(p, vh)
  y = Transpose <perm = [0, 2, 1, 3]> (c)
}
)";

// Two layers of one workload.
const char *kTwoLayers = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256, 256] x, float[256, 256] w1, float[256, 256] w2) => (float[256, 256] y) {
  h1 = MatMul(x, w1)
  y = MatMul(h1, w2)
}
)";

Graph passed(const std::string &text) {
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
    return sched::build_group(g, nhc::index_values(g), nodes, {});
}

sched::SchedulePlan attention_plan(int qk, int p, int scores, int outputs) {
    sched::SchedulePlan plan;
    plan.attention = {qk, p, scores, outputs};
    return plan;
}

/** Runs the programs `a` and `b` of graph `g` on `inputs`: their outputs `y` hold the same
 *  values, element by element, within 1e-5 of the reference run of `loaded` (g before the
 *  graph passes). */
void check_same_values(neff::Program a, neff::Program b, const Graph &g, const Graph &loaded,
                       const std::map<std::string, HostTensor> &inputs) {
    HostTensor ya = test::run_program(std::move(a), g, inputs).outputs.at("y");
    HostTensor yb = test::run_program(std::move(b), g, inputs).outputs.at("y");
    REQUIRE(ya.numel() == yb.numel());
    for (int64_t i = 0; i < ya.numel(); i++)
        REQUIRE(ya.get_f64(i) == yb.get_f64(i));
    auto want = alg::run_reference(loaded, inputs);
    CHECK(test::compare(ya, want.at("y"), 1e-4, 1e-4).rel_l2 < 1e-5);
}

/** The DMAs that read (`loads`) or write HBM variable `name`. */
std::vector<neff::Instr> transfers_of(const neff::Program &p, const std::string &name, bool loads) {
    int var = p.var_index(name);
    std::vector<neff::Instr> found;
    for (neff::Engine e : {neff::Engine::SP, neff::Engine::POOL, neff::Engine::ACT})
        for (const neff::Instr &i : p.stream(e))
            if (i.op == neff::Opcode::Dma && (loads ? i.src : i.dst).var == var &&
                (loads ? i.src : i.dst).space == neff::MemSpace::HBM)
                found.push_back(i);
    return found;
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

TEST_CASE("transformer and unet-inference add attention plans to the search; generic none") {
    Graph g = passed(kAttention);
    sched::Group grp = attention_group(g);
    REQUIRE(sched::takes_attention_plan(grp));
    CHECK_FALSE(sched::takes_matmul_plan(grp));
    CHECK(autosched::candidate_plans(grp, trn1(), 3, "generic").size() == 1);
    CHECK(autosched::candidate_plans(grp, trn1(), 1, "transformer").size() == 1);
    auto o2 = autosched::candidate_plans(grp, trn1(), 2, "transformer");
    auto o3 = autosched::candidate_plans(grp, trn1(), 3, "transformer");
    // Stable Diffusion's UNet has attention: unet-inference searches it as transformer does.
    CHECK(autosched::candidate_plans(grp, trn1(), 2, "unet-inference") == o2);
    CHECK(autosched::candidate_plans(grp, trn1(), 3, "unet-inference") == o3);
    // Each buffer variant is offered as it is, with its heads stored per item and with its
    // operands loaded per head, side by side; each of the two applies to one layout of the heads,
    // elsewhere it is the same schedule. One more than the budget: P's transposes one to a PSUM
    // tile is a schedule of its own only for score rows wider than a bank (not these: the same
    // schedule as the default, not measured twice).
    REQUIRE(o2.size() == 3 * size_t(autosched::measured_budget(2) + 1));
    CHECK(o2[3].attention.p_transposes_per_bank == 1);
    for (size_t i = 0; i < o2.size(); i += 3) {
        sched::SchedulePlan per_item = o2[i], per_head = o2[i];
        per_item.attention.outputs_per_batch_item = true;
        per_head.attention.operands_per_head = true;
        CHECK_FALSE(o2[i].attention.outputs_per_batch_item);
        CHECK_FALSE(o2[i].attention.operands_per_head);
        CHECK(o2[i + 1] == per_item);
        CHECK(o2[i + 2] == per_head);
    }
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
    check_same_values(std::move(rotating), std::move(fixed), g, loaded, inputs);
}

TEST_CASE("an attention plan's P transposes one to a PSUM tile, with the same values") {
    // Score rows of 768 positions, wider than a bank: P^T's six chunks of 128 keys go three to a
    // PSUM tile by default, one with `p transposes 1 per bank`.
    const std::string text = attention_text(1, 768);
    Graph loaded = test::load_text(text);
    Graph g = passed(text);
    sched::SchedulePlan one;
    one.attention.p_transposes_per_bank = 1;
    auto script_of = [&](const sched::SchedulePlan &plan) {
        sched::Group grp = attention_group(g);
        sched::apply_default_schedule(grp, trn1(), plan);
        sched::ScheduleScript script;
        script.blocks.push_back(sched::describe_schedule(grp));
        return script.to_string();
    };
    CHECK(script_of({}).find("split(kco, kq, kr, 3") != std::string::npos);
    CHECK(script_of(one).find("split(kco, kq, kr") == std::string::npos);
    check_same_values(compiled_with(g, {}), compiled_with(g, one), g, loaded,
                      test::random_inputs(loaded, 9));
}

TEST_CASE("heads stored per batch item: one DMA of h x d rows per item, with the same values") {
    Graph loaded = test::load_text(kMergedHeads);
    Graph g = passed(kMergedHeads);
    auto inputs = test::random_inputs(loaded, 7);
    sched::SchedulePlan per_item;
    per_item.attention.outputs_per_batch_item = true;
    neff::Program per_head = compiled_with(g, {});
    neff::Program together = compiled_with(g, per_item);
    // Q's rows of [s, h, d], staged per batch item with s on partitions: one run of h x d
    // elements per partition, although the partition loop lies between h and d in the nest.
    for (const neff::Instr &i : transfers_of(together, "q", true)) {
        CHECK(i.src.num_partitions == 128);
        CHECK(i.src.dims.back().num == 2 * 64);
    }
    // By default one store per head, of rows of d; per batch item one store of rows of h x d.
    std::vector<neff::Instr> heads = transfers_of(per_head, "y", false),
                             items = transfers_of(together, "y", false);
    CHECK(heads.size() == 4);
    REQUIRE(items.size() == 2);
    CHECK(heads[0].dst.dims.back().num == 64);
    CHECK(items[0].dst.dims.back().num == 2 * 64);
    CHECK(items[0].dst.num_partitions == 128);
    check_same_values(std::move(per_head), std::move(together), g, loaded, inputs);
}

TEST_CASE("heads outermost, loaded per head: one DMA of Q per head, with the same values") {
    // [heads, positions, d], heads folded into the batch (CLIP's bmm, SD's einsum): by default Q,
    // K and V are staged for all heads at once, one transfer of rows of heads x d elements each.
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 128, 64] q, float[4, 128, 64] k, float[4, 128, 64] v) => (float[4, 128, 64] y) {
  kt = Transpose <perm = [0, 2, 1]> (k)
  s = MatMul(q, kt)
  p = Softmax <axis = -1> (s)
  y = MatMul(p, v)
}
)";
    Graph loaded = test::load_text(text);
    Graph g = passed(text);
    sched::SchedulePlan per_head;
    per_head.attention.operands_per_head = true;
    neff::Program together = compiled_with(g, {}), separately = compiled_with(g, per_head);
    for (const char *operand : {"q", "v"}) {
        CAPTURE(operand);
        std::vector<neff::Instr> all = transfers_of(together, operand, true),
                                 each = transfers_of(separately, operand, true);
        REQUIRE(all.size() == 1);
        CHECK(all[0].src.num_partitions == 128);
        CHECK(all[0].src.dims.back().num == 64);
        CHECK(all[0].src.dims.size() >= 2);
        CHECK(each.size() == 4);
    }
    check_same_values(std::move(together), std::move(separately), g, loaded,
                      test::random_inputs(loaded, 11));
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

TEST_CASE("a candidate's window forwards its output to the next group, as the program does") {
    // Two layers: the window of the first takes the second as its following group. With the
    // program's residency (-O2, -O3), the second loads none of h1 from HBM: it copies the first's
    // tiles on chip; h1's stores stay, since a group past the window could read it.
    Graph g = passed(kTwoLayers);
    auto group_of = [&](const std::string &value) {
        sched::Group grp = sched::build_node_group(g, test::node_with_output(g, value));
        sched::apply_default_schedule(grp, trn1());
        return grp;
    };
    sched::Group first = group_of("h1");
    autosched::ProgramContext cx;
    autosched::FollowingGroup second;
    second.lowered =
        std::make_shared<const codegen::LoweredGroup>(codegen::lower_group(group_of("y")));
    cx.following = {second};
    auto transfers_of_h1 = [&](bool forward, neff::MemSpace from) {
        cx.forward_loads = forward;
        std::vector<autosched::Window> w = autosched::prepare_windows({&first}, g, trn1(), cx, 1);
        REQUIRE(w[0].timing.feasible);
        int h1 = w[0].prog.var_index("h1");
        int n = 0;
        for (const codegen::SelectedInstr &s : w[0].instrs) {
            const neff::AccessPattern &hbm =
                from == neff::MemSpace::HBM ? s.instr.src : s.instr.dst;
            n += s.instr.op == neff::Opcode::Dma && hbm.space == neff::MemSpace::HBM &&
                 hbm.var == h1;
        }
        return n;
    };
    CHECK(transfers_of_h1(false, neff::MemSpace::HBM) > 0); // loads
    CHECK(transfers_of_h1(true, neff::MemSpace::HBM) == 0); // forwarded
    CHECK(transfers_of_h1(true, neff::MemSpace::SBUF) > 0); // stores stay
}

TEST_CASE("in a window, a later group of the searched workload takes the candidate's plan") {
    // h1 and y are one workload: the program gives y the plan chosen for h1, so the window
    // measures y with each candidate's plan (its lowering, rebound to y's values), not y's
    // default. With operands streamed per output tile, each group loads its weight per tile.
    Graph g = passed(kTwoLayers);
    sched::Group h1 = sched::build_node_group(g, test::node_with_output(g, "h1"));
    sched::Group y = sched::build_node_group(g, test::node_with_output(g, "y"));
    std::string workload = autosched::workload_of(g, h1, {}, "trn1").text;
    REQUIRE(workload == autosched::workload_of(g, y, {}, "trn1").text);
    sched::SchedulePlan streamed;
    streamed.matmul.operands = sched::MatmulPlan::Operands::Streamed;
    sched::apply_default_schedule(h1, trn1(), streamed);
    sched::apply_default_schedule(y, trn1());
    autosched::FollowingGroup next;
    next.lowered = std::make_shared<const codegen::LoweredGroup>(codegen::lower_group(y));
    next.workload = workload;
    next.values = sched::hbm_values(y);
    autosched::ProgramContext cx;
    cx.following = {next};
    auto loads_of = [&](const std::string &searched, const std::string &value) {
        cx.workload = searched;
        std::vector<autosched::Window> w = autosched::prepare_windows({&h1}, g, trn1(), cx, 1);
        REQUIRE(w[0].timing.feasible);
        int var = w[0].prog.var_index(value);
        int n = 0;
        for (const codegen::SelectedInstr &s : w[0].instrs)
            n += s.instr.op == neff::Opcode::Dma && s.instr.src.space == neff::MemSpace::HBM &&
                 s.instr.src.var == var;
        return n;
    };
    // y streamed as h1 is: w2 loaded as often as w1; with y's default, less often.
    CHECK(loads_of(workload, "w2") == loads_of(workload, "w1"));
    CHECK(loads_of("", "w2") < loads_of("", "w1"));
}

namespace {

/** torch.nn.GroupNorm(groups, channels) on [batch, channels, 8, 8] as PyTorch exports it, then
 *  SiLU (Sigmoid, Mul), as in SD's UNet blocks. */
std::string group_norm_silu(int groups, int channels, int batch = 1) {
    std::string ones, zeros, gamma, beta;
    for (int i = 0; i < channels; i++) {
        const char *sep = i ? ", " : "";
        gamma += sep + std::to_string(1.0 + 0.01 * (i % 50));
        beta += sep + std::to_string(0.5 - 0.003 * (i % 70));
        if (i < groups) {
            ones += std::string(sep) + "1";
            zeros += std::string(sep) + "0";
        }
    }
    std::string c = std::to_string(channels), g = std::to_string(groups), n = std::to_string(batch);
    return R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[)" +
           n + ", " + c + R"(, 8, 8] x) => (float[)" + n + ", " + c + R"(, 8, 8] y)
    <int64[3] grouped = {)" +
           n + ", " + g + R"(, -1}, int64[4] back = {)" + n + ", " + c + R"(, 8, 8}, float[)" + g +
           "] ones = {" + ones + "}, float[" + g + "] zeros = {" + zeros + "}, float[" + c +
           ", 1, 1] gamma = {" + gamma + "}, float[" + c + ", 1, 1] beta = {" + beta + R"(}> {
  r = Reshape(x, grouped)
  n = InstanceNormalization <epsilon = 1e-5> (r, ones, zeros)
  u = Reshape(n, back)
  m = Mul(u, gamma)
  a = Add(m, beta)
  s = Sigmoid(a)
  y = Mul(a, s)
}
)";
}

/** The HBM variables the program's DMAs write. */
std::set<std::string> hbm_written(const neff::Program &p) {
    std::set<std::string> names;
    for (neff::Engine e : {neff::Engine::SP, neff::Engine::POOL, neff::Engine::ACT})
        for (const neff::Instr &i : p.stream(e))
            if (i.op == neff::Opcode::Dma && i.dst.space == neff::MemSpace::HBM)
                names.insert(p.vars.at(static_cast<size_t>(i.dst.var)).name);
    return names;
}

} // namespace

TEST_CASE("unet-inference: a GroupNorm and its SiLU in one group, the statistics on chip") {
    // 320 channels in 32 groups of 10 (SD's first blocks): tiles of 80 rows, 8 groups each.
    std::string text = group_norm_silu(32, 320);
    Graph loaded = test::load_text(text);
    auto inputs = test::random_inputs(loaded, 11);
    CompileOptions unet, generic;
    unet.optlevel = generic.optlevel = 2;
    unet.model_type = "unet-inference";
    Graph g = loaded, plain = loaded;
    apply_graph_passes(g, unet);
    apply_graph_passes(plain, generic);
    std::vector<const Node *> norms;
    for (const Node &n : g.nodes)
        if (n.op_type == "GroupNormRows")
            norms.push_back(&n);
    REQUIRE(norms.size() == 1);
    CHECK(g.value(norms[0]->inputs[0]).shape == Shape{4, 80, 64});
    neff::Program p = generate_program(g, unet);
    // x is read once and only y is written: no statistic or intermediate crosses HBM; two
    // mixing matmuls per tile on the PE. The generic form stores its intermediates.
    CHECK(hbm_written(p) == std::set<std::string>{"y"});
    CHECK(hbm_written(generate_program(plain, generic)).size() > 1);
    int64_t x_bytes = 0, matmuls = 0;
    for (const neff::Instr &i : transfers_of(p, "x", true))
        x_bytes += i.src.num_partitions * i.src.free_count() * 4;
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        matmuls += i.op == neff::Opcode::Matmul ? 1 : 0;
    CHECK(x_bytes == 320 * 64 * 4);
    CHECK(matmuls == 2 * 4);
    HostTensor got = test::run_program(std::move(p), g, inputs).outputs.at("y");
    CHECK(test::compare(got, alg::run_reference(loaded, inputs).at("y"), 1e-4, 1e-5).rel_l2 < 1e-5);
}

TEST_CASE("unet-inference: a GroupNorm of two images in one group matches") {
    // 2 images x 8 groups of 8 channels: each tile of rows holds whole groups of one image.
    std::string text = group_norm_silu(8, 64, 2);
    Graph loaded = test::load_text(text), g = loaded;
    CompileOptions unet;
    unet.optlevel = 2;
    unet.model_type = "unet-inference";
    apply_graph_passes(g, unet);
    CHECK(std::count_if(g.nodes.begin(), g.nodes.end(),
                        [](const Node &n) { return n.op_type == "GroupNormRows"; }) == 1);
    auto inputs = test::random_inputs(loaded, 13);
    HostTensor got = test::run_program(generate_program(g, unet), g, inputs).outputs.at("y");
    CHECK(test::compare(got, alg::run_reference(loaded, inputs).at("y"), 1e-4, 1e-5).rel_l2 < 1e-5);
}

TEST_CASE("unet-inference: a GroupNorm whose group has more rows than partitions keeps the "
          "spread form") {
    // 2 groups of 256 channels: a group's rows cannot share a tile of 128 partitions.
    Graph one_group = test::load_text(group_norm_silu(2, 512)), spread = one_group;
    CHECK(lower_group_norms(one_group, 128, 1024, 1024) == 1);
    CHECK(lower_group_norms(spread, 128, 1024) == 1);
    auto ops = [](const Graph &g) {
        std::vector<std::string> o;
        for (const Node &n : g.nodes)
            o.push_back(n.op_type);
        return o;
    };
    CHECK(ops(one_group) == ops(spread));
    auto has = [&](const Graph &g, const char *op) {
        std::vector<std::string> o = ops(g);
        return std::find(o.begin(), o.end(), op) != o.end();
    };
    CHECK_FALSE(has(one_group, "GroupNormRows"));
    // With 32 groups of 16 channels, the same width gives the one-group form.
    Graph sd = test::load_text(group_norm_silu(32, 512));
    CHECK(lower_group_norms(sd, 128, 1024, 1024) == 1);
    CHECK(has(sd, "GroupNormRows"));
}
