// graph/FoldSoftmaxScale: attention's scale by 1/sqrt(d) before a Softmax becomes the Softmax's
// input scale when it is exact, and the folded Softmax computes the same values on the host
// reference (the same bits on the simulator: tests/e2e/test_codegen_passes.cpp).

#include "GraphText.h"
#include "algorithms/Reference.h"
#include "frontend/Frontend.h"
#include "graph/FoldSoftmaxScale.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace nhc;
using test::load_graph;
using test::op_types;

namespace {

/** Scores q·kᵀ scaled by `op` (Div or Mul) with the constant `c`, then Softmax over the keys. */
std::string attention_scores(const std::string &op, const std::string &c,
                             const std::string &extra_output = "") {
    return R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 8, 16] q, float[2, 16, 8] kt) => (float[2, 8, 8] y)" +
           extra_output + R"() <float c = {)" + c + R"(}> {
  s = MatMul(q, kt)
  d = )" + op +
           R"((s, c)
  y = Softmax(d)
}
)";
}

HostTensor ramp(const Shape &shape, double step) {
    HostTensor t(DType::Float32, shape);
    for (int64_t i = 0; i < t.numel(); i++)
        t.set_f64(i, std::sin(double(i)) * step * double(i % 7));
    return t;
}

} // namespace

TEST_CASE("a Div by sqrt(64) before a Softmax becomes the Softmax's input scale") {
    Graph g = load_graph(attention_scores("Div", "8.0"));
    REQUIRE(fold_softmax_scales(g) == 1);
    CHECK(op_types(g) == std::vector<std::string>{"MatMul", "Softmax"});
    CHECK(g.nodes[1].inputs == std::vector<std::string>{"s"});
    CHECK(g.nodes[1].attr_float(kSoftmaxInputScale, 0) == 0.125);
    g.verify();
    // A second run finds nothing more to fold.
    CHECK(fold_softmax_scales(g) == 0);
}

TEST_CASE("a Mul by a positive constant before a Softmax is folded, in either operand order") {
    Graph g = load_graph(attention_scores("Mul", "0.2"));
    REQUIRE(fold_softmax_scales(g) == 1);
    CHECK(g.nodes[1].attr_float(kSoftmaxInputScale, 0) == doctest::Approx(0.2));
}

TEST_CASE("scales that would change the values or are read elsewhere are not folded") {
    // 1/3 is not exact: x / 3 and x * (1/3) differ in the last bit for some x.
    Graph div3 = load_graph(attention_scores("Div", "3.0"));
    CHECK(fold_softmax_scales(div3) == 0);
    // A negative scale reverses the order: the max of x is not the max of x * s.
    Graph negative = load_graph(attention_scores("Mul", "-0.5"));
    CHECK(fold_softmax_scales(negative) == 0);
    // The scaled scores are also a graph output: they must still be computed.
    Graph shared = load_graph(attention_scores("Div", "8.0", ", float[2, 8, 8] d"));
    CHECK(fold_softmax_scales(shared) == 0);
}

TEST_CASE("the folded Softmax computes what the Div and Softmax it replaces computed") {
    for (const char *op : {"Div", "Mul"}) {
        CAPTURE(op);
        std::string text = attention_scores(op, std::string(op) == "Div" ? "8.0" : "0.125");
        Graph before = load_graph(text), after = load_graph(text);
        REQUIRE(fold_softmax_scales(after) == 1);
        std::map<std::string, HostTensor> in = {{"q", ramp({2, 8, 16}, 0.9)},
                                                {"kt", ramp({2, 16, 8}, 1.3)}};
        HostTensor want = alg::run_reference(before, in).at("y");
        HostTensor got = alg::run_reference(after, in).at("y");
        REQUIRE(want.numel() == got.numel());
        // Halide's CPU JIT may round x * s + b once (a fused multiply-add) where ScalarE rounds
        // twice, so the host agrees to float precision rather than to the bit.
        for (int64_t i = 0; i < want.numel(); i++)
            CHECK(got.get_f64(i) == doctest::Approx(want.get_f64(i)).epsilon(1e-6));
    }
}

TEST_CASE("a scale of q before the scores' MatMul moves past it when it is a power of two") {
    // torchvision's ViT: q / sqrt(d) first, then q·kᵀ, then Softmax.
    auto text = [](const std::string &op, const std::string &c) {
        return R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 8, 16] q, float[2, 16, 8] kt) => (float[2, 8, 8] y) <float c = {)" +
               c + R"(}> {
  d = )" + op + R"((q, c)
  s = MatMul(d, kt)
  y = Softmax(s)
}
)";
    };
    Graph g = load_graph(text("Div", "4.0"));
    REQUIRE(fold_softmax_scales(g) == 1);
    CHECK(op_types(g) == std::vector<std::string>{"MatMul", "Softmax"});
    CHECK(g.nodes[0].inputs == std::vector<std::string>{"q", "kt"});
    CHECK(g.nodes[1].attr_float(kSoftmaxInputScale, 0) == 0.25);
    g.verify();
    // The same values as scaling q first.
    Graph before = load_graph(text("Div", "4.0"));
    std::map<std::string, HostTensor> in = {{"q", ramp({2, 8, 16}, 0.9)},
                                            {"kt", ramp({2, 16, 8}, 1.3)}};
    HostTensor want = alg::run_reference(before, in).at("y");
    HostTensor got = alg::run_reference(g, in).at("y");
    for (int64_t i = 0; i < want.numel(); i++)
        CHECK(got.get_f64(i) == doctest::Approx(want.get_f64(i)).epsilon(1e-6));
    // Past a MatMul only a power of two scales every rounding exactly: a Mul by 0.2 stays.
    Graph fifth = load_graph(text("Mul", "0.2"));
    CHECK(fold_softmax_scales(fifth) == 0);
    Graph quarter = load_graph(text("Mul", "0.25"));
    CHECK(fold_softmax_scales(quarter) == 1);
}
