// Operators the graph passes express with others (graph/Decompose) and Round, checked on the
// simulator against values worked out by hand from the ONNX specification.

#include "TextCases.h"

#include <cmath>
#include <doctest/doctest.h>

using namespace nhc;
using test::load_text;

namespace {

/** A float32 tensor of `shape` holding `values`. */
HostTensor f32(const Shape &shape, const std::vector<double> &values) {
    HostTensor t(DType::Float32, shape);
    for (size_t i = 0; i < values.size(); i++)
        t.set_f64(static_cast<int64_t>(i), values[i]);
    return t;
}

/** The only output of `text` run on the simulator with `inputs`, as doubles. */
std::vector<double> run_text(const std::string &text,
                             const std::map<std::string, HostTensor> &inputs, Shape *shape) {
    Graph g = load_text(text);
    test::E2EResult r = test::compile_and_run(g, inputs);
    const HostTensor &y = r.outputs.at(g.outputs[0]);
    if (shape)
        *shape = y.shape();
    std::vector<double> v;
    for (int64_t i = 0; i < y.numel(); i++)
        v.push_back(y.get_f64(i));
    return v;
}

const std::vector<double> kRow = {1, 2, 3, 4}; // x = [[1, 2, 3, 4], [5, 6, 7, 8]]
const std::vector<double> kTwoRows = {1, 2, 3, 4, 5, 6, 7, 8};

} // namespace

TEST_CASE("Pad: constant, edge and reflect modes, and negative pads crop") {
    std::map<std::string, HostTensor> in = {{"x", f32({2, 4}, kTwoRows)}};
    Shape s;
    // Constant 9: one row before, one column after; the last column cropped by a -1.
    std::vector<double> y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[3, 4] y) <int64[4] p = {1, 1, 0, -1}, float v = {9}> {
  y = Pad <mode = "constant"> (x, p, v)
}
)",
                                     in, &s);
    CHECK(s == Shape{3, 4});
    CHECK(y == std::vector<double>{9, 9, 9, 9, 9, 1, 2, 3, 9, 5, 6, 7});
    y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 7] y) <int64[4] p = {0, 2, 0, 1}> {
  y = Pad <mode = "edge"> (x, p)
}
)",
                 in, &s);
    CHECK(y == std::vector<double>{1, 1, 1, 2, 3, 4, 4, 5, 5, 5, 6, 7, 8, 8});
    y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 9] y) <int64[4] p = {0, 2, 0, 3}> {
  y = Pad <mode = "reflect"> (x, p)
}
)",
                 in, &s);
    CHECK(y == std::vector<double>{3, 2, 1, 2, 3, 4, 3, 2, 1, 7, 6, 5, 6, 7, 8, 7, 6, 5});
}

TEST_CASE("Tile repeats along each axis; Trilu keeps a triangle from diagonal k") {
    std::map<std::string, HostTensor> in = {{"x", f32({2, 4}, kTwoRows)}};
    Shape s;
    std::vector<double> y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[4, 8] y) <int64[2] r = {2, 2}> { y = Tile(x, r) }
)",
                                     in, &s);
    REQUIRE(s == Shape{4, 8});
    for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < 8; j++)
            REQUIRE(y[static_cast<size_t>(i * 8 + j)] == kTwoRows[(i % 2) * 4 + j % 4]);
    y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) <int64 k = {1}> { y = Trilu <upper = 1> (x, k) }
)",
                 in, &s);
    CHECK(y == std::vector<double>{0, 2, 3, 4, 0, 0, 7, 8});
    y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) <int64 k = {-1}> { y = Trilu <upper = 0> (x, k) }
)",
                 in, &s);
    CHECK(y == std::vector<double>{0, 0, 0, 0, 5, 0, 0, 0});
}

TEST_CASE("OneHot: on/off values at run time, negative indices from the end, other axes") {
    HostTensor idx(DType::Int64, {3});
    idx.set_i64(0, 0);
    idx.set_i64(1, -1);
    idx.set_i64(2, 7); // out of range: all off
    std::map<std::string, HostTensor> in = {{"i", idx}, {"v", f32({2}, {-2, 5})}};
    Shape s;
    std::vector<double> y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[3] i, float[2] v) => (float[4, 3] y) <int64 d = {4}> { y = OneHot <axis = 0> (i, d, v) }
)",
                                     in, &s);
    CHECK(s == Shape{4, 3});
    CHECK(y == std::vector<double>{5, -2, -2, -2, -2, -2, -2, -2, -2, -2, 5, -2});
}

TEST_CASE("Compress selects runs along an axis, or of the flattened input; EyeLike is constant") {
    std::map<std::string, HostTensor> in = {{"x", f32({2, 4}, kTwoRows)}};
    Shape s;
    std::vector<double> y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 3] y) <bool[4] c = {1, 0, 1, 1}> { y = Compress <axis = 1> (x, c) }
)",
                                     in, &s);
    CHECK(s == Shape{2, 3});
    CHECK(y == std::vector<double>{1, 3, 4, 5, 7, 8});
    y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2] y) <bool[6] c = {0, 0, 0, 1, 0, 1}> { y = Compress(x, c) }
)",
                 in, &s);
    CHECK(y == std::vector<double>{4, 6});
    y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) { y = EyeLike <k = 1> (x) }
)",
                 in, &s);
    CHECK(y == std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0});
}

TEST_CASE("Round rounds halves to even") {
    std::vector<double> x = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51, 3.7, -3.7, 8388609};
    std::map<std::string, HostTensor> in = {{"x", f32({11}, x)}};
    std::vector<double> y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[11] x) => (float[11] y) { y = Round(x) }
)",
                                     in, nullptr);
    CHECK(y == std::vector<double>{-2, -2, -0.0, 0, 2, 2, 0, -1, 4, -4, 8388609});
}

TEST_CASE("Operands given at run time: Trilu's k is compared on the engines; Expand's shape and "
          "Split's sizes restate the static output shapes") {
    HostTensor k(DType::Int64, {});
    k.set_i64(0, 1);
    std::map<std::string, HostTensor> in = {{"x", f32({2, 4}, kTwoRows)}, {"k", k}};
    Shape s;
    std::vector<double> y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x, int64 k) => (float[2, 4] y) { y = Trilu <upper = 1> (x, k) }
)",
                                     in, &s);
    CHECK(y == std::vector<double>{0, 2, 3, 4, 0, 0, 7, 8});
    HostTensor shape(DType::Int64, {3});
    for (int64_t i = 0; i < 3; i++)
        shape.set_i64(i, std::vector<int64_t>{3, 2, 4}[static_cast<size_t>(i)]);
    y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x, int64[3] s) => (float[3, 2, 4] y) { y = Expand(x, s) }
)",
                 {{"x", f32({2, 4}, kTwoRows)}, {"s", shape}}, &s);
    CHECK(s == Shape{3, 2, 4});
    for (size_t i = 0; i < y.size(); i++)
        REQUIRE(y[i] == kTwoRows[i % 8]);
    HostTensor sizes(DType::Int64, {2});
    sizes.set_i64(0, 1);
    sizes.set_i64(1, 3);
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x, int64[2] n) => (float[2, 1] a, float[2, 3] b) { a, b = Split <axis = 1> (x, n) }
)");
    test::E2EResult r = test::compile_and_run(g, {{"x", f32({2, 4}, kTwoRows)}, {"n", sizes}});
    const HostTensor &b = r.outputs.at("b");
    CHECK(r.outputs.at("a").get_f64(1) == 5);
    CHECK(b.get_f64(0) == 2);
    CHECK(b.get_f64(5) == 8);
}

TEST_CASE("LRN and MeanVarianceNormalization match their specification formulas") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 5, 3, 2] x) => (float[2, 5, 3, 2] y, float[2, 5, 3, 2] z) {
  y = LRN <size = 4, alpha = 0.5, beta = 0.6, bias = 1.5> (x)
  z = MeanVarianceNormalization(x)
}
)");
    std::map<std::string, HostTensor> in = test::random_inputs(g, 7);
    const HostTensor &x = in.at("x");
    test::E2EResult r = test::compile_and_run(g, in);
    auto at = [&](int64_t n, int64_t c, int64_t hw) { return x.get_f64((n * 5 + c) * 6 + hw); };
    double worst_lrn = 0, worst_mvn = 0;
    for (int64_t c = 0; c < 5; c++) {
        double sum = 0, sum_sq = 0; // MVN: over N, H, W per channel
        for (int64_t n = 0; n < 2; n++)
            for (int64_t hw = 0; hw < 6; hw++) {
                sum += at(n, c, hw);
                sum_sq += at(n, c, hw) * at(n, c, hw);
            }
        double mean = sum / 12, std_dev = std::sqrt(sum_sq / 12 - mean * mean);
        for (int64_t n = 0; n < 2; n++)
            for (int64_t hw = 0; hw < 6; hw++) {
                double square_sum = 0; // channels c - 1 .. c + 2 (size 4)
                for (int64_t i = std::max<int64_t>(0, c - 1); i <= std::min<int64_t>(4, c + 2); i++)
                    square_sum += at(n, i, hw) * at(n, i, hw);
                double lrn = at(n, c, hw) / std::pow(1.5 + 0.5 / 4 * square_sum, 0.6);
                double mvn = (at(n, c, hw) - mean) / (std_dev + 1e-9);
                int64_t i = (n * 5 + c) * 6 + hw;
                worst_lrn = std::max(worst_lrn, std::fabs(r.outputs.at("y").get_f64(i) - lrn));
                worst_mvn = std::max(worst_mvn, std::fabs(r.outputs.at("z").get_f64(i) - mvn));
            }
    }
    CHECK(worst_lrn < 1e-5);
    CHECK(worst_mvn < 1e-4);
}

TEST_CASE("ScatterND of slices along axis 0: replaced rows (a negative index from the end), or "
          "added (a repeated index accumulates)") {
    std::vector<double> data, updates;
    for (int i = 0; i < 5 * 2 * 3; i++)
        data.push_back(i);
    for (int i = 0; i < 2 * 2 * 3; i++)
        updates.push_back(100 + i);
    std::map<std::string, HostTensor> in = {{"x", f32({5, 2, 3}, data)},
                                            {"u", f32({2, 2, 3}, updates)}};
    Shape s;
    std::vector<double> y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[5, 2, 3] x, float[2, 2, 3] u) => (float[5, 2, 3] y) <int64[2, 1] i = {1, -1}> {
  y = ScatterND(x, i, u)
}
)",
                                     in, &s);
    std::vector<double> want = data;
    for (int k = 0; k < 6; k++) {
        want[size_t(6 + k)] = 100 + k;  // row 1
        want[size_t(24 + k)] = 106 + k; // row -1: 4
    }
    CHECK(s == Shape{5, 2, 3});
    CHECK(y == want);
    y = run_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[5, 2, 3] x, float[2, 2, 3] u) => (float[5, 2, 3] y) <int64[2, 1] i = {3, 3}> {
  y = ScatterND <reduction = "add"> (x, i, u)
}
)",
                 in, &s);
    want = data;
    for (int k = 0; k < 6; k++)
        want[size_t(18 + k)] += 100 + k + 106 + k;
    CHECK(y == want);
}
