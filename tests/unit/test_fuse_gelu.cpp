// graph/FuseGelu: both exporter forms of GELU become one Gelu node, and that node's algorithm
// (a pure extern call linked into the host JIT) computes what the chain computed.

#include "GraphText.h"
#include "algorithms/Reference.h"
#include "frontend/Frontend.h"
#include "graph/FuseGelu.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace nhc;
using test::load_graph;
using test::op_types;

namespace {

// F.gelu as torch exports it: x / sqrt(2) -> Erf -> + 1 -> x * . -> * 0.5.
const char *kErfGelu = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4, 8] x) => (float[4, 8] y) <float r2 = {1.4142135}, float one = {1.0},
    float half = {0.5}> {
  d = Div(x, r2)
  e = Erf(d)
  a = Add(e, one)
  m = Mul(x, a)
  y = Mul(m, half)
}
)";

// GPT-2's gelu_new: 0.5 x first, then (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
const char *kTanhGelu = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4, 8] x) => (float[4, 8] y) <float half = {0.5}, float three = {3.0},
    float c = {0.044715}, float k = {0.7978845608}, float one = {1.0}> {
  h = Mul(x, half)
  p = Pow(x, three)
  q = Mul(p, c)
  s = Add(x, q)
  t = Mul(s, k)
  th = Tanh(t)
  a = Add(th, one)
  y = Mul(h, a)
}
)";

/** The reference outputs of `g` before and after the pass agree on a ramp of inputs. */
void check_same_values(const std::string &text) {
    Graph before = load_graph(text), after = load_graph(text);
    REQUIRE(fuse_gelu_patterns(after) == 1);
    HostTensor x(DType::Float32, {4, 8});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, -4.0 + 0.25 * double(i));
    HostTensor want = alg::run_reference(before, {{"x", x}}).at("y");
    HostTensor got = alg::run_reference(after, {{"x", x}}).at("y");
    for (int64_t i = 0; i < x.numel(); i++)
        CHECK(got.get_f64(i) == doctest::Approx(want.get_f64(i)).epsilon(1e-5));
}

} // namespace

TEST_CASE("the erf form of GELU becomes one Gelu node with the same values") {
    Graph g = load_graph(kErfGelu);
    REQUIRE(fuse_gelu_patterns(g) == 1);
    CHECK(op_types(g) == std::vector<std::string>{"Gelu"});
    CHECK(g.nodes[0].inputs == std::vector<std::string>{"x"});
    CHECK(g.nodes[0].outputs == std::vector<std::string>{"y"});
    CHECK(g.nodes[0].attr_string("approximate", "") == "none");
    g.verify();
    check_same_values(kErfGelu);
}

TEST_CASE("the tanh form of GELU becomes one Gelu node with the same values") {
    Graph g = load_graph(kTanhGelu);
    REQUIRE(fuse_gelu_patterns(g) == 1);
    CHECK(op_types(g) == std::vector<std::string>{"Gelu"});
    CHECK(g.nodes[0].attr_string("approximate", "") == "tanh");
    g.verify();
    check_same_values(kTanhGelu);
}

TEST_CASE("a GELU-like chain with another constant or an escaping intermediate is left alone") {
    std::string wrong_scale = kErfGelu;
    wrong_scale.replace(wrong_scale.find("1.4142135"), 9, "1.5000000");
    Graph g = load_graph(wrong_scale);
    CHECK(fuse_gelu_patterns(g) == 0);
    CHECK(g.nodes.size() == 5);

    std::string escaping = kErfGelu;
    escaping.replace(escaping.find("(float[4, 8] y)"), 15, "(float[4, 8] y, float[4, 8] e)");
    Graph g2 = load_graph(escaping);
    CHECK(fuse_gelu_patterns(g2) == 0);
    CHECK(g2.nodes.size() == 5);
}
