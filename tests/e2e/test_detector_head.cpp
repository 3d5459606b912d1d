// What a detector's head computes on the device before its post-processing goes to the host
// (issue 18's bench model, bench/torch_models.py `detector_nms`), checked on the simulator
// against values computed here: PyTorch's `t[:, 2:]` (a Slice whose end is INT64_MAX), an
// elementwise chain whose intermediate two later nodes read, and 1-D elementwise values longer
// than the partitions (a [784] score map, which they do not divide).

#include "TextCases.h"

#include <cmath>
#include <doctest/doctest.h>

using namespace nhc;
using test::load_text;

namespace {

HostTensor ramp(const Shape &shape, double scale) {
    HostTensor t(DType::Float32, shape);
    for (int64_t i = 0; i < t.numel(); i++)
        t.set_f64(i, std::sin(double(i) * 0.37) * scale);
    return t;
}

/** The output `name` of `text` run on the simulator with x. */
HostTensor run(const std::string &text, const HostTensor &x, const std::string &name) {
    Graph g = load_text(text);
    return test::compile_and_run(g, {{"x", x}}).outputs.at(name);
}

} // namespace

TEST_CASE("a box head: Slice to INT64_MAX, an intermediate read twice, both halves joined") {
    // sizes = exp(clip(t[:, 2:], max 2)); boxes = [c - sizes, c + sizes] with c = sigmoid(t[:,
    // :2]).
    HostTensor x = ramp({256, 4}, 3.0);
    HostTensor y = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256, 4] x) => (float[256, 4] y)
  <int64[1] zero = {0}, int64[1] two = {2}, int64[1] end = {9223372036854775807},
   int64[1] axis = {1}, float hi = {2.0}> {
  c0 = Slice(x, zero, two, axis)
  s0 = Slice(x, two, end, axis)
  c = Sigmoid(c0)
  s1 = Clip(s0, , hi)
  s = Exp(s1)
  lo = Sub(c, s)
  up = Add(c, s)
  y = Concat <axis = 1> (lo, up)
}
)",
                       x, "y");
    REQUIRE(y.shape() == Shape{256, 4});
    for (int64_t r = 0; r < 256; r++)
        for (int64_t j = 0; j < 2; j++) {
            double c = 1.0 / (1.0 + std::exp(-x.get_f64(r * 4 + j)));
            double s = std::exp(std::min(x.get_f64(r * 4 + 2 + j), 2.0));
            CHECK(y.get_f64(r * 4 + j) == doctest::Approx(c - s).epsilon(1e-5));
            CHECK(y.get_f64(r * 4 + 2 + j) == doctest::Approx(c + s).epsilon(1e-5));
        }
}

TEST_CASE("1-D elementwise values longer than the partitions, divided by them or not") {
    for (int64_t n : {256, 784}) {
        INFO("length " << n);
        HostTensor x = ramp({n}, 4.0);
        std::string len = std::to_string(n);
        HostTensor y = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[)" + len + R"(] x) => (float[)" +
                               len +
                               R"(] y) <float two = {2.0}> {
  s = Sigmoid(x)
  y = Mul(s, two)
}
)",
                           x, "y");
        REQUIRE(y.shape() == Shape{n});
        for (int64_t i = 0; i < n; i++)
            CHECK(y.get_f64(i) ==
                  doctest::Approx(2.0 / (1.0 + std::exp(-x.get_f64(i)))).epsilon(1e-5));
    }
}
