// graph/SplitLinear and graph/UnitAxisTransposes: the exporters' fused Q/K/V projections cut by
// Slices become one linear layer per piece, and Transposes that move only unit axes
// become Reshapes; the values do not change.

#include "GraphText.h"
#include "algorithms/Reference.h"
#include "frontend/Frontend.h"
#include "graph/SplitLinear.h"
#include "graph/UnitAxisTransposes.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace nhc;
using test::load_graph;
using test::op_types;

namespace {

HostTensor ramp(const Shape &shape) {
    HostTensor t(DType::Float32, shape);
    for (int64_t i = 0; i < t.numel(); i++)
        t.set_f64(i, std::sin(0.37 * double(i)));
    return t;
}

/** The reference outputs of `text` with and without `pass` agree exactly (each piece computes
 *  the same dot products as the whole layer did). */
template <typename Pass>
void check_same_values(const std::string &text, Pass pass, const std::vector<std::string> &outs) {
    Graph before = load_graph(text), after = load_graph(text);
    REQUIRE(pass(after) > 0);
    after.verify();
    std::map<std::string, HostTensor> in;
    for (const std::string &name : before.inputs)
        in[name] = ramp(before.value(name).shape);
    auto want = alg::run_reference(before, in), got = alg::run_reference(after, in);
    for (const std::string &o : outs) {
        CAPTURE(o);
        REQUIRE(want.at(o).numel() == got.at(o).numel());
        for (int64_t i = 0; i < want.at(o).numel(); i++)
            CHECK(got.at(o).get_f64(i) == doctest::Approx(want.at(o).get_f64(i)).epsilon(1e-6));
    }
}

/** `count` constants as ONNX text: a pattern of signs and sizes that no two columns share. */
std::string values(int count) {
    std::string out;
    for (int i = 0; i < count; i++)
        out += (i ? ", " : "") + std::to_string(0.125 * ((i * 7) % 13) - 0.75);
    return out;
}

// nn.MultiheadAttention's in-projection: one MatMul + bias Add, cut in three by Slices.
std::string sliced_projection(const std::string &extra_output = "") {
    return R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[6, 1, 8] x) => (float[6, 1, 8] q, float[6, 1, 8] k, float[6, 1, 8] v)" +
           extra_output + R"() <float[8, 24] w = {)" + values(8 * 24) + R"(},
    float[24] b = {)" +
           values(24) + R"(}, int64[1] s0 = {0}, int64[1] s1 = {8},
    int64[1] s2 = {16}, int64[1] s3 = {24}, int64[1] last = {-1}> {
  y = MatMul(x, w)
  yb = Add(b, y)
  q = Slice(yb, s0, s1, last)
  k = Slice(yb, s1, s2, last)
  v = Slice(yb, s2, s3, last)
}
)";
}

} // namespace

TEST_CASE("a linear layer cut by Slices of its last axis becomes one layer per piece") {
    Graph g = load_graph(sliced_projection()), original = load_graph(sliced_projection());
    REQUIRE(split_sliced_linear_layers(g) == 1);
    CHECK(op_types(g) ==
          std::vector<std::string>{"MatMul", "Add", "MatMul", "Add", "MatMul", "Add"});
    // Each piece reads the input with its 8 columns of the weight and of the bias, and computes
    // the Slice's value itself.
    for (int j = 0; j < 3; j++) {
        const Node &mm = g.nodes[size_t(2 * j)], &add = g.nodes[size_t(2 * j + 1)];
        CHECK(mm.inputs[0] == "x");
        CHECK(g.value(mm.inputs[1]).shape == Shape{8, 8});
        for (int64_t e = 0; e < 64; e++) // row e / 8, column 8j + e % 8 of the whole weight
            CHECK(g.value(mm.inputs[1]).constant->get_f64(e) ==
                  original.value("w").constant->get_f64(e / 8 * 24 + 8 * j + e % 8));
        CHECK(g.value(add.inputs[1]).shape == Shape{8});
        CHECK(g.value(add.inputs[1]).constant->get_f64(3) ==
              original.value("b").constant->get_f64(8 * j + 3));
        CHECK(add.outputs[0] == std::vector<std::string>{"q", "k", "v"}[size_t(j)]);
    }
    check_same_values(sliced_projection(), [](Graph &h) { return split_sliced_linear_layers(h); },
                      {"q", "k", "v"});
}

TEST_CASE("a Gemm viewed by a Reshape and cut by Slices becomes a Gemm and a Reshape per piece") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 6] x) => (float[1, 4, 4] q, float[1, 4, 4] k, float[1, 4, 4] v)
    <float[6, 12] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6,
    7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
    float[12] c = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, int64[3] shape = {1, 4, 12},
    int64[1] s0 = {0}, int64[1] s1 = {4}, int64[1] s2 = {8}, int64[1] s3 = {12},
    int64[1] axis = {2}> {
  y = Gemm(x, w, c)
  r = Reshape(y, shape)
  q = Slice(r, s0, s1, axis)
  k = Slice(r, s1, s2, axis)
  v = Slice(r, s2, s3, axis)
}
)";
    Graph g = load_graph(text);
    REQUIRE(split_sliced_linear_layers(g) == 1);
    CHECK(op_types(g) ==
          std::vector<std::string>{"Gemm", "Reshape", "Gemm", "Reshape", "Gemm", "Reshape"});
    CHECK(g.value(g.nodes[2].inputs[1]).shape == Shape{6, 4});
    CHECK(g.value(g.nodes[2].inputs[2]).constant->get_f64(0) == 5);
    CHECK(g.nodes[3].outputs[0] == "k");
    check_same_values(text, [](Graph &h) { return split_sliced_linear_layers(h); },
                      {"q", "k", "v"});
}

TEST_CASE("a layer cut by a Split, or whose result something else reads, is not cut") {
    Graph split = load_graph(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 6] x) => (float[4, 4] q, float[4, 8] kv) <float[6, 12] w = {)" +
                             values(72) + R"(}, int64[2] sizes = {4, 8}> {
  y = MatMul(x, w)
  q, kv = Split <axis = 1> (y, sizes)
}
)");
    CHECK(split_sliced_linear_layers(split) == 0);
    // yb is also a graph output: the whole product must still be computed.
    Graph g = load_graph(sliced_projection(", float[6, 1, 24] yb"));
    CHECK(split_sliced_linear_layers(g) == 0);
}

TEST_CASE("with cut_splits (unet-inference), a layer cut by a Split is one layer per piece") {
    // SD's attention: qkv = Linear(x), then Split into three along the last axis; sizes from
    // the second input, then equal parts.
    for (std::string split :
         {"q, k, v = Split <axis = -1> (y, sizes)", "q, k, v = Split <axis = 1> (y)"}) {
        CAPTURE(split);
        std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 6] x) => (float[4, 4] q, float[4, 4] k, float[4, 4] v) <float[6, 12] w = {)" +
                           values(72) + R"(}, int64[3] sizes = {4, 4, 4}> {
  y = MatMul(x, w)
  )" + split + R"(
}
)";
        Graph g = load_graph(text);
        REQUIRE(split_sliced_linear_layers(g, true) == 1);
        CHECK(op_types(g) == std::vector<std::string>{"MatMul", "MatMul", "MatMul"});
        CHECK(g.nodes[1].outputs[0] == "k");
        CHECK(g.value(g.nodes[1].inputs[1]).shape == Shape{6, 4});
        check_same_values(text, [](Graph &h) { return split_sliced_linear_layers(h, true); },
                          {"q", "k", "v"});
    }
}

TEST_CASE("Transposes that move only axes of extent 1 become Reshapes, others stay") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 5, 8] x) => (float[5, 1, 8] a, float[1, 8, 5] b) {
  a = Transpose <perm = [1, 0, 2]> (x)
  b = Transpose <perm = [0, 2, 1]> (x)
}
)";
    Graph g = load_graph(text);
    REQUIRE(reshape_unit_axis_transposes(g) == 1);
    CHECK(op_types(g) == std::vector<std::string>{"Reshape", "Transpose"});
    CHECK(g.value(g.nodes[0].inputs[1]).constant->to_i64_vector() == std::vector<int64_t>{5, 1, 8});
    g.verify();
    check_same_values(text, reshape_unit_axis_transposes, {"a", "b"});
}
