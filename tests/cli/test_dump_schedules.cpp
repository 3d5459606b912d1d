// `neuron-halide-cc MODEL --dump-schedules FILE` through the shipped binary: the script it writes
// names every group compiled (one node, or the nodes of a fused group), `--schedule` of it writes
// the same NEFF byte for byte on every development model, and an edited block takes effect. The
// block forms the dump relies on (fused groups, `hint fold_broadcast`) refuse what they cannot
// take with a code.

#include "CliRun.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace nhc::cli_test;
namespace fs = std::filesystem;

namespace {

void write_file(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::string compile(const std::string &model, const TempDir &dir, const std::string &options) {
    Run r = run(model + " " + options, dir.path.string());
    INFO(r.out);
    REQUIRE(r.status == 0);
    return r.out;
}

/** Compiles `model` with --dump-schedules, again with --schedule of the dump; both NEFFs must be
 *  the bytes of a plain compile. Returns the dumped script. */
std::string check_round_trip(const std::string &model, const TempDir &dir,
                             const std::string &options = "") {
    compile(model, dir, options + " --output plain.neff");
    compile(model, dir, options + " --output dumped.neff --dump-schedules used.sched");
    compile(model, dir, options + " --output replayed.neff --schedule used.sched");
    std::string plain = read_file(dir.file("plain.neff"));
    CHECK_MESSAGE(read_file(dir.file("dumped.neff")) == plain,
                  model << ": --dump-schedules changes the NEFF");
    CHECK_MESSAGE(read_file(dir.file("replayed.neff")) == plain,
                  model << ": --schedule of the dumped script writes another NEFF");
    return read_file(dir.file("used.sched"));
}

std::vector<fs::path> dev_models() {
    fs::path dir = fs::path(NHC_SOURCE_DIR) / ".." / "shared" / "models";
    std::vector<fs::path> models;
    if (fs::is_directory(dir))
        for (const auto &e : fs::directory_iterator(dir))
            if (fs::exists(e.path() / "model.onnx"))
                models.push_back(e.path() / "model.onnx");
    std::sort(models.begin(), models.end());
    return models;
}

/** Compiles `model` with the schedule `text` (written to dir/`name`). */
Run with_schedule(const std::string &model, const TempDir &dir, const std::string &name,
                  const std::string &text) {
    write_file(dir.file(name), text);
    return run(model + " --schedule " + name, dir.path.string());
}

std::string replace_once(std::string s, const std::string &from, const std::string &to) {
    size_t at = s.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, "'" << from << "' not in:\n" << s);
    return s.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("--dump-schedules round-trips byte for byte on every development model") {
    std::vector<fs::path> models = dev_models();
    if (models.empty())
        MESSAGE("../shared/models not present: only the example is checked");
    models.push_back(example_model());
    int fused = 0;
    for (const fs::path &m : models) {
        TempDir dir;
        std::string script = check_round_trip(m.string(), dir);
        CHECK(script.find("node \"") != std::string::npos);
        fused += script.find("\", \"") != std::string::npos;
    }
    // dev_bert_layer's attention, dev_cnn's residual Add + Relu, dev_unet's GroupNorm chains.
    if (models.size() > 1)
        CHECK(fused >= 3);
    // With mixed precision, and for another target.
    for (const fs::path &m : models) {
        if (m.parent_path().filename() != "dev_bert_layer" &&
            m.parent_path().filename() != "dev_unet")
            continue;
        TempDir dir;
        check_round_trip(m.string(), dir, "--auto-cast matmult --auto-cast-type bf16");
        check_round_trip(m.string(), dir, "--target trn2");
    }
}

TEST_CASE("the dumped script names fused groups and its edits take effect") {
    TempDir dir;
    std::string script = check_round_trip(example_model(), dir);
    // The example's Gemm and its Relu are one group; a node's stages carry its index.
    CHECK(script.find("node \"fc1\", \"relu1\":") != std::string::npos);
    CHECK(script.find("n0_acc.compute_at(n1_final0, no).store_in(PSUM)") != std::string::npos);
    CHECK(script.find("hint fold_broadcast n0_bias 128") != std::string::npos);
    CHECK(script.find("# Gemm 'fc1' + Relu 'relu1'") != std::string::npos);
    // K chunks of 32 instead of 64 in the fused group: another NEFF, the same values.
    write_file(dir.file("edited.sched"),
               replace_once(script, "n0_acc.update().split(k, ko, ki, 64)",
                            "n0_acc.update().split(k, ko, ki, 32)"));
    compile(example_model(), dir, "--output edited.neff --schedule edited.sched");
    CHECK(read_file(dir.file("edited.neff")) != read_file(dir.file("plain.neff")));
    CHECK(example_rel_l2(dir, "edited.neff") <= 1e-4);
    // Without the fold the bias is built per tile, as Halide sizes it: still the same values.
    write_file(dir.file("unfolded.sched"),
               replace_once(script, "  hint fold_broadcast n0_bias 128\n", ""));
    compile(example_model(), dir, "--output unfolded.neff --schedule unfolded.sched");
    CHECK(example_rel_l2(dir, "unfolded.neff") <= 1e-4);
}

TEST_CASE("a block of several nodes must be a group the code generator fuses: NHC_ESCH119") {
    TempDir dir;
    // A Gemm cannot join another Gemm's group.
    Run gemms = with_schedule(example_model(), dir, "two_gemms.sched",
                              "node \"fc1\", \"relu1\", \"fc2\":\n");
    expect_user_error(gemms, "NHC_ESCH119");
    CHECK(gemms.has("node \"fc2\" cannot join the group of \"fc1\""));
    // The nodes must be written in graph order.
    expect_user_error(
        with_schedule(example_model(), dir, "reversed.sched", "node \"relu1\", \"fc1\":\n"),
        "NHC_ESCH119");
    // A node in two blocks.
    Run twice = with_schedule(example_model(), dir, "twice.sched",
                              "node \"fc1\", \"relu1\":\n\nnode \"relu1\":\n");
    expect_user_error(twice, "NHC_ESCH103");
    CHECK(twice.has("twice.sched:3"));
    // An intermediate value read outside the block cannot stay inside it.
    std::string shared = model_file(dir, "shared.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 8] x) => (float[4, 8] y, float[4, 8] z) { y = Relu(x)  z = Sigmoid(y) }
)");
    Run escaping =
        with_schedule(shared, dir, "escaping.sched", "node \"Relu_0\", \"Sigmoid_1\":\n");
    expect_user_error(escaping, "NHC_ESCH119");
    CHECK(escaping.has("node \"Sigmoid_1\" cannot join"));
}

TEST_CASE("blocks the compiler would ignore are refused: folded Transpose, rewritten Conv") {
    TempDir dir;
    // The Relu writes its output transposed; the Transpose has no instruction of its own.
    std::string transposed = model_file(dir, "transposed.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 4] x) => (float[3, 2, 4] y) { r = Relu(x)  y = Transpose <perm = [1, 0, 2]> (r) }
)");
    Run t = with_schedule(transposed, dir, "transpose.sched", "node \"Transpose_1\":\n");
    expect_user_error(t, "NHC_ESCH118");
    CHECK(t.has("its producer \"Relu_0\" writes its output in the transposed layout"));
    // A Conv is compiled as the nodes the passes make of it; the message names them, and a block
    // for one of them applies (as the dump writes it).
    std::string conv = model_file(dir, "conv.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 6, 6] x, float[4, 2, 3, 3] w) => (float[1, 4, 4, 4] y) { y = Conv(x, w) }
)");
    Run rewritten =
        with_schedule(conv, dir, "conv.sched", "node \"Conv_0\":\n  out.compute_root()\n");
    expect_user_error(rewritten, "NHC_ESCH110");
    CHECK(rewritten.has("schedule the nodes it becomes: \"Conv_0__"));
    check_round_trip(conv, dir);
}

TEST_CASE("hint fold_broadcast refuses a stage that is not a broadcast: NHC_ESCH115") {
    TempDir dir;
    Run r = with_schedule(example_model(), dir, "fold.sched",
                          "node \"fc2\":\n  hint fold_broadcast acc 128\n");
    expect_user_error(r, "NHC_ESCH115");
    CHECK(r.has("fold.sched:2"));
    CHECK(r.has("is not a broadcast stage"));
}

TEST_CASE("--dump-schedules to a folder that does not exist is NHC_EIO002, before compiling") {
    TempDir dir;
    Run r = run(example_model() + " --dump-schedules missing/used.sched", dir.path.string());
    expect_user_error(r, "NHC_EIO002");
    CHECK(r.has("missing/used.sched"));
    // Before the model is read: a model the compiler would refuse later still gets NHC_EIO002.
    std::string bernoulli = model_file(dir, "bernoulli.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) { y = Bernoulli(x) }
)");
    expect_user_error(run(bernoulli + " --dump-schedules missing/used.sched", dir.path.string()),
                      "NHC_EIO002");
}

TEST_CASE("--dump-schedules round-trips the schedules of operators past the chip's capacity") {
    // Column chunks of an elementwise group and of a reduction (a decomposed Softmax over rows
    // of a prime length, which no view spreads over more partitions), a PE transpose in
    // [128, 128] tiles, a layout output staged per tile of rows, and a ConvTranspose whose
    // spread image is staged per band of output rows.
    TempDir dir;
    std::string model = model_file(dir, "m.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 30011] x, float[300, 700] t, float[1, 64, 200, 300] s, float[1, 8, 48, 48] c,
   float[8, 4, 4, 4] w) =>
  (float[4, 30011] y, float[700, 300] u, float[1, 64, 150, 300] v, float[1, 4, 96, 96] z)
    <int64[1] starts = {20}, int64[1] ends = {170}, int64[1] axes = {2}> {
  y = Softmax <axis = -1> (x)
  u = Transpose <perm = [1, 0]> (t)
  v = Slice(s, starts, ends, axes)
  z = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1]> (c, w)
}
)");
    std::string script = check_round_trip(model, dir);
    CHECK(script.find("split(v0, v0o, v0i") != std::string::npos);
    CHECK(script.find("acc.update().split(r, ro, ri") != std::string::npos);
    CHECK(script.find("tp.compute_at(final0, v0o).store_in(PSUM)") != std::string::npos);
}

TEST_CASE("--dump-schedules round-trips when a lowering is reused by a group whose values sort "
          "otherwise") {
    // Two linear layers of one workload: the second group takes the first's lowering, rebound
    // to its values. Layer 1's weight sorts before its bias (a_w1 < b1), layer 2's after it
    // (b2 < w2); the replay lowers each group afresh. Both must make the variables in one order.
    std::string w, b;
    for (int i = 0; i < 32 * 32; i++)
        w += (i ? "," : "") + std::to_string(i % 7 - 3);
    for (int i = 0; i < 32; i++)
        b += (i ? "," : "") + std::to_string(i % 5);
    TempDir dir;
    std::string model = model_file(dir, "m.onnx",
                                   R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 128, 32] x) => (float[2, 128, 32] y)
    <float[32, 32] a_w1 = {)" + w + "}, float[32] b1 = {" +
                                       b + "}, float[32, 32] w2 = {" + w + "}, float[32] b2 = {" +
                                       b + R"(}> {
  h = MatMul(x, a_w1)
  hb = Add(h, b1)
  o = MatMul(hb, w2)
  y = Add(o, b2)
}
)");
    check_round_trip(model, dir);
}
