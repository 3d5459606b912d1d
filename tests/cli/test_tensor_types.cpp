// Bool and bfloat16 tensors end to end through the command line (issue 20): a model compiled
// with neuron-halide-cc, its inputs given to neuron-halide-run as .pb and .npy files as ONNX and
// NumPy store them, its outputs read back from the .npy files it writes.

#include "CliRun.h"

#include <cmath>
#include <cstring>

using namespace nhc::cli_test;

namespace {

/** Writes `t` as a .npy file in `dir`. */
void write_npy(const TempDir &dir, const std::string &name, const nhc::NpyTensor &t) {
    std::vector<uint8_t> b = nhc::make_npy(t);
    std::ofstream(dir.file(name), std::ios::binary).write((const char *)b.data(), b.size());
}

/** Writes a TensorProto of `type` with these raw bytes as a .pb file in `dir`. */
void write_pb(const TempDir &dir, const std::string &name, int type,
              const std::vector<int64_t> &shape, const std::vector<uint8_t> &bytes) {
    onnx::TensorProto t;
    t.set_data_type(type);
    for (int64_t d : shape)
        t.add_dims(d);
    t.set_raw_data(std::string(bytes.begin(), bytes.end()));
    std::ofstream f(dir.file(name), std::ios::binary);
    REQUIRE(t.SerializeToOstream(&f));
}

nhc::NpyTensor tensor(const std::string &dtype, std::vector<int64_t> shape,
                      std::vector<uint8_t> bytes) {
    nhc::NpyTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data = std::move(bytes);
    return t;
}

/** The bits of bfloat16 numbers exact in it, as little-endian bytes. */
std::vector<uint8_t> bf16_bytes(const std::vector<float> &values) {
    std::vector<uint8_t> out;
    for (float v : values) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        REQUIRE((bits & 0xffff) == 0); // exact in bfloat16
        out.push_back(uint8_t(bits >> 16));
        out.push_back(uint8_t(bits >> 24));
    }
    return out;
}

/** neuron-halide-run of file.neff in `dir` with `inputs` (its --input arguments) refuses an input
 *  with NHC_ERT003 and a message holding `why`. */
void expect_input_refused(const TempDir &dir, const std::string &inputs, const std::string &why) {
    Run r = run_neff("file.neff " + inputs, dir.path.string());
    expect_user_error(r, "NHC_ERT003");
    CHECK(r.has(why));
}

std::vector<float> floats(const nhc::NpyTensor &t) {
    REQUIRE(t.dtype == "float32");
    std::vector<float> v(t.data.size() / 4);
    std::memcpy(v.data(), t.data.data(), t.data.size());
    return v;
}

} // namespace

TEST_CASE("bool inputs and outputs: .pb and .npy files in, a bool .npy out") {
    TempDir dir;
    std::string m = model_file(dir, "logic.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool[2, 3] x, bool[2, 3] y) => (bool[2, 3] z, bool[2, 3] w) {
  z = And(x, y)
  w = Not(x)
}
)");
    Run compiled = run(m, dir.path.string());
    INFO(compiled.out);
    REQUIRE(compiled.status == 0);
    std::vector<uint8_t> x = {1, 0, 1, 1, 0, 0}, y = {1, 1, 0, 1, 0, 1};
    write_pb(dir, "x.pb", onnx::TensorProto::BOOL, {2, 3}, x);
    write_npy(dir, "y.npy", tensor("bool", {2, 3}, y));
    Run ran =
        run_neff("file.neff --input x=x.pb --input y=y.npy --output-dir out", dir.path.string());
    INFO(ran.out);
    REQUIRE(ran.status == 0);
    CHECK(ran.has("output z: bool [2,3]"));
    nhc::NpyTensor z = read_npy(dir, "out/z.npy"), w = read_npy(dir, "out/w.npy");
    CHECK(z.dtype == "bool");
    CHECK(w.dtype == "bool");
    CHECK(z.data == std::vector<uint8_t>{1, 0, 0, 1, 0, 0});
    CHECK(w.data == std::vector<uint8_t>{0, 1, 0, 0, 1, 1});
    // A bool input takes bool data, 0 or 1: uint8 bytes, or a byte 2, are coded errors.
    write_npy(dir, "u8.npy", tensor("uint8", {2, 3}, y));
    expect_input_refused(dir, "--input x=x.pb --input y=u8.npy",
                         "input 'y' is uint8 [2,3]: expected bool [2,3]");
    write_npy(dir, "two.npy", tensor("bool", {2, 3}, {1, 2, 0, 0, 0, 0}));
    expect_input_refused(dir, "--input x=x.pb --input y=two.npy", "holds the byte 2");
}

TEST_CASE("bfloat16 inputs as bf16 or uint16 bits, .pb and .npy, outputs widened exactly") {
    TempDir dir;
    std::string m = model_file(dir, "casts.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bfloat16[2, 2] x, float[2, 2] f) => (float[2, 2] y, bfloat16[2, 2] b) {
  y = Cast <to = 1> (x)
  b = Cast <to = 16> (f)
}
)");
    Run compiled = run(m, dir.path.string());
    INFO(compiled.out);
    REQUIRE(compiled.status == 0);
    std::vector<float> xs = {1.5f, -2.0f, 0.25f, 384.0f};
    std::vector<uint8_t> fb(16);
    std::vector<float> fs = {3.0f, -0.5f, 1024.0f, 0.125f};
    std::memcpy(fb.data(), fs.data(), 16);
    write_npy(dir, "f.npy", tensor("float32", {2, 2}, fb));
    // As a BFLOAT16 TensorProto, as the UINT16 one ONNX's test data stores, as a uint16 .npy.
    write_pb(dir, "x_bf16.pb", onnx::TensorProto::BFLOAT16, {2, 2}, bf16_bytes(xs));
    write_pb(dir, "x_u16.pb", onnx::TensorProto::UINT16, {2, 2}, bf16_bytes(xs));
    write_npy(dir, "x_u16.npy", tensor("uint16", {2, 2}, bf16_bytes(xs)));
    for (const char *file : {"x_bf16.pb", "x_u16.pb", "x_u16.npy"}) {
        CAPTURE(file);
        std::filesystem::remove_all(dir.file("out"));
        Run ran = run_neff(std::string("file.neff --input x=") + file +
                               " --input f=f.npy --output-dir out",
                           dir.path.string());
        INFO(ran.out);
        REQUIRE(ran.status == 0);
        CHECK(floats(read_npy(dir, "out/y.npy")) == xs);
        CHECK(floats(read_npy(dir, "out/b.npy")) == fs); // bf16 output, widened
    }
    // Other integer bits are not bfloat16.
    write_npy(dir, "x_i16.npy", tensor("int16", {2, 2}, bf16_bytes(xs)));
    expect_input_refused(dir, "--input x=x_i16.npy --input f=f.npy",
                         "input 'x' is int16 [2,2]: expected bfloat16 [2,2]");
}

TEST_CASE("--freeze-input takes a bfloat16 input's uint16 bits and a bool input's file") {
    TempDir dir;
    std::string m = model_file(dir, "frozen.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bfloat16[2] x, bool[2] c, float[2] a) => (float[2] y) {
  xf = Cast <to = 1> (x)
  y = Where(c, xf, a)
}
)");
    write_pb(dir, "x.pb", onnx::TensorProto::UINT16, {2}, bf16_bytes({2.5f, -8.0f}));
    write_npy(dir, "c.npy", tensor("bool", {2}, {0, 1}));
    Run compiled = run(m + " --freeze-input x=x.pb --freeze-input c=c.npy", dir.path.string());
    INFO(compiled.out);
    REQUIRE(compiled.status == 0);
    std::vector<uint8_t> ab(8);
    std::vector<float> as = {7.0f, 9.0f};
    std::memcpy(ab.data(), as.data(), 8);
    write_npy(dir, "a.npy", tensor("float32", {2}, ab));
    Run ran = run_neff("file.neff --input a=a.npy --output-dir out", dir.path.string());
    INFO(ran.out);
    REQUIRE(ran.status == 0);
    CHECK(floats(read_npy(dir, "out/y.npy")) == std::vector<float>{7.0f, -8.0f});
}

TEST_CASE("--enable-saturate-infinity: an infinity no longer turns the PE transpose's row to NaN") {
    TempDir dir;
    // x [128, 256] @ w [256, 64]: x is transposed on the PE in front of the matmul. x[0][5] is
    // +inf; on trn1 the transpose makes row 5 of x^T NaN, and so every output element.
    std::string m = model_file(dir, "mm.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x) => (float[128, 64] y) {
  s = Constant <value = int64[2] {256, 64}> ()
  w = ConstantOfShape <value = float[1] {1.0}> (s)
  y = MatMul(x, w)
}
)");
    std::vector<float> xs(128 * 256, 0.5f);
    xs[5] = INFINITY;
    std::vector<uint8_t> xb(xs.size() * 4);
    std::memcpy(xb.data(), xs.data(), xb.size());
    write_npy(dir, "x.npy", tensor("float32", {128, 256}, xb));
    auto row_finite = [&](const std::string &flags, int row) {
        Run c = run(m + " --output o.neff" + flags, dir.path.string());
        INFO(c.out);
        REQUIRE(c.status == 0);
        Run r = run_neff("o.neff --input x=x.npy --output-dir out", dir.path.string());
        INFO(r.out);
        REQUIRE(r.status == 0);
        std::vector<float> y = floats(read_npy(dir, "out/y.npy"));
        bool finite = true;
        for (int n = 0; n < 64; n++)
            finite = finite && std::isfinite(y[size_t(row * 64 + n)]) &&
                     y[size_t(row * 64 + n)] == 128.0f; // 256 x 0.5 x 1
        return finite;
    };
    CHECK_FALSE(row_finite("", 1)); // NaN: the flag is off
    CHECK(row_finite(" --enable-saturate-infinity", 1));
    CHECK(row_finite(" --enable-saturate-infinity", 127));
}
