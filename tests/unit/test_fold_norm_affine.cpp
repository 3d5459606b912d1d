// graph/FoldNormAffine: a LayerNorm that only linear layers read leaves its scale and bias in
// their weights, and the graph computes the same values on the host reference (to the fp32
// roundings of the reassociation); a LayerNorm read by anything else keeps them.

#include "GraphText.h"
#include "algorithms/Reference.h"
#include "graph/FoldNormAffine.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace nhc;
using test::load_graph;
using test::node_of;

namespace {

std::string values(int n, double step, double offset) {
    std::string s;
    for (int i = 0; i < n; i++)
        s += (i ? ", " : "") + std::to_string(offset + std::sin(i * step));
    return s;
}

/** x [2, 3, 8] -> LayerNorm(g, b) -> [6, 8] view -> Gemm with W [8, 5] (or [5, 8], transB) and
 *  bias c, plus `extra` lines. */
std::string pre_ln(bool trans_b, bool with_c, const std::string &beta = "",
                   const std::string &extra = "", const std::string &extra_out = "") {
    std::string w_shape = trans_b ? "[5, 8]" : "[8, 5]";
    return R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 8] x) => (float[6, 5] y)" +
           extra_out + R"() <float[8] gamma = {)" + values(8, 0.7, 1.0) +
           R"(}, float[8] beta = {)" + (beta.empty() ? values(8, 1.3, 0.1) : beta) + R"(}, float)" +
           w_shape + R"( w = {)" + values(40, 0.37, 0.0) + R"(}, float[5] c = {)" +
           values(5, 2.1, 0.2) +
           R"(}, int64[2] flat = {6, 8}> {
  n = LayerNormalization <axis = -1> (x, gamma, beta)
  v = Reshape(n, flat)
  y = Gemm <transB = )" +
           (trans_b ? "1" : "0") + "> (v, w" + (with_c ? ", c" : "") + ")" + extra + R"(
}
)";
}

std::map<std::string, HostTensor> ramp_input() {
    HostTensor x(DType::Float32, {2, 3, 8});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, std::cos(double(i) * 0.9) * 2.0 + double(i % 3));
    return {{"x", x}};
}

void check_same_values(const Graph &before, const Graph &after, const char *out) {
    HostTensor want = alg::run_reference(before, ramp_input()).at(out);
    HostTensor got = alg::run_reference(after, ramp_input()).at(out);
    REQUIRE(want.numel() == got.numel());
    for (int64_t i = 0; i < want.numel(); i++)
        CHECK(got.get_f64(i) == doctest::Approx(want.get_f64(i)).epsilon(1e-5).scale(1.0));
}

} // namespace

TEST_CASE("a LayerNorm read only by linear layers leaves its scale and bias in their weights") {
    for (bool trans_b : {false, true}) {
        CAPTURE(trans_b);
        std::string text = pre_ln(trans_b, true);
        Graph before = load_graph(text), after = load_graph(text);
        REQUIRE(fold_norm_affine_into_linear(after) == 1);
        CHECK(node_of(after, "LayerNormalization").has_attr(kNoAffine));
        const Node &gemm = node_of(after, "Gemm");
        CHECK(gemm.inputs[1] != "w"); // new constants; w and c, read by nothing else, are gone
        CHECK(gemm.inputs[2] != "c");
        CHECK_FALSE(after.has_value("w"));
        CHECK_FALSE(after.has_value("c"));
        after.verify();
        check_same_values(before, after, "y");
        // A second run finds nothing more to fold.
        CHECK(fold_norm_affine_into_linear(after) == 0);
    }
}

TEST_CASE("a zero bias folds into a linear layer without one; other readers keep the affine") {
    // beta all zero, no c: folded, and no bias is added.
    Graph zero = load_graph(pre_ln(false, false, values(8, 0, -std::sin(0.0))));
    Graph zero_before = zero;
    REQUIRE(fold_norm_affine_into_linear(zero) == 1);
    CHECK(node_of(zero, "Gemm").inputs.size() == 2);
    check_same_values(zero_before, zero, "y");
    // A nonzero beta and no c: a bias would be added, so the LayerNorm keeps it.
    Graph shifted = load_graph(pre_ln(false, false));
    CHECK(fold_norm_affine_into_linear(shifted) == 0);
    // The normalised value is also read by an Add (a post-LN residual) or is a graph output.
    Graph residual = load_graph(pre_ln(false, true, "", "\n  r = Add(n, x)", ", float[2, 3, 8] r"));
    CHECK(fold_norm_affine_into_linear(residual) == 0);
    Graph output = load_graph(pre_ln(false, true, "", "", ", float[2, 3, 8] n"));
    CHECK(fold_norm_affine_into_linear(output) == 0);
}
