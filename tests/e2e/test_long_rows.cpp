// Rows longer than a tile holds whole (issue 15): graph/LongRows decomposes Softmax, LogSoftmax
// and LayerNorm into row reductions and elementwise steps, which schedules/RowChunks computes in
// chunks of columns; checked on the simulator against values computed here in double.

#include "TextCases.h"
#include "graph/GroupNorm.h"
#include "graph/LongRows.h"
#include "schedules/DefaultSchedule.h"
#include "target/Target.h"

#include <cmath>
#include <doctest/doctest.h>

using namespace nhc;
using test::load_text;

namespace {

constexpr int64_t kRows = 3, kWidth = 9000; // 36 KB rows: more than schedules keep whole

/** The relative L2 distance between `got` and `want`, row-major over `got`'s elements. */
double rel_l2(const HostTensor &got, const std::vector<double> &want) {
    REQUIRE(got.numel() == static_cast<int64_t>(want.size()));
    double num = 0, den = 0;
    for (int64_t i = 0; i < got.numel(); i++) {
        double d = got.get_f64(i) - want[static_cast<size_t>(i)];
        num += d * d;
        den += want[static_cast<size_t>(i)] * want[static_cast<size_t>(i)];
    }
    return std::sqrt(num / den);
}

/** Per row of x [rows, width], `f(row)` appended for each of its elements. */
template <typename F>
std::vector<double> per_row(const HostTensor &x, int64_t width, F f) {
    std::vector<double> out;
    for (int64_t r = 0; r < x.numel() / width; r++) {
        std::vector<double> row;
        for (int64_t c = 0; c < width; c++)
            row.push_back(x.get_f64(r * width + c));
        std::vector<double> y = f(row);
        out.insert(out.end(), y.begin(), y.end());
    }
    return out;
}

std::vector<double> softmax(const std::vector<double> &row, bool log) {
    double m = row[0], s = 0;
    for (double v : row)
        m = std::max(m, v);
    for (double v : row)
        s += std::exp(v - m);
    std::vector<double> y;
    for (double v : row)
        y.push_back(log ? v - m - std::log(s) : std::exp(v - m) / s);
    return y;
}

std::vector<double> layer_norm(const std::vector<double> &row) {
    double mean = 0, var = 0;
    for (double v : row)
        mean += v / double(row.size());
    for (double v : row)
        var += (v - mean) * (v - mean) / double(row.size());
    std::vector<double> y;
    for (size_t c = 0; c < row.size(); c++) // gamma = 1 + c / width, beta = 0.5
        y.push_back(
            (row[c] - mean) / std::sqrt(var + 1e-5) * (1.0 + double(c) / double(row.size())) + 0.5);
    return y;
}

int count_ops(const Graph &g, const std::string &op) {
    int n = 0;
    for (const Node &node : g.nodes)
        n += node.op_type == op;
    return n;
}

} // namespace

TEST_CASE("Softmax, LogSoftmax and LayerNorm over rows longer than a tile holds are decomposed "
          "into chunked reductions and elementwise steps; they match") {
    const std::string w = std::to_string(kWidth), shape = std::to_string(kRows) + ", " + w;
    std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[)" + shape + "] x, float[" +
                       w + "] gamma, float[" + w + "] beta) => (float[" + shape + "] s, float[" +
                       shape + "] l, float[" + shape + R"(] n) {
  s = Softmax <axis = -1> (x)
  l = LogSoftmax <axis = -1> (x)
  n = LayerNormalization <axis = -1, epsilon = 1e-5> (x, gamma, beta)
}
)";
    Graph g = load_text(text);
    const target::TargetInfo &trn1 = target::target_by_name("trn1");
    REQUIRE(kWidth > sched::whole_row_elems(trn1));
    Graph decomposed = g;
    // The three normalisations, and the LayerNorm's two reductions over its 3 rows of 9,000,
    // spread over the partitions; Softmax and LogSoftmax work on the view [3 * 40, 225] (40 the
    // largest divisor of 9,000 within 128 / 3), with a log-sum-exp per piece and per row.
    CHECK(decompose_long_rows(decomposed, sched::whole_row_elems(trn1), trn1.partitions) == 5);
    CHECK(count_ops(decomposed, "Softmax") + count_ops(decomposed, "LogSoftmax") +
              count_ops(decomposed, "LayerNormalization") ==
          0);
    CHECK(count_ops(decomposed, "ReduceLogSumExp") == 4);
    int piece_maxes = 0;
    for (const Node &node : decomposed.nodes)
        piece_maxes += node.op_type == "ReduceMax" &&
                       decomposed.value(node.inputs[0]).shape == Shape{120, 225};
    CHECK(piece_maxes == 2);
    Graph short_rows = g;
    CHECK(decompose_long_rows(short_rows, kWidth, trn1.partitions) ==
          0); // rows within the limit stay whole

    std::map<std::string, HostTensor> in = test::random_inputs(g, 21);
    for (int64_t c = 0; c < kWidth; c++) {
        in["gamma"].set_f64(c, 1.0 + double(c) / double(kWidth));
        in["beta"].set_f64(c, 0.5);
    }
    for (int64_t i = 0; i < kRows * kWidth; i += 997) // a few large values: the max matters
        in["x"].set_f64(i, 40.0 + double(i % 7));
    test::E2EResult r = test::compile_and_run(g, in);
    const HostTensor &x = in["x"];
    CHECK(rel_l2(r.outputs.at("s"),
                 per_row(x, kWidth, [](auto &v) { return softmax(v, false); })) <= 1e-5);
    CHECK(rel_l2(r.outputs.at("l"), per_row(x, kWidth, [](auto &v) { return softmax(v, true); })) <=
          1e-6);
    CHECK(rel_l2(r.outputs.at("n"), per_row(x, kWidth, layer_norm)) <= 1e-5);
}

TEST_CASE("A reduction over a long row accumulates chunks of it; an elementwise node over long "
          "rows computes chunks of columns; they match") {
    // Rows of 30,011 (a prime: no view spreads them over more partitions).
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 30011] x) => (float[4, 1] sum, float[4, 1] max, float[4, 30011] e)
    <int64[1] axes = {-1}> {
  sum = ReduceSum <keepdims = 1> (x, axes)
  max = ReduceMax <axes = [-1], keepdims = 1> (x)
  e = Exp(x)
}
)");
    std::map<std::string, HostTensor> in = test::random_inputs(g, 5);
    // Without residency, which would copy some of x's chunks from an earlier group's tiles.
    CompileOptions without_residency;
    without_residency.keep_resident = false;
    neff::Program p = test::compile_graph(g, without_residency);
    // Each of the three groups reads x in several chunks, none a whole row of 120 KB.
    int64_t whole_rows = 4 * 30011 * 4;
    CHECK(test::dmas_reading(p, "x") >= 3 * 2);
    test::for_each_dma_reading(p, "x", [&](const neff::Instr &i) {
        CHECK(int64_t(i.src.num_partitions) * i.src.free_count() * 4 < whole_rows);
    });
    CHECK(test::bytes_read_from(p, "x") >= 3 * whole_rows);
    test::E2EResult r = test::compile_and_run(g, in);
    const HostTensor &x = in["x"];
    std::vector<double> sums = per_row(x, 30011, [](auto &v) {
        double s = 0;
        for (double e : v)
            s += e;
        return std::vector<double>{s};
    });
    std::vector<double> maxes = per_row(x, 30011, [](auto &v) {
        return std::vector<double>{*std::max_element(v.begin(), v.end())};
    });
    std::vector<double> exps = per_row(x, 30011, [](auto &v) {
        std::vector<double> y;
        for (double e : v)
            y.push_back(std::exp(e));
        return y;
    });
    CHECK(rel_l2(r.outputs.at("sum"), sums) <= 1e-5);
    CHECK(rel_l2(r.outputs.at("max"), maxes) == 0);
    CHECK(rel_l2(r.outputs.at("e"), exps) <= 1e-6);
}

TEST_CASE("InstanceNorm whose rows fill the partitions but stay too wide is cut into rows within "
          "the limit") {
    // 64 channels over 8 x 8: two rows per channel fill the 128 partitions with rows of 32,
    // over the limit of 16: four rows per channel instead (256 rows of 16); matches.
    std::string ones, zeros;
    for (int i = 0; i < 64; i++) {
        ones += std::string(i ? ", " : "") + std::to_string(1.0 + 0.01 * i);
        zeros += std::string(i ? ", " : "") + std::to_string(0.1 - 0.003 * i);
    }
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 8, 8] x) => (float[1, 64, 8, 8] y)
    <float[64] s = {)" + ones +
                        "}, float[64] b = {" + zeros + R"(}> {
  y = InstanceNormalization <epsilon = 1e-5> (x, s, b)
}
)");
    Graph rewritten = g;
    CHECK(lower_group_norms(rewritten, 128, 16) == 1);
    int subs = 0;
    for (const Node &n : rewritten.nodes)
        if (n.op_type == "Sub") {
            CHECK(rewritten.value(n.outputs[0]).shape == Shape{256, 16});
            subs++;
        }
    CHECK(subs == 1);
    std::map<std::string, HostTensor> x = test::random_inputs(g, 9);
    HostTensor want = alg::run_reference(g, x).at("y");
    CHECK(test::compare(test::compile_and_run(rewritten, x).outputs.at("y"), want, 1e-4, 1e-5)
              .rel_l2 <= 1e-5);
}

TEST_CASE("Reductions over a few long rows are spread over the partitions: per piece, then per "
          "row") {
    // [2, 30000]: pieces of 500 (60 per row, 120 partitions), then the 60 pieces of each row.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 30000] x) => (float[2, 1] sum, float[2, 1] l2, float[2, 1] lse)
    <int64[1] axes = {-1}> {
  sum = ReduceSum <keepdims = 1> (x, axes)
  l2 = ReduceL2 <axes = [-1], keepdims = 1> (x)
  lse = ReduceLogSumExp <axes = [-1], keepdims = 1> (x)
}
)");
    Graph spread = g;
    const target::TargetInfo &trn1 = target::target_by_name("trn1");
    CHECK(decompose_long_rows(spread, sched::whole_row_elems(trn1), trn1.partitions) == 3);
    int pieces = 0;
    for (const Node &node : spread.nodes)
        pieces += node.op_type.rfind("Reduce", 0) == 0 &&
                  spread.value(node.inputs[0]).shape == Shape{120, 500};
    CHECK(pieces == 3);
    std::map<std::string, HostTensor> in = test::random_inputs(g, 8);
    test::E2EResult r = test::compile_and_run(g, in);
    std::vector<double> sums, l2s, lses;
    for (int64_t row = 0; row < 2; row++) {
        double s = 0, q = 0, e = 0;
        for (int64_t c = 0; c < 30000; c++) {
            double v = in["x"].get_f64(row * 30000 + c);
            s += v;
            q += v * v;
            e += std::exp(v);
        }
        sums.push_back(s);
        l2s.push_back(std::sqrt(q));
        lses.push_back(std::log(e));
    }
    CHECK(rel_l2(r.outputs.at("sum"), sums) <= 1e-5);
    CHECK(rel_l2(r.outputs.at("l2"), l2s) <= 1e-6);
    CHECK(rel_l2(r.outputs.at("lse"), lses) <= 1e-6);
}
