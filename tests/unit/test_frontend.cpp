// Front-end tests: loading, checking, opset conversion, --input-shape, folding and import.

#include "TestModels.h"
#include "frontend/Frontend.h"
#include "frontend/LoadModel.h"
#include "graph/OperatorSupport.h"
#include "support/Error.h"
#include "support/TensorFile.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <thread>

using namespace nhc;
using nhc::test::TempDir;

namespace {

Graph load_text(const std::string &text, const std::vector<InputShapeOverride> &shapes = {}) {
    TempDir dir;
    std::string path = test::write_model(test::parse_model(text), dir.file("m.onnx"));
    FrontendOptions o;
    o.input_shapes = shapes;
    return run_frontend(path, o);
}

std::string error_of(const std::string &text, const std::vector<InputShapeOverride> &shapes = {}) {
    try {
        load_text(text, shapes);
    } catch (const UserError &e) {
        return e.code() + ": " + e.what();
    }
    return "no error";
}

/** `Y = Add(X, W)` over float[2], W an initializer whose data the caller states. */
onnx::ModelProto add_of_weight(onnx::TensorProto **w) {
    onnx::ModelProto m = test::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y) { Y = Add(X, W) }
)");
    *w = m.mutable_graph()->add_initializer();
    (*w)->set_name("W");
    (*w)->set_data_type(onnx::TensorProto::FLOAT);
    (*w)->add_dims(2);
    return m;
}

// The GroupNorm pattern torch exports: Shape -> Gather -> Concat -> Reshape on a dynamic batch.
const char *kSymbolicReshape = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[batch, 4, 6] X, float[batch, 2] M) => (float[batch, 24] Y, float[batch, 2] Z) {
  s = Shape(X)
  i0 = Constant <value = int64[1] {0}> ()
  n = Gather <axis = 0> (s, i0)
  last = Constant <value = int64[1] {-1}> ()
  target = Concat <axis = 0> (n, last)
  Y = Reshape(X, target)
  Z = Relu(M)
}
)";

} // namespace

TEST_CASE("a symbolic dimension without --input-shape is NHC_EMOD025 naming the tensor") {
    std::string e = error_of(kSymbolicReshape);
    CHECK(e.rfind("NHC_EMOD025", 0) == 0);
    CHECK(e.find("'X'") != std::string::npos);
    CHECK(e.find("batch") != std::string::npos);
    CHECK(e.find("--input-shape") != std::string::npos);
}

TEST_CASE("--input-shape makes shape chains static, folds them, and binds the symbol everywhere") {
    Graph g = load_text(kSymbolicReshape, {{"X", {3, 4, 6}}});
    CHECK(g.value("X").shape == Shape{3, 4, 6});
    CHECK(g.value("M").shape == Shape{3, 2}); // 'batch' was bound by the override of X
    CHECK(g.value("Y").shape == Shape{3, 24});
    // Shape, Gather, Concat and the Constants are folded: Reshape reads a constant target.
    REQUIRE(g.nodes.size() == 2);
    CHECK(g.nodes[0].op_type == "Reshape");
    const Value &target = g.value(g.nodes[0].inputs[1]);
    REQUIRE(target.is_constant());
    CHECK(target.constant->to_i64_vector() == std::vector<int64_t>{3, -1});
    g.verify();
}

TEST_CASE("a value folded after inference recorded it symbolic is re-inferred static") {
    // ViT's class token as torch exports it: Expand's shape comes from Where(Equal(...)) over
    // constants, so the first inference round records Expand's output with a symbolic dimension;
    // once folded, the Concat that reads it must see the constant's static shape.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4, 8] x) => (float[1, 5, 8] y) <float[1, 1, 8] token = {0, 1, 2, 3, 4, 5, 6, 7}> {
  dims = Constant <value = int64[1] {3}> ()
  ones = ConstantOfShape <value = int64[1] {1}> (dims)
  minus = Constant <value = int64[1] {-1}> ()
  neg = Mul(ones, minus)
  want = Constant <value = int64[3] {1, -1, -1}> ()
  same = Equal(want, neg)
  shape = Where(same, ones, want)
  cls = Expand(token, shape)
  joined = Concat <axis = 1> (cls, x)
  y = Relu(joined)
}
)");
    CHECK(g.value("joined").shape == Shape{1, 5, 8});
    REQUIRE(g.nodes.size() == 2);
    CHECK(g.nodes[0].op_type == "Concat");
    CHECK(g.value(g.nodes[0].inputs[0]).is_constant());
    g.verify();
}

TEST_CASE("a repeated --input-shape for one input takes the right-most value") {
    Graph g = load_text(kSymbolicReshape, {{"X", {3, 4, 6}}, {"X", {5, 4, 6}}});
    CHECK(g.value("X").shape == Shape{5, 4, 6});
    CHECK(g.value("M").shape == Shape{5, 2});
}

TEST_CASE("--input-shape errors name the input and what was expected") {
    std::string unknown = error_of(kSymbolicReshape, {{"Q", {1}}});
    CHECK(unknown.rfind("NHC_EARG012", 0) == 0);
    CHECK(unknown.find("'X'") != std::string::npos); // lists the real inputs
    CHECK(error_of(kSymbolicReshape, {{"X", {3, 4}}}).rfind("NHC_EARG013", 0) == 0);
    std::string fixed = error_of(kSymbolicReshape, {{"X", {3, 5, 6}}});
    CHECK(fixed.rfind("NHC_EARG013", 0) == 0);
    CHECK(fixed.find("fixes it to 4") != std::string::npos);
}

TEST_CASE("constant subgraphs of every folded kind evaluate to the right values") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X) => (float[2, 3] Y, int64[4] R, float[2, 3] E, int32[3] C, float[1] P) {
  two = Constant <value = float[1] {2.0}> ()
  three = Constant <value = float[1] {3.0}> ()
  p = Pow(two, three)
  half = Constant <value = float[1] {0.5}> ()
  q = Mul(p, half)
  P = Sub(q, half)
  shp = Constant <value = int64[2] {2, 3}> ()
  ones = ConstantOfShape <value = float[1] {1.5}> (shp)
  Y = Add(X, ones)
  a = Constant <value = int64[0] {}> ()
  st = Constant <value = int64 {1}> ()
  lim = Constant <value = int64 {9}> ()
  dl = Constant <value = int64 {2}> ()
  R = Range(st, lim, dl)
  row = Constant <value = float[3] {1.0, 2.0, 3.0}> ()
  E = Expand(row, shp)
  f = Constant <value = float[3] {-1.7, 2.5, 7.9}> ()
  C = Cast <to = 6> (f)
}
)");
    // P = 2^3 * 0.5 - 0.5 = 3.5
    CHECK(g.value("P").constant->get_f64(0) == doctest::Approx(3.5));
    CHECK(g.value("R").constant->to_i64_vector() == std::vector<int64_t>{1, 3, 5, 7});
    const HostTensor &e = *g.value("E").constant;
    CHECK(e.shape() == Shape{2, 3});
    CHECK(e.get_f64(3) == 1.0);
    CHECK(e.get_f64(5) == 3.0);
    CHECK(g.value("C").constant->to_i64_vector() == std::vector<int64_t>{-1, 2, 7});
    // Y = X + ConstantOfShape(...): only the Add is left, reading a folded constant of 1.5.
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].op_type == "Add");
    CHECK(g.value(g.nodes[0].inputs[1]).constant->get_f64(5) == 1.5);
}

TEST_CASE("an older opset is converted to the canonical one") {
    Graph g = load_text(R"(
<ir_version: 6, opset_import: ["" : 11]>
g (float[2, 3] X) => (float[2, 3] Y) {
  Y = Softmax <axis = 1> (X)
}
)");
    CHECK(g.original_opset == 11);
    CHECK(g.opset == 17);
}

TEST_CASE("unsupported operators are reported all at once, grouped by type") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X) => (float[2, 3] Y) {
  a = Relu(X)
  b = Sigmoid(a)
  Y = Relu(b)
}
)");
    try {
        check_operator_support(g);
        FAIL("no error");
    } catch (const UserError &e) {
        CHECK(e.code() == "NHC_EUOC002");
        std::string m = e.what();
        CHECK(m.find("Relu (2)") != std::string::npos);
        CHECK(m.find("Sigmoid (1)") != std::string::npos);
    }
    register_operator({"Relu", "test"});
    register_operator({"Sigmoid", "test"});
    CHECK_NOTHROW(check_operator_support(g));
}

TEST_CASE("model-level rejections carry their codes") {
    // Control flow.
    CHECK(error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] X) => (float[2] Y) {
  Y = If (c) <then_branch = t () => (float[2] a) { a = Identity(X) },
              else_branch = e () => (float[2] b) { b = Neg(X) }>
}
)")
              .rfind("NHC_EUOC003", 0) == 0);
    // A string constant cannot be folded or held.
    CHECK(error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (string[1] S) {
  S = Constant <value = string[1] {"a"}> ()
}
)")
              .rfind("NHC_EDTY001", 0) == 0);
    // An invalid constant computation is reported against its node.
    std::string fold = error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[5] Y) {
  c = Constant <value = float[6] {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}> ()
  s = Constant <value = int64[1] {5}> ()
  Y = Reshape(c, s)
}
)");
    CHECK(fold.rfind("NHC_EFLD001", 0) == 0);
    // Opset newer than the bundled ONNX knows.
    CHECK(error_of(R"(
<ir_version: 8, opset_import: ["" : 99]>
g (float[2] X) => (float[2] Y) { Y = Relu(X) }
)")
              .rfind("NHC_EONX003", 0) == 0);
    // The checker rejects a node reading an undefined value.
    CHECK(error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y) { Y = Relu(Q) }
)")
              .rfind("NHC_EONX002", 0) == 0);
    // Declared output shape contradicts inference.
    CHECK(error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X) => (float[7, 7] Y) { Y = Transpose(X) }
)")
              .rfind("NHC_EONX004", 0) == 0);
}

TEST_CASE("external data is read from beside the model, and its absence is reported") {
    onnx::TensorProto *w = nullptr;
    onnx::ModelProto m = add_of_weight(&w);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto *loc = w->add_external_data();
    loc->set_key("location");
    loc->set_value("weights.bin");
    auto *off = w->add_external_data();
    off->set_key("offset");
    off->set_value("4");
    TempDir dir;
    std::string path = test::write_model(m, dir.file("m.onnx"));
    try {
        run_frontend(path, {});
        FAIL("missing external data was accepted");
    } catch (const UserError &e) {
        CHECK(e.code() == "NHC_EONX005");
        CHECK(std::string(e.what()).find("weights.bin") != std::string::npos);
    }
    float data[3] = {9.0f, 1.5f, -2.0f};
    std::ofstream(dir.file("weights.bin"), std::ios::binary)
        .write(reinterpret_cast<const char *>(data), sizeof data);
    Graph g = run_frontend(path, {});
    CHECK(g.value("W").constant->get_f64(0) == 1.5);
    CHECK(g.value("W").constant->get_f64(1) == -2.0);
}

TEST_CASE("external data outside the model's directory is refused: absolute, '..', symbolic "
          "link") {
    TempDir dir, elsewhere;
    float data[3] = {9.0f, 1.5f, -2.0f};
    for (const TempDir *d : {&dir, &elsewhere})
        std::ofstream(d->file("weights.bin"), std::ios::binary)
            .write(reinterpret_cast<const char *>(data), sizeof data);
    std::filesystem::create_symlink(elsewhere.file("weights.bin"), dir.file("link_out.bin"));
    std::filesystem::create_symlink(dir.file("weights.bin"), dir.file("link_in.bin"));
    auto load = [&](const std::string &location) {
        onnx::TensorProto *w = nullptr;
        onnx::ModelProto m = add_of_weight(&w);
        w->set_data_location(onnx::TensorProto::EXTERNAL);
        auto *loc = w->add_external_data();
        loc->set_key("location");
        loc->set_value(location);
        auto *off = w->add_external_data();
        off->set_key("offset");
        off->set_value("4");
        return run_frontend(test::write_model(m, dir.file("m.onnx")), {});
    };
    std::string sibling = "../" + elsewhere.path.filename().string() + "/weights.bin";
    for (const std::string &escape :
         {elsewhere.file("weights.bin"), sibling, std::string("link_out.bin")}) {
        CAPTURE(escape);
        try {
            load(escape);
            FAIL("a location outside the model's directory was read");
        } catch (const UserError &e) {
            CHECK(e.code() == "NHC_EONX009");
            CHECK(std::string(e.what()).find(escape) != std::string::npos);
        }
    }
    // Inside it, also through a link that stays inside, the data is read.
    for (const char *inside : {"weights.bin", "link_in.bin", "./weights.bin"}) {
        CAPTURE(inside);
        CHECK(load(inside).value("W").constant->get_f64(1) == -2.0);
    }
}

TEST_CASE("a model read from a pipe loads as from a file (process substitution, /dev/stdin)") {
    onnx::TensorProto *w = nullptr;
    onnx::ModelProto m = add_of_weight(&w);
    float data[2] = {1.5f, -2.0f};
    w->set_raw_data(std::string(reinterpret_cast<const char *>(data), sizeof data));
    // Bigger than a pipe's buffer and a read chunk, so that the reader takes several reads.
    m.set_doc_string(std::string(3 << 20, 'x'));
    std::string bytes = m.SerializeAsString();
    TempDir dir;
    std::string fifo = dir.file("model.fifo");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
    Graph g = run_frontend(fifo, {});
    writer.join();
    CHECK(g.value("W").constant->get_f64(1) == -2.0);
}

TEST_CASE("files that are not ONNX models are rejected with codes") {
    TempDir dir;
    CHECK_THROWS_WITH_AS(run_frontend(dir.file("missing.onnx"), {}),
                         doctest::Contains("does not exist"), UserError);
    std::ofstream(dir.file("empty.onnx")).flush(); // mapped files of no bytes map nothing
    CHECK_THROWS_WITH_AS(run_frontend(dir.file("empty.onnx"), {}), doctest::Contains("is empty"),
                         UserError);
    // Past protobuf's 2 GiB: refused by its size (a sparse file: nothing is written or read).
    std::ofstream(dir.file("huge.onnx")).flush();
    std::filesystem::resize_file(dir.file("huge.onnx"), (uint64_t(1) << 31) + 1);
    CHECK_THROWS_WITH_AS(run_frontend(dir.file("huge.onnx"), {}),
                         doctest::Contains("a protobuf holds at most 2 GiB"), UserError);
    CHECK_THROWS_WITH_AS(run_frontend(dir.path.string(), {}), doctest::Contains("is a directory"),
                         UserError);
    std::ofstream(dir.file("junk.onnx")) << "this is not a protobuf \x01\x02\xff";
    try {
        run_frontend(dir.file("junk.onnx"), {});
        FAIL("junk accepted");
    } catch (const UserError &e) {
        CHECK((e.code() == "NHC_EONX001" || e.code() == "NHC_EONX002"));
    }
}

TEST_CASE("a raw_data size that disagrees with the shape is NHC_EONX007") {
    onnx::TensorProto t;
    t.set_name("w");
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(4);
    t.set_raw_data(std::string(12, '\0'));
    CHECK_THROWS_WITH_AS(HostTensor::from_onnx(t, "w"), doctest::Contains("need 16"), UserError);
}

TEST_CASE("asking an attribute for the wrong type is NHC_EONX008") {
    Node n;
    n.name = "r";
    n.op_type = "Reshape";
    n.attrs["allowzero"] = std::string("yes");
    try {
        n.attr_int("allowzero", 0);
        FAIL("no error");
    } catch (const UserError &e) {
        CHECK(e.code() == "NHC_EONX008");
        CHECK(std::string(e.what()).find("Reshape 'r'") != std::string::npos);
    }
    CHECK(n.attr_int("missing", 7) == 7);
}

// ONNX 1.12's convolution inference indexes the weight's kernel dimensions by the input's spatial
// rank without comparing them, and read out of bounds on this (the ONNX fuzz target's finding 6).
TEST_CASE("a convolution whose weight rank differs from its input's is NHC_EONX010") {
    std::string graph_input = error_of(R"(
<ir_version: 8, opset_import: ["" : 10]>
g (uint8[1, 3, 3] x, uint8[1, 1, 2, 2] w, uint8 z) => (int32[1, 1, 4, 4] y) {
  y = ConvInteger <pads = [1, 1]> (x, w, z)
}
)");
    CHECK(graph_input.find("NHC_EONX010") != std::string::npos);
    CHECK(graph_input.find("input 'x' has rank 3 and input 'w' rank 4; a convolution's weight") !=
          std::string::npos);
    // An intermediate value's rank is known only once inference reaches its node.
    std::string intermediate = error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 5] x) => (float[1, 1, 5] y) <float[1, 2, 3, 3] w = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}> {
  r = Relu(x)
  y = Conv (r, w)
}
)");
    CHECK(intermediate.find("NHC_EONX010") != std::string::npos);
    CHECK(intermediate.find("input 'r' has rank 3 and input 'w' rank 4") != std::string::npos);
    std::string transpose = error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 4, 4] x, float[2, 1, 3] w) => (float[1, 1, 6, 6] y) {
  y = ConvTranspose (x, w)
}
)");
    CHECK(transpose.find("NHC_EONX010") != std::string::npos);
}

// ONNX 1.12's Gemm-6 inference takes dimension 1 of B whatever B's rank (SEGV on a rank-1 B: the
// ONNX fuzz target's finding 9); every version of Gemm is checked.
TEST_CASE("a Gemm whose A or B is not a matrix is NHC_EONX010") {
    for (const char *opset : {"6", "13"}) {
        INFO("opset " << opset);
        std::string vector_b = error_of(std::string(R"(
<ir_version: 3, opset_import: ["" : )") +
                                        opset + R"(]>
g (float[2, 3] a, float[4] b, float[2, 4] c) => (float[2, 4] y) {
  y = Gemm (a, b, c)
}
)");
        CHECK(vector_b.find("NHC_EONX010") != std::string::npos);
        CHECK(vector_b.find("Gemm node '': input 'a' has rank 2 and input 'b' rank 1; Gemm's A and "
                            "B are matrices, of rank 2") != std::string::npos);
    }
}

// ONNX 1.12's pooling and convolution inference divides by the strides (SIGFPE on a MaxPool of
// stride 0: the ONNX fuzz target's finding 10).
TEST_CASE("a window of stride, dilation or kernel size below 1 is NHC_EONX010") {
    std::string stride = error_of(R"(
<ir_version: 7, opset_import: ["" : 12]>
g (int8[5, 1, 4, 4] x) => (int8[5, 1, 3, 4] y) {
  y = MaxPool <kernel_shape = [2, 1], strides = [0, 1]> (x)
}
)");
    CHECK(stride.find("NHC_EONX010") != std::string::npos);
    CHECK(stride.find("MaxPool node '': attribute 'strides' holds 0; strides, dilations and "
                      "kernel sizes are at least 1") != std::string::npos);
    std::string dilation = error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 5, 5] x, float[1, 1, 3, 3] w) => (float[1, 1, 3, 3] y) {
  y = Conv <dilations = [1, -1]> (x, w)
}
)");
    CHECK(dilation.find("attribute 'dilations' holds -1") != std::string::npos);
}

// An operand the compiler needs at compile time that comes from runtime inputs is refused by the
// front end, naming the node, the operand, the inputs and the flag that freezes them.
const char *kRuntimeScales = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 2, 2] x, float[4] s) => (float[1, 1, 4, 4] y) <float[4] one = {1, 1, 1, 1}> {
  t = Mul(s, one)
  y = Resize <mode = "nearest"> (x, , t)
}
)";

TEST_CASE("NHC_EALG002: an operand needed at compile time that comes from a runtime input") {
    std::string e = error_of(kRuntimeScales);
    CHECK(e.rfind("NHC_EALG002", 0) == 0);
    CHECK(e.find("Resize") != std::string::npos);
    CHECK(e.find("input 2 ('t')") != std::string::npos); // traced back through the Mul
    CHECK(e.find("'s'") != std::string::npos);
    CHECK(e.find("--freeze-input s=FILE") != std::string::npos);
    // A value reached through Shape depends on shapes only: Expand to Shape(x) is accepted.
    CHECK(error_of(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3, 4] x, float[1, 4] b) => (float[3, 4] y) {
  s = Shape(x)
  y = Expand(b, s)
}
)") == "no error");
}

namespace {

/** `text` compiled by the front end with `frozen` inputs; the error, or "no error". */
std::string freeze_error(const std::string &text, const std::vector<FrozenInput> &frozen,
                         Graph *out = nullptr) {
    TempDir dir;
    FrontendOptions o;
    o.frozen_inputs = frozen;
    try {
        Graph g = run_frontend(test::write_model(test::parse_model(text), dir.file("m.onnx")), o);
        if (out)
            *out = g;
    } catch (const UserError &e) {
        return e.code() + ": " + e.what();
    }
    return "no error";
}

std::string write_f32_npy(const TempDir &dir, const std::string &name, std::vector<int64_t> shape,
                          const std::vector<float> &values) {
    NpyTensor t;
    t.shape = std::move(shape);
    const auto *b = reinterpret_cast<const uint8_t *>(values.data());
    t.data.assign(b, b + values.size() * sizeof(float));
    std::string path = dir.file(name);
    write_npy_file(path, t);
    return path;
}

} // namespace

TEST_CASE("--freeze-input makes a runtime input a constant of the file's value") {
    TempDir dir;
    std::string scales = write_f32_npy(dir, "s.npy", {4}, {1, 1, 2, 2});
    Graph g;
    REQUIRE(freeze_error(kRuntimeScales, {{"s", scales}}, &g) == "no error");
    CHECK(g.inputs == std::vector<std::string>{"x"});
    REQUIRE(g.value("t").is_constant()); // folded with the frozen value
    CHECK(g.value("t").constant->get_f64(3) == 2.0);
}

TEST_CASE("--freeze-input errors: NHC_EARG014, NHC_EARG015, NHC_EARG016") {
    for (const char *bad : {"s", "=f.npy", "s="}) {
        std::string code = "no error";
        try {
            parse_frozen_input(bad);
        } catch (const UserError &e) {
            code = e.code();
        }
        CHECK(code == "NHC_EARG014");
    }
    CHECK(parse_frozen_input("s=a=b.npy").file == "a=b.npy");
    TempDir dir;
    std::string scales = write_f32_npy(dir, "s.npy", {4}, {1, 1, 2, 2});
    std::string e = freeze_error(kRuntimeScales, {{"one", scales}});
    CHECK(e.rfind("NHC_EARG015", 0) == 0); // an initializer, not a runtime input
    CHECK(e.find("'x', 's'") != std::string::npos);
    std::string wide = write_f32_npy(dir, "w.npy", {5}, {1, 1, 2, 2, 2});
    e = freeze_error(kRuntimeScales, {{"s", wide}});
    CHECK(e.rfind("NHC_EARG016", 0) == 0);
    CHECK(e.find("[5]") != std::string::npos);
    NpyTensor ints;
    ints.dtype = "int32";
    ints.shape = {4};
    ints.data.assign(16, 0);
    write_npy_file(dir.file("i.npy"), ints);
    e = freeze_error(kRuntimeScales, {{"s", dir.file("i.npy")}});
    CHECK(e.rfind("NHC_EARG016", 0) == 0);
    CHECK(e.find("int32") != std::string::npos);
    CHECK(e.find("FLOAT") != std::string::npos);
    CHECK(freeze_error(kRuntimeScales, {{"s", dir.file("missing.npy")}}).rfind("NHC_ERT013", 0) ==
          0);
}

TEST_CASE("a graph output that no node computes is refused before ONNX's converter sees it") {
    // ONNX 1.12's checker passes such a model, and its version converter then crashes on it
    // (found by tests/fuzz's front-end target): old opset, so the converter would run.
    std::string e = error_of(R"(
<ir_version: 3, opset_import: ["" : 1]>
g (bool[3, 4] x) => (bool[3, 4] y) { z = Not(x) }
)");
    CHECK(e.rfind("NHC_EONX002", 0) == 0);
    CHECK(e.find("output 'y', which no node computes") != std::string::npos);
}

TEST_CASE("an Einsum of three operands becomes two MatMuls, the cheaper order first") {
    // ir,ro,bsi->bso: x U (16 x 8 by 8 x 2), then by V (16 x 2 by 2 x 8): 512 multiply-adds.
    // Left to right would build U V (8 x 2 by 2 x 8) and multiply x by it: 1,152.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
e (float[8, 2] u, float[2, 8] v, float[1, 16, 8] x) => (float[1, 16, 8] y) {
  y = Einsum <equation = "ir,ro,bsi->bso"> (u, v, x)
}
)");
    std::vector<Shape> products;
    for (const Node &n : g.nodes) {
        CHECK(n.op_type != "Einsum");
        if (n.op_type == "MatMul")
            products.push_back(g.value(n.outputs[0]).shape);
    }
    REQUIRE(products.size() == 2);
    // x U is [16, 2] per batch item (its b and s as the MatMul's rows); then [16, 8].
    CHECK(shape_numel(products[0]) == 16 * 2);
    CHECK(shape_numel(products[1]) == 16 * 8);
}
