// Host fallback through the command line (issue 18): a model whose TopK and NonMaxSuppression
// the device cannot run compiles into one partitioned NEFF (device and host segments) that
// neuron-halide-run runs end to end; `--fallback none` refuses it as before.

#include "CliRun.h"

#include <cmath>
#include <cstring>

using namespace nhc::cli_test;

namespace {

// Device (Sigmoid, Relu, Unsqueeze) -> host (TopK; NonMaxSuppression, whose output's length is
// known only at run time) -> device (Mul of TopK's values).
const char *kDetector = R"(
<ir_version: 8, opset_import: ["" : 17]>
detector (float[1, 6, 4] boxes_in, float[1, 6] logits) => (float[1, 3] top2, int64[1, 3] idx,
                                                           int64[N, 3] selected) {
  s = Sigmoid(logits)
  boxes = Relu(boxes_in)
  k = Constant <value = int64[1] {3}> ()
  top, idx = TopK <axis = 1> (s, k)
  two = Constant <value = float {2.0}> ()
  top2 = Mul(top, two)
  axes = Constant <value = int64[1] {1}> ()
  scores = Unsqueeze(s, axes)
  max_out = Constant <value = int64[1] {3}> ()
  iou = Constant <value = float[1] {0.5}> ()
  selected = NonMaxSuppression(boxes, scores, max_out, iou)
}
)";

void write_npy(const TempDir &dir, const std::string &name, const std::string &dtype,
               std::vector<int64_t> shape, const void *data, size_t bytes) {
    nhc::NpyTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data.assign(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + bytes);
    std::vector<uint8_t> b = nhc::make_npy(t);
    std::ofstream(dir.file(name), std::ios::binary).write((const char *)b.data(), b.size());
}

/** The detector's inputs: boxes [y1, x1, y2, x2] whose overlaps and scores decide by hand what
 *  TopK and NonMaxSuppression keep (see the expectations). */
void write_detector_inputs(const TempDir &dir) {
    const float boxes[6][4] = {{0, 0, 10, 10}, {0, 0, 10, 9},    {20, 20, 30, 30},
                               {1, 1, 11, 11}, {50, 50, 60, 60}, {21, 21, 31, 31}};
    const float logits[6] = {2.0f, 1.0f, 0.5f, 3.0f, -1.0f, 0.0f};
    write_npy(dir, "boxes.npy", "float32", {1, 6, 4}, boxes, sizeof boxes);
    write_npy(dir, "logits.npy", "float32", {1, 6}, logits, sizeof logits);
}

std::vector<int64_t> ints_of(const nhc::NpyTensor &t) {
    std::vector<int64_t> v;
    size_t es = t.dtype == "int64" ? 8 : 4;
    for (size_t i = 0; i < t.data.size() / es; i++) {
        int64_t x = 0;
        if (es == 8)
            std::memcpy(&x, t.data.data() + i * 8, 8);
        else {
            int32_t y;
            std::memcpy(&y, t.data.data() + i * 4, 4);
            x = y;
        }
        v.push_back(x);
    }
    return v;
}

/** A float32 .npy file's elements (REQUIRE that it is float32). */
std::vector<float> floats_of(const nhc::NpyTensor &t) {
    REQUIRE(t.dtype == "float32");
    std::vector<float> v(t.data.size() / 4);
    std::memcpy(v.data(), t.data.data(), v.size() * 4);
    return v;
}

/** Compiles `model` to `neff` with the log on (REQUIRE that it compiles); the log. */
Run compile_logged(const TempDir &dir, const std::string &model, const std::string &neff) {
    Run cc = run(model + " --output " + neff + " --verbose info", dir.path.string());
    INFO(cc.out);
    REQUIRE(cc.status == 0);
    return cc;
}

/** Runs `neff` with the float32 input x (and `more` arguments), outputs to `out/` (REQUIRE that
 *  it runs). */
void run_with_x(const TempDir &dir, const std::string &neff, const std::vector<float> &x,
                const std::vector<int64_t> &shape, const std::string &more = "") {
    write_npy(dir, "x.npy", "float32", shape, x.data(), x.size() * 4);
    Run r = run_neff(neff + " --input x=x.npy" + more + " --output-dir out", dir.path.string());
    INFO(r.out);
    REQUIRE(r.status == 0);
}

/** The float32 output `name` that a run wrote to `out/`. */
std::vector<float> output_floats(const TempDir &dir, const std::string &name) {
    return floats_of(read_npy(dir, "out/" + name + ".npy"));
}

} // namespace

TEST_CASE("host fallback: TopK and NonMaxSuppression between device nodes run end to end") {
    TempDir dir;
    std::string model = model_file(dir, "det.onnx", kDetector);
    Run cc = run(model + " --output det.neff --verbose info", dir.path.string());
    INFO(cc.out);
    REQUIRE(cc.status == 0);
    // The log says which nodes run where.
    // NonMaxSuppression joins TopK's segment: both read only the first segment's values.
    CHECK(cc.has("host fallback: 2 of 6 nodes run on the host, in 3 segments"));
    CHECK(cc.has("detector_sg00 on the device: 3 node(s) (Relu, Sigmoid, Unsqueeze)"));
    CHECK(cc.has("detector_sg01 on the host: 2 node(s) (NonMaxSuppression, TopK)"));
    CHECK(cc.has("detector_sg02 on the device: 1 node(s) (Mul)"));
    write_detector_inputs(dir);
    Run r = run_neff("det.neff --check-races --input boxes_in=boxes.npy --input logits=logits.npy"
                     " --output-dir out --summary-json summary.json",
                     dir.path.string());
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(r.has("host: 2 node(s) in"));
    CHECK(read_file(dir.file("summary.json")).find("\"nodes\": 2") != std::string::npos);
    // TopK keeps logits 3, 2, 1 (indices 3, 0, 1); the device doubles their sigmoids.
    CHECK(ints_of(read_npy(dir, "out/idx.npy")) == std::vector<int64_t>{3, 0, 1});
    nhc::NpyTensor top2 = read_npy(dir, "out/top2.npy");
    REQUIRE(top2.data.size() == 12);
    const float *t = reinterpret_cast<const float *>(top2.data.data());
    for (int i = 0; i < 3; i++)
        CHECK(std::fabs(t[i] - 2.0 / (1.0 + std::exp(-(3.0 - i)))) < 1e-5);
    // Box 3 (the best) suppresses 0 and 1 (IoU 0.68 and 0.61 > 0.5), box 2 suppresses 5; three
    // are kept: 3, 2, 4 (in score order), as (batch, class, box).
    nhc::NpyTensor sel = read_npy(dir, "out/selected.npy");
    CHECK(sel.shape == std::vector<int64_t>{3, 3});
    CHECK(ints_of(sel) == std::vector<int64_t>{0, 0, 3, 0, 0, 2, 0, 0, 4});
}

TEST_CASE("--fallback none refuses what the device cannot run; bad --fallback is an argument "
          "error") {
    TempDir dir;
    std::string model = model_file(dir, "det.onnx", kDetector);
    Run none = run(model + " --output det.neff --fallback none", dir.path.string());
    // Said before the front end's import would refuse NonMaxSuppression's unknown length.
    expect_user_error(none, "NHC_EUOC002");
    CHECK(none.has("NonMaxSuppression (1): 'NonMaxSuppression_5'"));
    CHECK(none.has("TopK (1)"));
    Run bad = run(model + " --output det.neff --fallback gpu", dir.path.string());
    expect_user_error(bad, "NHC_EARG002");
    CHECK(bad.has("host|none"));
}

TEST_CASE("the compile cache keeps a partitioned NEFF: a second compile is a hit of the same "
          "bytes, and a change in a host segment alone is a miss") {
    TempDir dir;
    std::string model = model_file(dir, "det.onnx", kDetector);
    std::string compile = " --cache-dir cache --verbose info --output ";
    Run miss = run(model + compile + "miss.neff", dir.path.string());
    INFO(miss.out);
    REQUIRE(miss.status == 0);
    CHECK(miss.has("compile cache: no entry "));
    CHECK(miss.has("compile cache: stored "));
    Run hit = run(model + compile + "hit.neff", dir.path.string());
    INFO(hit.out);
    REQUIRE(hit.status == 0);
    CHECK(hit.has("compile cache: hit, entry "));
    CHECK_FALSE(hit.has("code generation"));
    CHECK(read_file(dir.file("hit.neff")) == read_file(dir.file("miss.neff")));
    write_detector_inputs(dir);
    Run r = run_neff("hit.neff --input boxes_in=boxes.npy --input logits=logits.npy --output-dir o",
                     dir.path.string());
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(ints_of(read_npy(dir, "o/idx.npy")) == std::vector<int64_t>{3, 0, 1});
    // The smallest three instead: the device segments are the same graphs, the host's differs.
    std::string smallest = kDetector;
    smallest.replace(smallest.find("TopK <axis = 1>"), 15, "TopK <axis = 1, largest = 0>");
    std::string other = model_file(dir, "smallest.onnx", smallest.c_str());
    Run changed = run(other + compile + "smallest.neff", dir.path.string());
    INFO(changed.out);
    REQUIRE(changed.status == 0);
    CHECK(changed.has("compile cache: no entry "));
    CHECK(read_file(dir.file("smallest.neff")) != read_file(dir.file("miss.neff")));
}

TEST_CASE("schedule scripts with host segments: --dump-schedules writes every device "
          "segment's groups, and --schedule of it gives the same NEFF") {
    TempDir dir;
    std::string model = model_file(dir, "det.onnx", kDetector);
    Run dump = run(model + " --output a.neff --dump-schedules d.sched", dir.path.string());
    INFO(dump.out);
    REQUIRE(dump.status == 0);
    std::string script = read_file(dir.file("d.sched"));
    INFO(script);
    // The first segment's Sigmoid and Relu, the last one's Mul; TopK and NMS run on the host.
    CHECK(script.find("node \"Sigmoid_0\":") != std::string::npos);
    CHECK(script.find("node \"Relu_1\":") != std::string::npos);
    CHECK(script.find("node \"Mul_3\":") != std::string::npos);
    CHECK(script.find("TopK") == std::string::npos);
    Run again = run(model + " --output b.neff --schedule d.sched", dir.path.string());
    INFO(again.out);
    REQUIRE(again.status == 0);
    CHECK(read_file(dir.file("b.neff")) == read_file(dir.file("a.neff")));
    // A block is applied, not ignored: Mul's output tiled by 2 is another NEFF.
    std::ofstream(dir.file("tiled.sched")) << "node \"Mul_3\":\n"
                                           << "  out.compute_root().store_in(SBUF)\n"
                                           << "  stage_0.compute_root().store_in(SBUF)\n"
                                           << "  final0.split(v0, vo, vi, 2)\n";
    Run tiled = run(model + " --output c.neff --schedule tiled.sched", dir.path.string());
    INFO(tiled.out);
    REQUIRE(tiled.status == 0);
    CHECK(read_file(dir.file("c.neff")) != read_file(dir.file("a.neff")));
}

TEST_CASE("a schedule block for a host node, across segments or of no node is NHC_ESCH110") {
    TempDir dir;
    std::string model = model_file(dir, "det.onnx", kDetector);
    auto compile_with = [&](const std::string &script) {
        std::ofstream(dir.file("s.sched")) << script;
        return run(model + " --output det.neff --schedule s.sched", dir.path.string());
    };
    Run host = compile_with("node \"TopK_2\":\n  out.compute_root()\n");
    expect_user_error(host, "NHC_ESCH110");
    CHECK(host.has("node \"TopK_2\" (TopK) runs on the host"));
    Run across = compile_with("node \"Sigmoid_0\", \"Mul_3\":\n  n0_out.compute_root()\n");
    expect_user_error(across, "NHC_ESCH110");
    CHECK(across.has("\"Mul_3\" is compiled in another device segment than \"Sigmoid_0\""));
    Run unknown = compile_with("node \"Mul_33\":\n  out.compute_root()\n");
    expect_user_error(unknown, "NHC_ESCH110");
    CHECK(unknown.has("node \"Mul_33\" is not in the model; the closest node name is \"Mul_3\""));
    CHECK_FALSE(std::filesystem::exists(dir.file("det.neff")));
}

TEST_CASE("a model wholly on the host runs, and a failing host node is NHC_ERT024") {
    TempDir dir;
    // K is an input: TopK's output length is known only at run time.
    std::string model = model_file(dir, "topk.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 6] x, int64[1] k) => (float[1, K] v, int64[1, K] i) {
  v, i = TopK <axis = 1, largest = 0> (x, k)
}
)");
    REQUIRE(run(model + " --output topk.neff", dir.path.string()).status == 0);
    const float x[6] = {5, 1, 4, 1, 3, 0};
    write_npy(dir, "x.npy", "float32", {1, 6}, x, sizeof x);
    int64_t two = 2, ten = 10;
    write_npy(dir, "k2.npy", "int64", {1}, &two, 8);
    write_npy(dir, "k10.npy", "int64", {1}, &ten, 8);
    Run ok =
        run_neff("topk.neff --input x=x.npy --input k=k2.npy --output-dir out", dir.path.string());
    INFO(ok.out);
    REQUIRE(ok.status == 0);
    // The two smallest: 0 at 5, then the first of the equal 1s (index 1, the lower index).
    CHECK(ints_of(read_npy(dir, "out/i.npy")) == std::vector<int64_t>{5, 1});
    Run bad = run_neff("topk.neff --input x=x.npy --input k=k10.npy", dir.path.string());
    expect_user_error(bad, "NHC_ERT024");
    CHECK(bad.has("TopK"));
}

TEST_CASE("host fallback: NonZero and Unique, whose lengths depend on the values, after a device "
          "node") {
    TempDir dir;
    std::string model = model_file(dir, "nz.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
nz (float[2, 3] x) => (float[2, 3] y, int64[2, N] where, float[M] values) {
  y = Relu(x)
  where = NonZero(y)
  values = Unique(y)
}
)");
    Run cc = compile_logged(dir, model, "nz.neff");
    CHECK(cc.has("nz_sg01 on the host: 2 node(s) (NonZero, Unique)"));
    run_with_x(dir, "nz.neff", {1, -2, 0, 3, 1, -1}, {2, 3}); // Relu: {1, 0, 0, 3, 1, 0}
    nhc::NpyTensor where = read_npy(dir, "out/where.npy");
    CHECK(where.shape == std::vector<int64_t>{2, 3});
    CHECK(ints_of(where) == std::vector<int64_t>{0, 1, 1, 0, 0, 1});    // (0,0) (1,0) (1,1)
    CHECK(output_floats(dir, "values") == std::vector<float>{0, 1, 3}); // sorted
}

TEST_CASE("host fallback: If and Loop run on the host, their subgraphs reading a device "
          "segment's value") {
    TempDir dir;
    // r comes from the device; both subgraphs capture it. Shape inference leaves the Loop's
    // result without a shape, so the Add after it runs on the host too.
    std::string model = model_file(dir, "cf.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
cf (float[4] x, bool c) => (float[4] y, float[4] z) {
  r = Relu(x)
  y = If (c) <then_branch = then_g () => (float[4] t) { t = Mul(r, r) },
              else_branch = else_g () => (float[4] e) { e = Neg(r) }>
  n = Constant <value = int64 {3}> ()
  go = Constant <value = bool {1}> ()
  acc = Loop (n, go, r) <body = body_g (int64 i, bool go_in, float[4] a) => (bool go_out,
                                                                            float[4] a2) {
    go_out = Identity(go_in)
    a2 = Add(a, r)
  }>
  z = Add(acc, x)
}
)");
    Run cc = compile_logged(dir, model, "cf.neff");
    CHECK(cc.has("cf_sg00 on the device: 1 node(s) (Relu)"));
    CHECK(cc.has("cf_sg01 on the host: 3 node(s) (Add, If, Loop)"));
    for (bool c : {true, false}) {
        CAPTURE(c);
        const uint8_t cv = c;
        write_npy(dir, "c.npy", "bool", {}, &cv, 1);
        run_with_x(dir, "cf.neff", {1, -2, 3, -4}, {4}, " --input c=c.npy"); // r = {1, 0, 3, 0}
        std::vector<float> want_y = c ? std::vector<float>{1, 0, 9, 0}       // r * r
                                      : std::vector<float>{-1, 0, -3, 0};    // -r
        CHECK(output_floats(dir, "y") == want_y);
        CHECK(output_floats(dir, "z") == std::vector<float>{5, -2, 15, -4}); // 4r + x
    }
}

TEST_CASE("host fallback: float64 and uint64 values run on the host and cross as model inputs, "
          "outputs and between segments; a string input is NHC_EDTY001") {
    TempDir dir;
    // The engines hold no 64-bit type (was NHC_EGEN006 from the device's code generation).
    std::string model = model_file(dir, "f64.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
f (float[4] x) => (float[4] y) {
  d = Cast <to = 11> (x)
  two = Constant <value = double {2.0}> ()
  m = Mul(d, two)
  f = Cast <to = 1> (m)
  y = Relu(f)
}
)");
    Run cc = compile_logged(dir, model, "f64.neff");
    CHECK(cc.has("f_sg00 on the host: 3 node(s) (Cast x2, Mul)"));
    CHECK(cc.has("f_sg01 on the device: 1 node(s) (Relu)"));
    run_with_x(dir, "f64.neff", {1, -2, 3, -4}, {4});
    CHECK(output_floats(dir, "y") == std::vector<float>{2, 0, 6, 0});

    // 64-bit model inputs and outputs, and a float64 value from one host segment to the next
    // through a device segment's neighbour: carried in their own types (neff/DType.h), so the
    // values keep every bit float32 would lose.
    std::string wide = model_file(dir, "wide.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
w (double[2] a, uint64[2] u, float[2] x) => (double[2] b, uint64[2] v, float[2] y, double[2] c) {
  one = Constant <value = double {1.0}> ()
  b = Add(a, one)
  three = Constant <value = uint64 {3}> ()
  v = Mul(u, three)
  y = Relu(x)
  yd = Cast <to = 11> (y)
  c = Add(b, yd)
}
)");
    Run wc = compile_logged(dir, wide, "wide.neff");
    CHECK(wc.has("on the device: 1 node(s) (Relu)"));
    const double a[2] = {1e-12, 16777217.0};            // neither survives float32
    const uint64_t u[2] = {(uint64_t(1) << 53) + 1, 7}; // 2^53 + 1: not a double either
    write_npy(dir, "a.npy", "float64", {2}, a, sizeof a);
    write_npy(dir, "u.npy", "uint64", {2}, u, sizeof u);
    run_with_x(dir, "wide.neff", {-1, 2}, {2}, " --input a=a.npy --input u=u.npy");
    auto doubles = [&](const std::string &name) {
        nhc::NpyTensor t = read_npy(dir, "out/" + name + ".npy");
        REQUIRE(t.dtype == "float64");
        std::vector<double> v(t.data.size() / 8);
        std::memcpy(v.data(), t.data.data(), t.data.size());
        return v;
    };
    CHECK(doubles("b") == std::vector<double>{1.0 + 1e-12, 16777218.0});
    CHECK(doubles("c") == std::vector<double>{1.0 + 1e-12, 16777220.0});
    nhc::NpyTensor v = read_npy(dir, "out/v.npy");
    REQUIRE(v.dtype == "uint64");
    std::vector<uint64_t> vs(2);
    std::memcpy(vs.data(), v.data.data(), 16);
    CHECK(vs == std::vector<uint64_t>{3 * ((uint64_t(1) << 53) + 1), 21});
    CHECK(output_floats(dir, "y") == std::vector<float>{0, 2});
    // The host computes integers in int64: a uint64 of 2^63 is refused, not compared as negative.
    const uint64_t big[2] = {uint64_t(1) << 63, 1};
    write_npy(dir, "u.npy", "uint64", {2}, big, sizeof big);
    Run over = run_neff("wide.neff --input x=x.npy --input a=a.npy --input u=u.npy --output-dir o",
                        dir.path.string());
    expect_user_error(over, "NHC_ERT024");
    CHECK(over.has("uint64 input 'u' holds 9223372036854775808 at element 0"));

    // A model input no node reads (an expanded CastLike's): the host segment takes it anyway.
    std::string like = model_file(dir, "like.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
l (double[2] a, float[1] like) => (float[2] y) {
  y = Cast <to = 1> (a)
}
)");
    compile_logged(dir, like, "like.neff");
    const float like_value = 0;
    write_npy(dir, "like.npy", "float32", {1}, &like_value, sizeof like_value);
    Run lr = run_neff("like.neff --input a=a.npy --input like=like.npy --output-dir out",
                      dir.path.string());
    INFO(lr.out);
    REQUIRE(lr.status == 0);
    CHECK(output_floats(dir, "y") == std::vector<float>{1e-12f, 16777216.0f});

    // Strings: no host tensor holds them.
    std::string strings = model_file(dir, "str.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
s (string[2] t) => (string[2] o) {
  o = Identity(t)
}
)");
    Run refused = run(strings + " --output str.neff", dir.path.string());
    expect_user_error(refused, "NHC_EDTY001");
    CHECK(refused.has("'t'"));
}

TEST_CASE("a Loop whose body holds an operator the host cannot run is refused when compiling") {
    TempDir dir;
    std::string model = model_file(dir, "loopbernoulli.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
ld (float[2, 2] x) => (float[2, 2] y) {
  n = Constant <value = int64 {2}> ()
  go = Constant <value = bool {1}> ()
  y = Loop (n, go, x) <body = body_g (int64 i, bool go_in, float[2, 2] a) => (bool go_out,
                                                                             float[2, 2] a2) {
    go_out = Identity(go_in)
    d = Bernoulli(a)
    a2 = Mul(a, d)
  }>
}
)");
    Run r = run(model + " --output ld.neff", dir.path.string());
    expect_user_error(r, "NHC_EUOC002");
    CHECK(r.has("Loop"));
    CHECK(r.has("a node of its subgraphs"));
}

TEST_CASE("host fallback: a quantized weight's DequantizeLinear folds for the device; an "
          "activation's QuantizeLinear and DequantizeLinear run on the host") {
    TempDir dir;
    // w = (wq - 1) * 0.5 = {-0.5, 0.5, 1.5, -1} folds into a float weight of the device's Mul;
    // the Q/DQ pair on the Mul's output (scale 0.25, zero point 2) rounds it to a multiple of
    // 0.25 and saturates at (255 - 2) * 0.25 = 63.25 and (0 - 2) * 0.25 = -0.5.
    std::string model = model_file(dir, "qdq.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
q (float[4] x) => (float[4] y) {
  wq = Constant <value = int8[4] {0, 2, 4, -1}> ()
  ws = Constant <value = float {0.5}> ()
  wz = Constant <value = int8 {1}> ()
  w = DequantizeLinear(wq, ws, wz)
  m = Mul(x, w)
  s = Constant <value = float {0.25}> ()
  z = Constant <value = uint8 {2}> ()
  mq = QuantizeLinear(m, s, z)
  md = DequantizeLinear(mq, s, z)
  y = Relu(md)
}
)");
    Run cc = compile_logged(dir, model, "qdq.neff");
    CHECK(cc.has("q_sg00 on the device: 1 node(s) (Mul)"));
    CHECK(cc.has("q_sg01 on the host: 2 node(s) (DequantizeLinear, QuantizeLinear)"));
    CHECK(cc.has("q_sg02 on the device: 1 node(s) (Relu)"));
    // m = {0.3, 200, 3, -2}: 0.3 / 0.25 = 1.2 rounds to 1 (0.25), 3 / 0.25 = 12 (3); 200 and
    // -2 saturate (63.25 and -0.5, which Relu makes 0).
    run_with_x(dir, "qdq.neff", {-0.6f, 400, 2, 2}, {4});
    CHECK(output_floats(dir, "y") == std::vector<float>{0.25f, 63.25f, 3, 0});
}

TEST_CASE("Einsum: a batched product runs on the device as a MatMul; the device runs what "
          "follows a diagonal on the host, whose shape the compiler infers from its equation") {
    TempDir dir;
    // p [2, 3, 3] is a batched product (a MatMul on the device: frontend/DecomposeEinsum.h); q
    // [2, 3] its diagonals, on the host, whose shape ONNX's inference leaves unknown past the rank.
    std::string model = model_file(dir, "einsum.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
e (float[2, 3, 4] x, float[2, 4, 3] b) => (float[2, 3, 3] z, float[2, 3] y) {
  rx = Relu(x)
  p = Einsum <equation = "bij,bjk->bik"> (rx, b)
  q = Einsum <equation = "bii->bi"> (p)
  z = Sigmoid(p)
  y = Sigmoid(q)
}
)");
    Run cc = compile_logged(dir, model, "einsum.neff");
    CHECK(cc.has("1 Einsum node(s) as MatMuls"));
    CHECK(cc.has("e_sg00 on the device: 3 node(s) (MatMul, Relu, Sigmoid)"));
    CHECK(cc.has("e_sg01 on the host: 1 node(s) (Einsum)"));
    CHECK(cc.has("e_sg02 on the device: 1 node(s) (Sigmoid)"));
    std::vector<float> x(24), b(24);
    for (size_t i = 0; i < x.size(); i++)
        x[i] = float(int(i % 7) - 2) * 0.25f;
    for (size_t i = 0; i < b.size(); i++)
        b[i] = float(int(i % 5) - 2) * 0.125f;
    write_npy(dir, "b.npy", "float32", {2, 4, 3}, b.data(), b.size() * 4);
    run_with_x(dir, "einsum.neff", x, {2, 3, 4}, " --input b=b.npy");
    std::vector<float> z = output_floats(dir, "z"), y = output_floats(dir, "y");
    REQUIRE(z.size() == 18);
    REQUIRE(y.size() == 6);
    auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
    for (int n = 0; n < 2; n++)
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) {
                double p = 0;
                for (int j = 0; j < 4; j++)
                    p += std::max(0.0f, x[size_t(n * 12 + i * 4 + j)]) *
                         b[size_t(n * 12 + j * 3 + k)];
                CHECK(z[size_t(n * 9 + i * 3 + k)] == doctest::Approx(sigmoid(p)).epsilon(1e-3));
                if (i == k)
                    CHECK(y[size_t(n * 3 + i)] == doctest::Approx(sigmoid(p)).epsilon(1e-3));
            }
}
