// graph/FuseSwish: SiLU as PyTorch exports it, Mul(x, Sigmoid(x)), becomes one Swish node whose
// algorithm (a pure extern call, ACT's silu) computes what the pair computed; Sigmoid alone is
// one pure extern call too (ACT's sigmoid).

#include "GraphText.h"
#include "algorithms/Reference.h"
#include "frontend/Frontend.h"
#include "graph/FuseSwish.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace nhc;
using test::load_graph;
using test::op_types;

namespace {

// SiLU in both operand orders, and a Sigmoid that its own Mul does not read alone.
const char *kSilu = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4, 8] x, float[4, 8] z) => (float[4, 8] y, float[4, 8] w) {
  s = Sigmoid(x)
  y = Mul(x, s)
  t = Sigmoid(z)
  w = Mul(t, z)
}
)";

HostTensor ramp() {
    HostTensor x(DType::Float32, {4, 8});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, -12.0 + 0.75 * double(i));
    return x;
}

} // namespace

TEST_CASE("x * Sigmoid(x), in either order, becomes one Swish with the same values") {
    Graph before = load_graph(kSilu), g = load_graph(kSilu);
    REQUIRE(fuse_swish_patterns(g) == 2);
    CHECK(op_types(g) == std::vector<std::string>{"Swish", "Swish"});
    CHECK(g.nodes[0].inputs == std::vector<std::string>{"x"});
    CHECK(g.nodes[1].inputs == std::vector<std::string>{"z"});
    CHECK(g.nodes[1].outputs == std::vector<std::string>{"w"});
    CHECK(g.nodes[0].attr_float("alpha", 0.0) == 1.0);
    g.verify();
    std::map<std::string, HostTensor> in = {{"x", ramp()}, {"z", ramp()}};
    auto want = alg::run_reference(before, in), got = alg::run_reference(g, in);
    for (const char *out : {"y", "w"})
        for (int64_t i = 0; i < in.at("x").numel(); i++)
            CHECK(got.at(out).get_f64(i) == doctest::Approx(want.at(out).get_f64(i)).epsilon(1e-6));
}

TEST_CASE("a Sigmoid read elsewhere, or of another value than the Mul's, is left alone") {
    std::string escaping = kSilu;
    escaping.replace(escaping.find("(float[4, 8] y, float[4, 8] w)"), 30,
                     "(float[4, 8] y, float[4, 8] w, float[4, 8] s)");
    Graph g = load_graph(escaping);
    CHECK(fuse_swish_patterns(g) == 1);
    CHECK(op_types(g) == std::vector<std::string>{"Sigmoid", "Mul", "Swish"});
    std::string other = kSilu;
    other.replace(other.find("w = Mul(t, z)"), 13, "w = Mul(t, x)");
    Graph g2 = load_graph(other);
    CHECK(fuse_swish_patterns(g2) == 1);
    CHECK(op_types(g2) == std::vector<std::string>{"Swish", "Sigmoid", "Mul"});
}
