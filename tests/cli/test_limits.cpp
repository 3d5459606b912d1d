// Tensors too large to compile are coded errors before anything is allocated for them (issue 19's
// resource limits): each compile runs under `ulimit -v` (4 GB of address space), so an attempt to
// allocate one would fail the test rather than the machine.

#include "CliRun.h"

using namespace nhc::cli_test;

namespace {

/** neuron-halide-cc on `model` in `dir`, its address space limited to 4 GB. */
Run compile_limited(const TempDir &dir, const std::string &model) {
    return run_shell(in_dir(dir.path.string()) + "ulimit -v 4000000; " + cli() + " " + model);
}

} // namespace

TEST_CASE(
    "a tensor of more elements than 32-bit indices reach, or than 64 bits count, is refused") {
    TempDir dir;
    Run big = compile_limited(dir, model_file(dir, "big.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[60000, 60000] x) => (float[60000, 60000] y) { y = Relu(x) }
)"));
    expect_user_error(big, "NHC_EMOD026");
    CHECK(big.has("tensor 'x' has shape [60000,60000], 3600000000 elements"));
    Run huge = compile_limited(dir, model_file(dir, "huge.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4000000000000, 4000000000000] x) => (float[4000000000000, 4000000000000] y) {
  y = Relu(x)
}
)"));
    expect_user_error(huge, "NHC_EMOD026");
    CHECK(huge.has("overflows a 64-bit integer"));
}

TEST_CASE("a weight whose dims overflow is refused, not matched against its bytes") {
    TempDir dir;
    onnx::ModelProto m = nhc::test::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) {
  s = ReduceSum <keepdims = 0> (w)
  y = Add(x, s)
}
)");
    onnx::TensorProto *w = m.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(int64_t(1) << 62); // times 4 elements times 4 bytes wraps to 0 bytes
    w->add_dims(4);
    w->set_raw_data("");
    Run r = compile_limited(dir, nhc::test::write_model(m, dir.file("w.onnx")));
    expect_user_error(r, "NHC_EMOD026");
    CHECK(r.has("tensor 'w' has shape [4611686018427387904,4]"));
}

TEST_CASE("inputs, outputs and weights past one NeuronCore's HBM are refused") {
    TempDir dir;
    Run r = compile_limited(dir, model_file(dir, "hbm.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1073741823] a, float[1073741823] b, float[1073741823] c, float[1073741823] d)
    => (float[1073741823] y) {
  t = Add(a, b)
  u = Add(t, c)
  y = Add(u, d)
}
)"));
    expect_user_error(r, "NHC_EMOD027");
    CHECK(r.has("take 21474836460 bytes together; one NeuronCore of trn1 addresses 17179869184"));
}
