// How long attention's score rows may be and stay on chip (schedules/DefaultSchedule.h,
// softmax_rows_join_matmul): a Softmax joins the scores' matmul, and P·V closes the group, while a
// row tile's whole-row stages, two row tiles of them, take at most half the SBUF (2,816 fp32
// elements on trn1); beyond that the scores cross HBM. A batched matmul whose softmax over rows
// wider than a PSUM bank is the group's result (attention probabilities as an output); and P·V
// closing its attention past a node between them that does not read it (driver/FormGroups).

#include "TextCases.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/ScheduleScript.h"
#include "target/Target.h"

#include <algorithm>
#include <cmath>
#include <doctest/doctest.h>
#include <map>

using namespace nhc;

namespace {

/** One head of attention over `seq` positions, d = 64, without a mask: softmax(q k^T / 8) v. */
Graph attention(int seq) {
    std::string n = std::to_string(seq);
    return test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, )" + n + R"(, 64] q, float[1, 1, 64, )" +
                           n + R"(] kt, float[1, 1, )" + n + R"(, 64] v) => (float[1, 1, )" + n +
                           R"(, 64] o) <float c = {8.0}> {
  s = MatMul(q, kt)
  d = Div(s, c)
  p = Softmax(d)
  o = MatMul(p, v)
}
)");
}

/** Whether the program has an HBM variable for one of the values between the two products. */
bool scores_cross_hbm(const neff::Program &p) {
    for (const neff::Variable &var : p.vars)
        if (var.name == "s" || var.name == "d" || var.name == "p")
            return true;
    return false;
}

/** softmax(q k^T * scale) of query row `i` of head `h`, in double: q is [heads, rows, d], kt
 *  [heads, d, keys], row-major. */
std::vector<double> probabilities(const HostTensor &q, const HostTensor &kt, int h, int i, int rows,
                                  int keys, int d, double scale) {
    std::vector<double> row(static_cast<size_t>(keys));
    double m = -1e300, sum = 0;
    for (int j = 0; j < keys; j++) {
        double s = 0;
        for (int c = 0; c < d; c++)
            s += q.get_f64((h * rows + i) * d + c) * kt.get_f64((h * d + c) * keys + j);
        row[j] = s * scale;
        m = std::max(m, row[j]);
    }
    for (double &x : row)
        sum += (x = std::exp(x - m));
    for (double &x : row)
        x /= sum;
    return row;
}

/** Relative L2 distance, accumulated element by element. */
struct RelL2 {
    double num = 0, den = 0;
    void add(double got, double want) {
        num += (got - want) * (got - want);
        den += want * want;
    }
    double value() const { return std::sqrt(num / den); }
};

/** `g` compiled at -O2, with the schedules used written to `used`, or as `script` gives them. */
neff::Program compile_o2(const Graph &g, sched::ScheduleScript *used,
                         const sched::ScheduleScript *script = nullptr) {
    CompileOptions o;
    o.optlevel = 2;
    o.used_schedules = used;
    o.schedule = script;
    return test::compile_graph(g, o);
}

} // namespace

TEST_CASE("a softmax joins its matmul while two row tiles of 4 fp32 rows fit half the SBUF") {
    const target::TargetInfo &t = target::target_by_name("trn1");
    const int64_t widest = t.sbuf_usable_per_partition / 64; // 2 row tiles x 4 fp32 rows
    CHECK(widest == 2816);
    CHECK(sched::softmax_rows_join_matmul(widest, t));
    CHECK_FALSE(sched::softmax_rows_join_matmul(widest + 1, t));
    // A LayerNorm epilogue keeps the narrower budget (its matmul may keep its weights whole).
    CHECK_FALSE(sched::row_reduction_joins_matmul(2048, t));
    CHECK(sched::row_reduction_joins_matmul(1408, t));
}

TEST_CASE("attention over 2,048 positions keeps its scores on chip, with the reference's values") {
    const int seq = 2048, d = 64;
    Graph g = attention(seq);
    neff::Program p = compile_o2(g, nullptr);
    CHECK_FALSE(scores_cross_hbm(p));
    // The reference in double, row by row (alg::run_reference's interpreter takes minutes here).
    auto in = test::random_inputs(g, 7);
    const HostTensor &q = in.at("q"), &kt = in.at("kt"), &v = in.at("v");
    HostTensor got = test::run_program(std::move(p), g, in).outputs.at("o");
    RelL2 err;
    for (int i = 0; i < seq; i++) {
        std::vector<double> pr = probabilities(q, kt, 0, i, seq, seq, d, 1.0 / 8);
        for (int c = 0; c < d; c++) {
            double want = 0;
            for (int j = 0; j < seq; j++)
                want += pr[j] * v.get_f64(j * d + c);
            err.add(got.get_f64(i * d + c), want);
        }
    }
    CHECK(err.value() <= 1e-5);
}

TEST_CASE("a batched matmul's softmax over rows wider than a PSUM bank, as the group's result") {
    // Before, the accumulator of such a group had no partition hint, so its outermost axis (the
    // batch) went on partitions and a tile needed 2 x 128 x 768 fp32 per partition of PSUM
    // (NHC_EGEN004).
    const int rows = 128, keys = 768, d = 64;
    Graph g = test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 128, 64] q, float[1, 2, 64, 768] kt) => (float[1, 2, 128, 768] p) {
  s = MatMul(q, kt)
  p = Softmax(s)
}
)");
    auto in = test::random_inputs(g, 5);
    const HostTensor &q = in.at("q"), &kt = in.at("kt");
    for (int level : {1, 2}) {
        CAPTURE(level);
        CompileOptions o;
        o.optlevel = level;
        HostTensor got = test::run_program(test::compile_graph(g, o), g, in).outputs.at("p");
        RelL2 err;
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < rows; i++) {
                std::vector<double> pr = probabilities(q, kt, h, i, rows, keys, d, 1.0);
                for (int j = 0; j < keys; j++)
                    err.add(got.get_f64((h * rows + i) * keys + j), pr[j]);
            }
        CHECK(err.value() <= 1e-5);
    }
}

TEST_CASE("attention over 2,880 positions stores its scores") {
    CHECK(scores_cross_hbm(compile_o2(attention(2880), nullptr)));
}

TEST_CASE("P·V closes its attention past a Slice of V between the Softmax and it") {
    // PyTorch's export of softmax(q k^T) @ v[:, :, :128]: the Slice comes after the Softmax.
    Graph g = test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 128, 64] q, float[1, 2, 64, 128] kt, float[1, 2, 256, 64] vv)
    => (float[1, 2, 128, 64] o) <int64[1] st = {0}, int64[1] en = {128}, int64[1] ax = {2}> {
  s = MatMul(q, kt)
  p = Softmax(s)
  v = Slice(vv, st, en, ax)
  o = MatMul(p, v)
}
)");
    sched::ScheduleScript used;
    neff::Program p = compile_o2(g, &used);
    CHECK_FALSE(scores_cross_hbm(p));
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 9), {"o"}, 1e-5, 1e-6) <= 1e-5);
    // The schedules as --dump-schedules writes them give the same program back (--schedule):
    // the block of the attention's three nodes forms its group past the Slice.
    sched::ScheduleScript script = sched::parse_schedule(used.to_string());
    CHECK(compile_o2(g, nullptr, &script).streams == p.streams);
}

namespace {

/** torchvision's multi-head attention over `n` positions, 2 heads of 64: [positions, heads * d]
 *  projections viewed as [heads, positions, d]. */
Graph heads_first_attention(int n) {
    std::string p = std::to_string(n);
    return test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[)" + p + R"(, 128] qx, float[)" +
                           p + R"(, 128] kx, float[)" + p + R"(, 128] vx) => (float[2, )" + p +
                           R"(, 64] o)
    <int64[3] sh = {)" + p +
                           R"(, 2, 64}, float c = {8.0}> {
  q3 = Reshape(qx, sh)
  q = Transpose<perm = [1, 0, 2]>(q3)
  k3 = Reshape(kx, sh)
  kt = Transpose<perm = [1, 2, 0]>(k3)
  v3 = Reshape(vx, sh)
  v = Transpose<perm = [1, 0, 2]>(v3)
  s = MatMul(q, kt)
  d = Div(s, c)
  p = Softmax(d)
  o = MatMul(p, v)
}
)");
}

} // namespace

TEST_CASE("heads first over 197 positions: Q, K and V load once per chunk of rows, all heads") {
    // 197 positions (ViT-B/16) exceed the partitions, so each operand is staged in two chunks of
    // rows (99 and 98, guarded) with both heads in each row; before, it was loaded per head and
    // row tile (four transfers of 64-element rows each).
    Graph g = heads_first_attention(197);
    sched::ScheduleScript used;
    neff::Program p = compile_o2(g, &used);
    std::map<std::string, std::vector<int32_t>> loads; // input -> partitions of each load
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            if (i.op == neff::Opcode::Dma && i.src.space == neff::MemSpace::HBM && i.src.var >= 0) {
                loads[p.vars[static_cast<size_t>(i.src.var)].name].push_back(i.dst.num_partitions);
                CHECK(i.dst.free_count() == 128); // both heads' 64 elements per partition
            }
    for (const char *input : {"qx", "kx", "vx"}) {
        CAPTURE(input);
        std::vector<int32_t> chunks = loads[input];
        std::sort(chunks.begin(), chunks.end());
        CHECK(chunks == std::vector<int32_t>{98, 99});
    }
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 11), {"o"}, 1e-5, 1e-6) <= 1e-5);
    // The output's row tiles shifted inwards (rows 98-196) would straddle the chunks of Q: the
    // access is refused with a code, never lowered wrong.
    std::string text = used.to_string();
    const std::string guarded = "mi, 99, TailStrategy::GuardWithIf)";
    size_t at = text.find(guarded);
    REQUIRE(at != std::string::npos);
    text.replace(at, guarded.size(), "mi, 99)");
    sched::ScheduleScript shifted = sched::parse_schedule(text);
    std::string code;
    try {
        compile_o2(g, nullptr, &shifted);
    } catch (const UserError &e) {
        code = e.code();
    }
    CHECK(code == "NHC_EGEN010");
}

TEST_CASE("heads first over 256 positions: chunks that divide, each of K's transposes one chunk") {
    // K staged outside its transposes' loop over chunks: as a loop, the two chunks were one copy
    // nest of three loops, refused as no transpose (NHC_EGEN012; SD UNet's attention at -O3).
    Graph g = heads_first_attention(256);
    auto in = test::random_inputs(g, 4);
    HostTensor want = alg::run_reference(g, in).at("o");
    for (int level : {2, 3}) {
        CAPTURE(level);
        CompileOptions o;
        o.optlevel = level;
        o.model_type = "unet-inference";
        HostTensor got = test::run_program(test::compile_graph(g, o), g, in).outputs.at("o");
        CHECK(test::compare(got, want, 1e-5, 1e-6).rel_l2 <= 1e-5);
    }
}
