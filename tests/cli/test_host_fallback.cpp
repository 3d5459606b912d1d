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

TEST_CASE("schedule scripts are refused for a model with host segments, not ignored") {
    TempDir dir;
    std::string model = model_file(dir, "det.onnx", kDetector);
    std::ofstream(dir.file("s.sched")) << "# empty\n";
    Run script = run(model + " --output det.neff --schedule s.sched", dir.path.string());
    expect_user_error(script, "NHC_ENYI001");
    CHECK(script.has("--schedule"));
    Run dump = run(model + " --output det.neff --dump-schedules d.sched", dir.path.string());
    expect_user_error(dump, "NHC_ENYI001");
    CHECK(dump.has("--dump-schedules"));
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
