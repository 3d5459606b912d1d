// graph/CausalMask: a Where of a constant lower-triangular mask becomes TriangularWhere, which
// computes the same values on the host reference; graph/FoldSoftmaxScale then folds the scale
// before it into the Softmax. The code generator's affine_select is checked end to end in
// tests/e2e/test_codegen_passes.cpp.

#include "GraphText.h"
#include "algorithms/Reference.h"
#include "graph/CausalMask.h"
#include "graph/FoldSoftmaxScale.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>

using namespace nhc;
using test::load_graph;
using test::node_of;
using test::op_types;

namespace {

/** A [rows, cols] bool mask as ONNX text values, keep(i, j) for each element. */
std::string mask_values(int rows, int cols, const std::function<bool(int, int)> &keep) {
    std::string s;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            s += std::string(s.empty() ? "" : ", ") + (keep(i, j) ? "1" : "0");
    return s;
}

/** Scores [2, 3, rows, cols] divided by 8, masked by `keep` with `fill`, then Softmax. */
std::string masked_softmax(int rows, int cols, const std::function<bool(int, int)> &keep,
                           const std::string &fill = "-3.4028235e38") {
    return R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, )" +
           std::to_string(rows) + ", " + std::to_string(cols) + R"(] s) => (float[2, 3, )" +
           std::to_string(rows) + ", " + std::to_string(cols) + R"(] y)
    <bool[1, 1, )" +
           std::to_string(rows) + ", " + std::to_string(cols) + "] m = {" +
           mask_values(rows, cols, keep) + "}, float f = {" + fill + R"(}, float c = {8.0}> {
  d = Div(s, c)
  w = Where(m, d, f)
  y = Softmax(w)
}
)";
}

HostTensor ramp(const Shape &shape) {
    HostTensor t(DType::Float32, shape);
    for (int64_t i = 0; i < t.numel(); i++)
        t.set_f64(i, std::sin(double(i)) * 3.0 * double(i % 5));
    return t;
}

} // namespace

TEST_CASE("a Where of a constant causal mask becomes an index test of x alone") {
    for (int k : {0, 1, 4}) {
        CAPTURE(k);
        Graph g = load_graph(masked_softmax(8, 12, [&](int i, int j) { return j <= i + k; }));
        REQUIRE(lower_triangular_masks(g) == 1);
        const Node &t = node_of(g, "TriangularWhere");
        CHECK(is_triangular_where(t));
        CHECK(t.inputs == std::vector<std::string>{"d"});
        CHECK(t.attr_int("diagonal", -99) == k);
        CHECK(t.attr_float("fill", 0) == doctest::Approx(-3.4028235e38));
        g.verify();
    }
}

TEST_CASE("masks that are not one lower triangle, or runtime masks, stay Where nodes") {
    auto lowered = [](const std::string &text) {
        Graph g = load_graph(text);
        return lower_triangular_masks(g);
    };
    // Upper triangle, one element flipped, every element kept, a fill that is not a scalar.
    CHECK(lowered(masked_softmax(8, 8, [](int i, int j) { return j >= i; })) == 0);
    CHECK(lowered(masked_softmax(8, 8,
                                 [](int i, int j) { return j <= i && !(i == 5 && j == 2); })) == 0);
    CHECK(lowered(masked_softmax(8, 8, [](int, int) { return true; })) == 0);
    CHECK(lowered(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 4] s, bool[4, 4] m) => (float[4, 4] y) <float f = {-1e30}> {
  y = Where(m, s, f)
}
)") == 0);
}

TEST_CASE("the index test and the folded scale compute what the mask and the Div computed") {
    std::string text = masked_softmax(8, 12, [](int i, int j) { return j <= i + 1; });
    Graph before = load_graph(text), after = load_graph(text);
    REQUIRE(lower_triangular_masks(after) == 1);
    REQUIRE(fold_softmax_scales(after) == 1);
    CHECK(op_types(after) == std::vector<std::string>{"TriangularWhere", "Softmax"});
    CHECK(node_of(after, "TriangularWhere").inputs == std::vector<std::string>{"s"});
    CHECK(node_of(after, "Softmax").attr_float(kSoftmaxInputScale, 0) == 0.125);
    after.verify();
    std::map<std::string, HostTensor> in = {{"s", ramp({2, 3, 8, 12})}};
    HostTensor want = alg::run_reference(before, in).at("y");
    HostTensor got = alg::run_reference(after, in).at("y");
    REQUIRE(want.numel() == got.numel());
    for (int64_t i = 0; i < want.numel(); i++) {
        CAPTURE(i);
        // Masked terms are exactly 0 either way; kept ones agree to float precision (the host
        // JIT may fuse the scale's multiply-add).
        if (want.get_f64(i) == 0)
            CHECK(got.get_f64(i) == 0);
        else
            CHECK(got.get_f64(i) == doctest::Approx(want.get_f64(i)).epsilon(1e-6));
    }
}

TEST_CASE("the scale is not folded past a mask whose masked terms need not vanish") {
    // A fill of -100: exp(-100 - max) and exp((-100 - max') / 8) differ.
    Graph near = load_graph(masked_softmax(
        8, 8, [](int i, int j) { return j <= i; }, "-100.0"));
    REQUIRE(lower_triangular_masks(near) == 1);
    CHECK(fold_softmax_scales(near) == 0);
    // A scale of 1e-37: finfo.min * 1e-37 is -34, whose exponential is not 0.
    std::string tiny = masked_softmax(8, 8, [](int i, int j) { return j <= i; });
    tiny.replace(tiny.find("d = Div(s, c)"), 13, "d = Mul(s, c)");
    tiny.replace(tiny.find("float c = {8.0}"), 15, "float c = {1e-37}");
    Graph tiny_scale = load_graph(tiny);
    REQUIRE(lower_triangular_masks(tiny_scale) == 1);
    CHECK(fold_softmax_scales(tiny_scale) == 0);
    CHECK(op_types(tiny_scale) == std::vector<std::string>{"Mul", "TriangularWhere", "Softmax"});
    // Diagonal -1: the first row keeps nothing, its softmax is not one of kept terms.
    Graph empty_row = load_graph(masked_softmax(8, 8, [](int i, int j) { return j <= i - 1; }));
    REQUIRE(lower_triangular_masks(empty_row) == 1);
    CHECK(fold_softmax_scales(empty_row) == 0);
}
