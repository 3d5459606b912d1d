#include "frontend/ConstantEvaluator.h"
#include "support/Error.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <tuple>

using namespace nhc;

namespace {

onnx::NodeProto node(const std::string &op, int outputs = 1) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name("n_" + op);
    for (int i = 0; i < outputs; i++)
        n.add_output("out" + std::to_string(i));
    return n;
}

void set_int(onnx::NodeProto &n, const std::string &name, int64_t v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}

void set_ints(onnx::NodeProto &n, const std::string &name, std::vector<int64_t> v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
        a->add_ints(x);
}

HostTensor iota(DType t, Shape s) {
    HostTensor x(t, s);
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_i64(i, i);
    return x;
}

HostTensor eval1(const onnx::NodeProto &n, std::vector<const HostTensor *> in, int opset = 17) {
    auto out = evaluate_node(n, in, opset);
    REQUIRE(out.has_value());
    return (*out)[0];
}

} // namespace

TEST_CASE("Slice clamps, counts negative indices from the end and walks negative steps") {
    HostTensor x = iota(DType::Int64, {6});
    HostTensor starts = HostTensor::from_i64({-2}), ends = HostTensor::from_i64({INT64_MAX});
    CHECK(eval1(node("Slice"), {&x, &starts, &ends}).to_i64_vector() == std::vector<int64_t>{4, 5});
    HostTensor s2 = HostTensor::from_i64({-1}), e2 = HostTensor::from_i64({INT64_MIN}),
               axes = HostTensor::from_i64({0}), steps = HostTensor::from_i64({-2});
    CHECK(eval1(node("Slice"), {&x, &s2, &e2, &axes, &steps}).to_i64_vector() ==
          std::vector<int64_t>{5, 3, 1});
}

TEST_CASE("Gather accepts negative indices and keeps the index shape") {
    HostTensor x = iota(DType::Float32, {3, 2});
    HostTensor idx = HostTensor::from_i64({-1, 0});
    HostTensor out = eval1(node("Gather"), {&x, &idx});
    CHECK(out.shape() == Shape{2, 2});
    CHECK(out.get_f64(0) == 4.0);
    CHECK(out.get_f64(3) == 1.0);
    HostTensor bad = HostTensor::from_i64({3});
    CHECK_THROWS_WITH_AS(evaluate_node(node("Gather"), {&x, &bad}, 17),
                         doctest::Contains("out of range"), UserError);
}

TEST_CASE("Unsqueeze and Squeeze take axes from attributes before opset 13, inputs after") {
    HostTensor x = iota(DType::Int64, {2, 3});
    onnx::NodeProto old = node("Unsqueeze");
    set_ints(old, "axes", {0, -1});
    CHECK(eval1(old, {&x}, 11).shape() == Shape{1, 2, 3, 1});
    HostTensor axes = HostTensor::from_i64({1});
    CHECK(eval1(node("Unsqueeze"), {&x, &axes}).shape() == Shape{2, 1, 3});
    HostTensor y = iota(DType::Int64, {1, 3, 1});
    CHECK(eval1(node("Squeeze"), {&y}).shape() == Shape{3});
    HostTensor a2 = HostTensor::from_i64({1});
    CHECK_THROWS_AS(evaluate_node(node("Squeeze"), {&y, &a2}, 17), UserError);
}

TEST_CASE("Transpose permutes data") {
    HostTensor x = iota(DType::Int32, {2, 3});
    HostTensor t = eval1(node("Transpose"), {&x});
    CHECK(t.shape() == Shape{3, 2});
    CHECK(t.to_i64_vector() == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("integer arithmetic is exact and follows ONNX rounding") {
    HostTensor a = HostTensor::from_i64({7, -7, (int64_t(1) << 60) + 1});
    HostTensor b = HostTensor::from_i64({2, 2, 1});
    CHECK(eval1(node("Div"), {&a, &b}).to_i64_vector() ==
          std::vector<int64_t>{3, -3, (int64_t(1) << 60) + 1});
    // Mod without fmod takes the divisor's sign (Python semantics).
    CHECK(eval1(node("Mod"), {&a, &b}).get_i64(1) == 1);
    HostTensor c = HostTensor::from_i64({(int64_t(1) << 60), 2, 0});
    // 2^60 + 1 and 2^60 are equal as doubles but not as integers.
    CHECK(eval1(node("Equal"), {&a, &c}).to_i64_vector() == std::vector<int64_t>{0, 0, 0});
    HostTensor zero = HostTensor::from_i64({0, 1, 1});
    CHECK_THROWS_WITH_AS(evaluate_node(node("Div"), {&a, &zero}, 17),
                         doctest::Contains("division by zero"), UserError);
}

TEST_CASE("Where broadcasts its three operands") {
    HostTensor cond(DType::Bool, {1, 2});
    cond.set_i64(0, 1);
    HostTensor x = iota(DType::Float32, {2, 2});
    HostTensor y(DType::Float32, {});
    y.set_f64(0, -1.0);
    HostTensor out = eval1(node("Where"), {&cond, &x, &y});
    CHECK(out.shape() == Shape{2, 2});
    CHECK(out.get_f64(0) == 0.0);
    CHECK(out.get_f64(1) == -1.0);
    CHECK(out.get_f64(2) == 2.0);
}

TEST_CASE("Reshape resolves 0 and -1") {
    HostTensor x = iota(DType::Float32, {2, 3, 4});
    HostTensor target = HostTensor::from_i64({0, -1});
    CHECK(eval1(node("Reshape"), {&x, &target}).shape() == Shape{2, 12});
}

TEST_CASE("Shape honours start and end; Size counts elements") {
    onnx::NodeProto n = node("Shape");
    set_int(n, "start", 1);
    set_int(n, "end", -1);
    CHECK(evaluate_shape_query(n, {2, 3, 4, 5}).to_i64_vector() == std::vector<int64_t>{3, 4});
    CHECK(evaluate_shape_query(node("Size"), {2, 3, 4}).get_i64(0) == 24);
}

TEST_CASE("outputs over the folding limit are left unfolded") {
    HostTensor shape = HostTensor::from_i64({1 << 13, 1 << 13});
    CHECK_FALSE(evaluate_node(node("ConstantOfShape"), {&shape}, 17).has_value());
}

TEST_CASE("CumSum: inclusive, exclusive and reversed along an axis; TopK breaks ties by index") {
    HostTensor x = iota(DType::Float32, {2, 3}); // [[0, 1, 2], [3, 4, 5]]
    HostTensor axis1 = HostTensor::scalar_i64(1), axis0 = HostTensor::scalar_i64(-2);
    auto cumsum = [&](const HostTensor &axis, int exclusive, int reverse) {
        onnx::NodeProto n = node("CumSum");
        set_int(n, "exclusive", exclusive);
        set_int(n, "reverse", reverse);
        HostTensor y = eval1(n, {&x, &axis});
        std::vector<int64_t> v;
        for (int64_t i = 0; i < y.numel(); i++)
            v.push_back(int64_t(y.get_f64(i)));
        return v;
    };
    CHECK(cumsum(axis1, 0, 0) == std::vector<int64_t>{0, 1, 3, 3, 7, 12});
    CHECK(cumsum(axis1, 1, 0) == std::vector<int64_t>{0, 0, 1, 0, 3, 7});
    CHECK(cumsum(axis1, 0, 1) == std::vector<int64_t>{3, 3, 2, 12, 9, 5});
    CHECK(cumsum(axis1, 1, 1) == std::vector<int64_t>{3, 2, 0, 9, 5, 0});
    CHECK(cumsum(axis0, 0, 0) == std::vector<int64_t>{0, 1, 2, 3, 5, 7});
    // Equal values: the lower index first, largest or smallest.
    HostTensor t = HostTensor::from_i64({2, 7, 7, 1, 2}), k = HostTensor::from_i64({3});
    onnx::NodeProto largest = node("TopK", 2);
    auto out = evaluate_node(largest, {&t, &k}, 17);
    REQUIRE(out);
    CHECK((*out)[0].to_i64_vector() == std::vector<int64_t>{7, 7, 2});
    CHECK((*out)[1].to_i64_vector() == std::vector<int64_t>{1, 2, 0});
    onnx::NodeProto smallest = node("TopK", 2);
    set_int(smallest, "largest", 0);
    out = evaluate_node(smallest, {&t, &k}, 17);
    REQUIRE(out);
    CHECK((*out)[1].to_i64_vector() == std::vector<int64_t>{3, 0, 4});
    HostTensor too_many = HostTensor::from_i64({6});
    CHECK_THROWS_WITH_AS(evaluate_node(largest, {&t, &too_many}, 17),
                         doctest::Contains("K = 6 is outside [0, 5]"), UserError);
}

namespace {

onnx::ValueInfoProto tensor_info(const std::string &name, int elem_type, Shape shape) {
    onnx::ValueInfoProto vi;
    vi.set_name(name);
    auto *t = vi.mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    for (int64_t d : shape)
        t->mutable_shape()->add_dim()->set_dim_value(d);
    return vi;
}

/** Loop(M, "", a) whose body adds `step` (captured from outside) to a, and scans a's new value. */
onnx::NodeProto accumulating_loop() {
    onnx::NodeProto loop = node("Loop", 2);
    loop.add_input("M");
    loop.add_input("");
    loop.add_input("a0");
    auto *attr = loop.add_attribute();
    attr->set_name("body");
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto &body = *attr->mutable_g();
    body.set_name("body");
    *body.add_input() = tensor_info("i", onnx::TensorProto::INT64, {});
    *body.add_input() = tensor_info("go", onnx::TensorProto::BOOL, {});
    *body.add_input() = tensor_info("a", onnx::TensorProto::FLOAT, {2});
    for (const auto &[op, in, out] :
         {std::tuple{"Identity", "go", "go_out"}, {"Add", "a", "a2"}, {"Identity", "a2", "scan"}}) {
        onnx::NodeProto *n = body.add_node();
        n->set_op_type(op);
        n->add_input(in);
        if (std::string(op) == "Add")
            n->add_input("step"); // an outer-scope value
        n->add_output(out);
    }
    *body.add_output() = tensor_info("go_out", onnx::TensorProto::BOOL, {});
    *body.add_output() = tensor_info("a2", onnx::TensorProto::FLOAT, {2});
    *body.add_output() = tensor_info("scan", onnx::TensorProto::FLOAT, {2});
    return loop;
}

} // namespace

TEST_CASE("Loop runs its body over the captured scope: carried values and stacked scans") {
    onnx::NodeProto loop = accumulating_loop();
    HostTensor a0 = iota(DType::Float32, {2}), step(DType::Float32, {2});
    step.set_f64(0, 10);
    step.set_f64(1, 100);
    auto scope = [&](const std::string &name) -> const HostTensor * {
        return name == "step" ? &step : nullptr;
    };
    HostTensor three = HostTensor::scalar_i64(3);
    auto out = evaluate_node_in_scope(loop, {&three, nullptr, &a0}, 17, scope);
    REQUIRE(out);
    CHECK((*out)[0].to_i64_vector() == std::vector<int64_t>{30, 301}); // a0 + 3 steps
    CHECK((*out)[1].shape() == Shape{3, 2});
    CHECK((*out)[1].to_i64_vector() == std::vector<int64_t>{10, 101, 20, 201, 30, 301});
    // No iteration: the carried value as given, an empty scan of the declared element shape.
    HostTensor zero = HostTensor::scalar_i64(0);
    out = evaluate_node_in_scope(loop, {&zero, nullptr, &a0}, 17, scope);
    REQUIRE(out);
    CHECK((*out)[0].to_i64_vector() == std::vector<int64_t>{0, 1});
    CHECK((*out)[1].shape() == Shape{0, 2});
    // Without a scope the body's outer name is nowhere; evaluate_node leaves Loop unfolded.
    auto nothing = [](const std::string &) -> const HostTensor * { return nullptr; };
    CHECK_THROWS_WITH_AS(evaluate_node_in_scope(loop, {&three, nullptr, &a0}, 17, nothing),
                         doctest::Contains("reads 'step'"), UserError);
    CHECK_FALSE(evaluate_node(loop, {&three, nullptr, &a0}, 17).has_value());
}

TEST_CASE("Unique sorts numbers first and NaNs last, the NaNs as one value") {
    HostTensor x(DType::Float32, {4});
    const double nan = std::nan("");
    for (int64_t i = 0; i < 4; i++)
        x.set_f64(i, std::vector<double>{nan, 1, nan, 0}[size_t(i)]);
    auto out = evaluate_node(node("Unique", 4), {&x}, 17);
    REQUIRE(out);
    const HostTensor &y = (*out)[0];
    REQUIRE(y.numel() == 3);
    CHECK(y.get_f64(0) == 0.0);
    CHECK(y.get_f64(1) == 1.0);
    CHECK(std::isnan(y.get_f64(2)));
    CHECK((*out)[3].to_i64_vector() == std::vector<int64_t>{1, 1, 2});    // counts
    CHECK((*out)[2].to_i64_vector() == std::vector<int64_t>{2, 1, 2, 0}); // inverse indices
}

namespace {

void set_string(onnx::NodeProto &n, const std::string &name, const std::string &v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
}

HostTensor floats(const std::vector<double> &v, Shape s) {
    HostTensor x(DType::Float32, std::move(s));
    for (size_t i = 0; i < v.size(); i++)
        x.set_f64(int64_t(i), v[i]);
    return x;
}

} // namespace

TEST_CASE("QuantizeLinear rounds half to even and saturates; DequantizeLinear per axis") {
    // ONNX's own cases have no tie (x / scale = k + 0.5): 5 / 2 and 7 / 2 tell the rounding.
    HostTensor x = floats({5, 7, -5, 1000, -1000}, {5}), scale = floats({2}, {});
    HostTensor zp(DType::Int8, {});
    zp.set_i64(0, 1);
    CHECK(eval1(node("QuantizeLinear"), {&x, &scale, &zp}).to_i64_vector() ==
          std::vector<int64_t>{3, 5, -1, 127, -128});
    HostTensor u = eval1(node("QuantizeLinear"), {&x, &scale});
    CHECK(u.dtype() == DType::UInt8);
    CHECK(u.to_i64_vector() == std::vector<int64_t>{2, 4, 0, 255, 0});
    // Per axis 0 of a [2, 2] input: row r has scale s[r] and zero point z[r].
    HostTensor q = iota(DType::UInt8, {2, 2}), s = floats({0.5, 4}, {2});
    HostTensor z(DType::UInt8, {2});
    z.set_i64(0, 1);
    z.set_i64(1, 2);
    onnx::NodeProto dq = node("DequantizeLinear");
    set_int(dq, "axis", 0);
    HostTensor y = eval1(dq, {&q, &s, &z});
    CHECK(y.get_f64(0) == -0.5);
    CHECK(y.get_f64(1) == 0.0);
    CHECK(y.get_f64(2) == 0.0);
    CHECK(y.get_f64(3) == 4.0);
}

TEST_CASE("ScatterElements reduces duplicates with add and mul; BitShift drops shifted-out bits") {
    HostTensor data = floats({1, 2, 3}, {3}), updates = floats({10, 20}, {2});
    HostTensor indices = HostTensor::from_i64({-1, 2}); // both at element 2
    onnx::NodeProto add = node("ScatterElements");
    set_string(add, "reduction", "add");
    HostTensor sum = eval1(add, {&data, &indices, &updates}, 16);
    CHECK(sum.get_f64(2) == 33.0);
    CHECK(sum.get_f64(0) == 1.0);
    onnx::NodeProto mul = node("ScatterElements");
    set_string(mul, "reduction", "mul");
    CHECK(eval1(mul, {&data, &indices, &updates}, 16).get_f64(2) == 600.0);
    HostTensor out_of_range = HostTensor::from_i64({3, 0});
    CHECK_THROWS_WITH_AS(evaluate_node(add, {&data, &out_of_range, &updates}, 16),
                         doctest::Contains("index 3 is out of range"), UserError);

    HostTensor a(DType::UInt8, {3}), b(DType::UInt8, {3});
    for (int64_t i = 0; i < 3; i++) {
        a.set_i64(i, std::vector<int64_t>{200, 3, 255}[size_t(i)]);
        b.set_i64(i, std::vector<int64_t>{1, 8, 4}[size_t(i)]);
    }
    onnx::NodeProto left = node("BitShift");
    set_string(left, "direction", "LEFT");
    CHECK(eval1(left, {&a, &b}).to_i64_vector() == std::vector<int64_t>{144, 0, 240});
    onnx::NodeProto right = node("BitShift");
    set_string(right, "direction", "RIGHT");
    CHECK(eval1(right, {&a, &b}).to_i64_vector() == std::vector<int64_t>{100, 0, 15});
}

TEST_CASE("ReverseSequence reverses each batch item's first sequence_lens steps only") {
    HostTensor x = iota(DType::Int32, {3, 2}); // [time 3, batch 2]
    HostTensor lens = HostTensor::from_i64({2, 3});
    // Batch 0 (column 0: 0 2 4) reverses its first 2 steps, batch 1 (1 3 5) all 3.
    CHECK(eval1(node("ReverseSequence"), {&x, &lens}).to_i64_vector() ==
          std::vector<int64_t>{2, 5, 0, 3, 4, 1});
}

TEST_CASE("Scan walks its input backwards along axis 1 and stacks its output reversed along "
          "axis 1") {
    // Scan(s0, X) whose body carries s + x and scans it: a running sum over X's columns.
    onnx::NodeProto scan = node("Scan", 2);
    scan.add_input("s0");
    scan.add_input("X");
    set_int(scan, "num_scan_inputs", 1);
    set_ints(scan, "scan_input_axes", {1});
    set_ints(scan, "scan_input_directions", {1});
    set_ints(scan, "scan_output_axes", {1});
    set_ints(scan, "scan_output_directions", {1});
    auto *attr = scan.add_attribute();
    attr->set_name("body");
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto &body = *attr->mutable_g();
    body.set_name("body");
    *body.add_input() = tensor_info("s", onnx::TensorProto::FLOAT, {2});
    *body.add_input() = tensor_info("x", onnx::TensorProto::FLOAT, {2});
    onnx::NodeProto *add = body.add_node();
    add->set_op_type("Add");
    add->add_input("s");
    add->add_input("x");
    add->add_output("s2");
    onnx::NodeProto *copy = body.add_node();
    copy->set_op_type("Identity");
    copy->add_input("s2");
    copy->add_output("y");
    *body.add_output() = tensor_info("s2", onnx::TensorProto::FLOAT, {2});
    *body.add_output() = tensor_info("y", onnx::TensorProto::FLOAT, {2});
    HostTensor s0(DType::Float32, {2});
    HostTensor x = iota(DType::Float32, {2, 3}); // columns {0, 3}, {1, 4}, {2, 5}
    auto nothing = [](const std::string &) -> const HostTensor * { return nullptr; };
    auto out = evaluate_node_in_scope(scan, {&s0, &x}, 17, nothing);
    REQUIRE(out);
    CHECK((*out)[0].to_i64_vector() == std::vector<int64_t>{3, 12});
    // Columns visited 2, 1, 0: sums {2, 5}, {3, 9}, {3, 12}, stacked last first along axis 1.
    CHECK((*out)[1].shape() == Shape{2, 3});
    CHECK((*out)[1].to_i64_vector() == std::vector<int64_t>{3, 3, 2, 12, 9, 5});
}

TEST_CASE("malformed attributes and empty dimensions are NHC_EFLD001, not a division by zero") {
    // A stride of 0 divided the output size by zero (SIGFPE) before the check.
    HostTensor x(DType::UInt8, {1, 1, 4, 4}), w(DType::UInt8, {1, 1, 2, 2});
    onnx::NodeProto conv = node("ConvInteger");
    set_ints(conv, "strides", {0, 1});
    CHECK_THROWS_WITH_AS(evaluate_node(conv, {&x, &w}, 17),
                         doctest::Contains("must be positive and pads not negative"), UserError);
    // GatherND into a dimension of extent 0 divided its stride by zero.
    HostTensor data(DType::Float32, {2, 0, 3});
    HostTensor indices = HostTensor::from_i64({1, 0});
    CHECK_THROWS_WITH_AS(evaluate_node(node("GatherND"), {&data, &indices}, 17),
                         doctest::Contains("index 0 is out of range for a dimension of 0"),
                         UserError);
}

TEST_CASE("MaxRoiPool's region of a missing image, LpPool without a kernel and LpNormalization "
          "with p = 3 are NHC_EFLD001") {
    HostTensor x(DType::Float32, {1, 1, 4, 4});
    HostTensor rois(DType::Float32, {1, 5});
    rois.set_f64(0, 2); // image 2 of 1
    onnx::NodeProto roi = node("MaxRoiPool");
    set_ints(roi, "pooled_shape", {2, 2});
    CHECK_THROWS_WITH_AS(evaluate_node(roi, {&x, &rois}, 17),
                         doctest::Contains("region 0 names image 2 of 1"), UserError);
    CHECK_THROWS_WITH_AS(evaluate_node(node("LpPool"), {&x}, 17),
                         doctest::Contains("attribute 'kernel_shape' is missing"), UserError);
    onnx::NodeProto norm = node("LpNormalization");
    set_int(norm, "p", 3);
    CHECK_THROWS_WITH_AS(evaluate_node(norm, {&x}, 17),
                         doctest::Contains("p must be 1 or 2, not 3"), UserError);
}

TEST_CASE("the host's math functions give ONNX's node-test outputs (float64 segments run them; "
          "ONNX Runtime has no float64 kernel of most to compare with)") {
    const std::string data = "/usr/share/libonnx-testdata/data/node/test_";
    for (const char *op :
         {"erf", "softplus", "softsign", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
          "acosh", "atanh", "exp", "log", "tanh", "sigmoid", "relu", "sign"}) {
        CAPTURE(op);
        onnx::ModelProto model;
        std::ifstream in(data + op + "/model.onnx", std::ios::binary);
        REQUIRE(model.ParseFromIstream(&in));
        auto tensor = [&](const char *file) {
            onnx::TensorProto t;
            std::ifstream f(data + op + "/test_data_set_0/" + file, std::ios::binary);
            REQUIRE(t.ParseFromIstream(&f));
            return HostTensor::from_onnx(t, file);
        };
        const HostTensor x = tensor("input_0.pb"), want = tensor("output_0.pb");
        const HostTensor got = eval1(model.graph().node(0), {&x});
        REQUIRE(got.shape() == want.shape());
        double worst = 0;
        for (int64_t i = 0; i < want.numel(); i++)
            worst = std::max(worst, std::fabs(got.get_f64(i) - want.get_f64(i)) /
                                        std::max(1.0, std::fabs(want.get_f64(i))));
        CHECK(worst < 1e-6); // float32 outputs: both within an ulp or so of the exact value
    }
}

TEST_CASE("MatMul and Gemm evaluate on the host up to kMaxHostMultiplyAdds, and not beyond") {
    HostTensor a = iota(DType::Float64, {2, 3}), b = iota(DType::Float64, {3, 2});
    // [[0,1,2],[3,4,5]] @ [[0,1],[2,3],[4,5]] = [[10,13],[28,40]]
    HostTensor ab = eval1(node("MatMul"), {&a, &b});
    CHECK(ab.shape() == Shape{2, 2});
    CHECK(ab.get_f64(0) == 10);
    CHECK(ab.get_f64(3) == 40);
    // 1024 x 1024 x 1025 multiply-adds: just over 2^30, left unevaluated.
    HostTensor big_a(DType::Float64, {1024, 1024}), big_b(DType::Float64, {1024, 1025});
    REQUIRE(1024.0 * 1024 * 1025 > double(kMaxHostMultiplyAdds));
    CHECK_FALSE(evaluate_node(node("MatMul"), {&big_a, &big_b}, 17).has_value());
    HostTensor big_bt(DType::Float64, {1025, 1024});
    onnx::NodeProto gemm = node("Gemm");
    set_int(gemm, "transB", 1);
    CHECK_FALSE(evaluate_node(gemm, {&big_a, &big_bt}, 17).has_value());
}
