// Vision operators lowered by graph passes, checked on the simulator: Resize in every mode the
// ONNX node tests cover (graph/ResizeMatmul; nearest upsampling by integers as an Expand), and
// group / instance normalisation spread over the partitions (graph/GroupNorm).

#include "TextCases.h"
#include "graph/ConvIm2Col.h"
#include "graph/GroupNorm.h"
#include "graph/ResizeMatmul.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/ScheduleScript.h"
#include "target/Target.h"

#include <algorithm>
#include <doctest/doctest.h>
#include <set>

using namespace nhc;
namespace fs = std::filesystem;
using test::load_text;

namespace {

/** The ONNX node test in `dir` with every input but the first bound as an initializer from its
 *  stored data (the tests pass Resize's scales and sizes at run time; a static compile needs
 *  them constant). */
Graph load_with_constant_operands(const fs::path &dir, const test::TempDir &tmp) {
    onnx::ModelProto model;
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    REQUIRE(model.ParseFromIstream(&in));
    onnx::GraphProto *graph = model.mutable_graph();
    for (int i = graph->input_size() - 1; i >= 1; i--) {
        onnx::TensorProto t;
        std::ifstream data(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"),
                           std::ios::binary);
        REQUIRE(t.ParseFromIstream(&data));
        t.set_name(graph->input(i).name());
        *graph->add_initializer() = t;
        graph->mutable_input()->DeleteSubrange(i, 1);
    }
    return run_frontend(test::write_model(model, tmp.file("m.onnx")), {});
}

// ResNet-50's first convolution (3 channels, 7 x 7, stride 2) on a 64 x 64 image.
const char *kResNetStem64 = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 64, 64] x, float[16, 3, 7, 7] w) => (float[1, 16, 32, 32] y) {
  y = Conv <pads = [3, 3, 3, 3], strides = [2, 2]> (x, w)
}
)";

/** Graph input `name` made a constant (a weight) with its value in `inputs`, which loses it. */
void make_constant(Graph &g, std::map<std::string, HostTensor> &inputs, const std::string &name) {
    g.values.at(name).constant = std::make_shared<HostTensor>(inputs.at(name));
    g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), name));
    inputs.erase(name);
}

} // namespace

TEST_CASE("Resize in every mode of the ONNX node tests matches their outputs (fp32)") {
    fs::path node = "/usr/share/libonnx-testdata/data/node";
    if (!fs::is_directory(node)) {
        MESSAGE("libonnx-testdata not installed: nothing to check");
        return;
    }
    std::vector<fs::path> cases;
    for (const auto &e : fs::directory_iterator(node)) {
        std::string name = e.path().filename().string();
        if ((name.rfind("test_resize_", 0) == 0 || name == "test_upsample_nearest") &&
            name.find("tf_crop_and_resize") == std::string::npos)
            cases.push_back(e.path());
    }
    std::sort(cases.begin(), cases.end());
    CHECK(cases.size() >= 22);
    for (const fs::path &c : cases) {
        INFO(c.filename().string());
        test::TempDir tmp;
        Graph g = load_with_constant_operands(c, tmp);
        HostTensor x = test::read_pb(c / "test_data_set_0" / "input_0.pb");
        HostTensor want = test::read_pb(c / "test_data_set_0" / "output_0.pb");
        test::E2EResult got = test::compile_and_run(g, {{g.inputs[0], x}});
        CHECK(test::compare(got.outputs.at(g.outputs[0]), want, 1e-5, 1e-5).rel_l2 <= 1e-6);
        auto ref = alg::run_reference(g, {{g.inputs[0], x}});
        CHECK(test::compare(ref.at(g.outputs[0]), want, 1e-5, 1e-5).rel_l2 <= 1e-6);
    }
}

TEST_CASE("Resize along rows: 8 channels per matmul (a block-diagonal matrix) at -O2, one per "
          "channel at -O1; both match") {
    // A UNet's 2x upsampling, linear: along the rows, 16 channels of 8 rows into 16.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 16, 8, 8] x) => (float[1, 16, 16, 16] y)
    <float[4] s = {1.0, 1.0, 2.0, 2.0}> {
  y = Resize <mode = "linear"> (x, , s)
}
)");
    auto inputs = test::random_inputs(g, 21);
    auto want = alg::run_reference(g, inputs);
    CHECK(resize_items_per_matmul(16, ResizeAxis{8, 16, {}}, 128) == 8);
    CHECK(resize_items_per_matmul(16, ResizeAxis{8, 16, {}}, 0) == 1);
    CHECK(resize_items_per_matmul(7, ResizeAxis{8, 16, {}}, 128) == 7);  // 7 x 16 rows fit
    CHECK(resize_items_per_matmul(13, ResizeAxis{8, 16, {}}, 128) == 1); // prime, 13 x 16 > 128
    neff::Program programs[2];
    for (int level : {1, 2}) {
        CAPTURE(level);
        CompileOptions o;
        o.optlevel = level;
        test::E2EResult got = test::compile_and_run(g, inputs, o);
        CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-5, 1e-5).rel_l2 <= 1e-6);
        programs[level - 1] = test::compile_graph(g, o);
    }
    // The rows' matmuls: 2 of K = 64 (8 channels x 8 rows) at -O2 instead of 16 of K = 8 (the
    // columns' matmuls contract 8 too, at both levels).
    CHECK(test::matmuls_contracting(programs[0], 64) == 0);
    CHECK(test::matmuls_contracting(programs[1], 64) == 2);
    CHECK(test::matmuls_contracting(programs[0], 8) - test::matmuls_contracting(programs[1], 8) ==
          16);
}

TEST_CASE("Resize: nearest is exact and stays fp32 under bf16 auto-cast; tf_crop_and_resize "
          "refused") {
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 5, 7] x) => (float[1, 3, 10, 14] y)
    <float[4] s = {1.0, 1.0, 2.0, 2.0}> {
  y = Resize <mode = "nearest", coordinate_transformation_mode = "asymmetric",
              nearest_mode = "floor"> (x, , s)
}
)";
    Graph g = load_text(text);
    HostTensor x(DType::Float32, {1, 3, 5, 7});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, 1.0 + 1e-3 * double(i)); // not representable in bf16
    CompileOptions bf16;
    bf16.auto_cast = "matmult";
    bf16.auto_cast_type = "bf16";
    test::E2EResult got = test::compile_and_run(g, {{"x", x}}, bf16);
    const HostTensor &y = got.outputs.at("y");
    for (int64_t c = 0; c < 3; c++)
        for (int64_t h = 0; h < 10; h++)
            for (int64_t w = 0; w < 14; w++)
                REQUIRE(y.get_f64((c * 10 + h) * 14 + w) == x.get_f64((c * 5 + h / 2) * 7 + w / 2));

    Graph crop = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 4, 4] x) => (float[1, 1, 2, 2] y)
    <float[8] roi = {0, 0, 0.2, 0.2, 1, 1, 0.8, 0.8}, float[4] s = {1, 1, 0.5, 0.5}> {
  y = Resize <mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"> (x, roi, s)
}
)");
    std::string crop_error = test::compile_error(crop);
    CHECK(crop_error.rfind("NHC_EALG001", 0) == 0);
    CHECK(crop_error.find("tf_crop_and_resize") != std::string::npos);
}

TEST_CASE("Resize: nearest 2x of 256 channels is a load, a copy and a store per 128 channels, "
          "exact") {
    // A UNet decoder's upsampling: each element repeated where it goes, with the channels on
    // partitions (graph/ResizeMatmul's Expand), not moved through the PE.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 256, 8, 12] x) => (float[1, 256, 16, 24] y)
    <float[4] s = {1.0, 1.0, 2.0, 2.0}> {
  y = Resize <mode = "nearest", coordinate_transformation_mode = "asymmetric",
              nearest_mode = "floor"> (x, , s)
}
)");
    auto inputs = test::random_inputs(g, 9);
    const HostTensor &x = inputs.at("x");
    test::E2EResult got = test::compile_and_run(g, inputs);
    const HostTensor &y = got.outputs.at("y");
    for (int64_t c = 0; c < 256; c++)
        for (int64_t h = 0; h < 16; h++)
            for (int64_t w = 0; w < 24; w++)
                REQUIRE(y.get_f64((c * 16 + h) * 24 + w) ==
                        x.get_f64((c * 8 + h / 2) * 12 + w / 2));
    neff::Program p = test::compile_graph(g, CompileOptions{});
    CHECK(p.stream(neff::Engine::PE).empty());
    int loads = 0, stores = 0, copies = 0;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream) {
            bool dma = i.op == neff::Opcode::Dma;
            loads += dma && i.src.space == neff::MemSpace::HBM;
            stores += dma && i.dst.space == neff::MemSpace::HBM;
            copies += !dma;
        }
    CHECK(loads == 2);
    CHECK(stores == 2);
    CHECK(copies == 2);
}

TEST_CASE("GroupNorm as PyTorch exports it is rewritten as one, over the partitions, and matches") {
    // Reshape -> InstanceNormalization -> Reshape -> Mul -> Add, as torch.nn.GroupNorm(4, 8).
    const char *text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 8, 6, 10] x) => (float[1, 8, 6, 10] y, float[1, 8, 6, 10] z)
    <int64[3] grouped = {1, 4, -1}, int64[4] back = {1, 8, 6, 10}, float[4] ones = {1, 1, 1, 1},
     float[4] zeros = {0, 0, 0, 0}, float[8, 1, 1] gamma = {1, 2, 3, 4, -1, 0.5, 0.25, 2},
     float[8, 1, 1] beta = {0, 1, -1, 2, 0.5, 0, 3, -2}, float[8] s = {1, 2, 1, 2, 1, 2, 1, 2},
     float[8] b = {0, 0, 1, 1, 0, 0, 1, 1}> {
  r = Reshape(x, grouped)
  n = InstanceNormalization <epsilon = 1e-5> (r, ones, zeros)
  u = Reshape(n, back)
  m = Mul(u, gamma)
  y = Add(m, beta)
  z = InstanceNormalization <epsilon = 1e-5> (x, s, b)
}
)";
    Graph g = load_text(text);
    Graph rewritten = g;
    CHECK(lower_group_norms(rewritten, 128, 1024) == 2);
    for (const Node &n : rewritten.nodes)
        CHECK(n.op_type != "InstanceNormalization");
    HostTensor x(DType::Float32, {1, 8, 6, 10});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, std::sin(0.37 * double(i)) * 3.0 + double(i % 7));
    CHECK(test::worst_rel_l2(g, {{"x", x}}, {"y", "z"}, 1e-4, 1e-5) <= 1e-5);
}

TEST_CASE("GroupNorm over more channels than partitions: rows of each channel within the row "
          "limit, group sums of the row sums broadcast back; matches") {
    // torch.nn.GroupNorm(32, 256) as in SD UNet's down1, on 8 x 8 with a row limit of 32
    // elements (the reference evaluator is slow on long rows): 256 rows of 64 > 32, so two rows
    // per channel, 512 rows in 32 groups of 16.
    std::string ones, zeros, gamma, beta;
    for (int i = 0; i < 256; i++) {
        const char *sep = i ? ", " : "";
        gamma += sep + std::to_string(1.0 + 0.01 * i);
        beta += sep + std::to_string(0.5 - 0.003 * i);
        if (i < 32) {
            ones += std::string(sep) + "1";
            zeros += std::string(sep) + "0";
        }
    }
    std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 256, 8, 8] x) => (float[1, 256, 8, 8] y)
    <int64[3] grouped = {1, 32, -1}, int64[4] back = {1, 256, 8, 8}, float[32] ones = {)" +
                       ones + "}, float[32] zeros = {" + zeros + "}, float[256, 1, 1] gamma = {" +
                       gamma + "}, float[256, 1, 1] beta = {" + beta + R"(}> {
  r = Reshape(x, grouped)
  n = InstanceNormalization <epsilon = 1e-6> (r, ones, zeros)
  u = Reshape(n, back)
  m = Mul(u, gamma)
  y = Add(m, beta)
}
)";
    Graph g = load_text(text);
    Graph rewritten = g;
    CHECK(lower_group_norms(rewritten, 128, 32) == 1);
    for (const Node &n : rewritten.nodes) {
        CHECK(n.op_type != "InstanceNormalization");
        CHECK(n.op_type != "MatMul"); // no 512 x 512 mixing matrix
        if (n.op_type == "Sub")
            CHECK(rewritten.value(n.outputs[0]).shape == Shape{512, 32});
    }
    // The rewritten graph, compiled, against the reference of the original.
    std::map<std::string, HostTensor> x = test::random_inputs(g, 15);
    HostTensor want = alg::run_reference(g, x).at("y");
    CHECK(test::compare(test::compile_and_run(rewritten, x).outputs.at("y"), want, 1e-4, 1e-5)
              .rel_l2 <= 1e-5);
}

TEST_CASE("ConvTaps: one matmul per kernel tap over the channels, the input read once; matches") {
    // 2-D with pads, stride, dilation and a bias; Ci = 1 (no contraction loop); 1-D with a batch
    // of 2; depthwise (one ConvTaps per group).
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 6, 12, 10] x, float[5, 6, 3, 3] w, float[5] b, float[1, 1, 9, 7] x1,
   float[3, 1, 3, 3] w1, float[2, 4, 20] xs, float[3, 4, 3] ws, float[6, 1, 3, 3] wd) =>
    (float[1, 5, 6, 5] y, float[1, 3, 9, 7] z, float[2, 3, 18] s, float[1, 6, 12, 10] d) {
  y = Conv <pads = [1, 2, 0, 1], strides = [2, 2], dilations = [1, 2]> (x, w, b)
  z = Conv <pads = [1, 1, 1, 1]> (x1, w1)
  s = Conv (xs, ws)
  d = Conv <pads = [1, 1, 1, 1], group = 6> (x, wd)
}
)");
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 7), {"y", "z", "s", "d"}, 1e-4, 1e-5) <=
          1e-6);
    // y alone: 9 taps x 1 output tile (5 channels, 6 x 5 positions) = 9 matmuls, x loaded by
    // one DMA.
    Graph one = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 6, 12, 10] x, float[5, 6, 3, 3] w) => (float[1, 5, 6, 5] y) {
  y = Conv <pads = [1, 2, 0, 1], strides = [2, 2], dilations = [1, 2]> (x, w)
}
)");
    CompileOptions per_tap; // -O1: -O2 may pack kernel rows into the channels (tested below)
    per_tap.optlevel = 1;
    neff::Program p = test::compile_graph(one, per_tap);
    CHECK(test::matmuls_contracting(p, 6) == 9);
    CHECK(test::dmas_reading(p, "x") == 1);
}

namespace {

/** `passed` compiled at -O1 with node `n`'s group scheduled by the default schedule under an
 *  ImagePlan padding on chip or not, given as the schedule script that describes it. */
neff::Program with_image_plan(const Graph &passed, const Node &n, bool on_chip) {
    sched::Group grp = sched::build_node_group(passed, n);
    REQUIRE(sched::takes_image_plan(grp));
    sched::SchedulePlan plan;
    plan.image.pad_on_chip = on_chip;
    sched::apply_default_schedule(grp, target::target_by_name("trn1"), plan);
    sched::ScheduleScript script;
    script.blocks.push_back(sched::describe_schedule(grp));
    CompileOptions o;
    o.optlevel = 1;
    o.schedule = &script;
    return generate_program(passed, o);
}

/** Per DMA that reads HBM variable `name`: the runs of contiguous elements it writes in each
 *  partition. */
std::vector<int64_t> runs_per_partition(const neff::Program &p, const std::string &name) {
    std::vector<int64_t> runs;
    test::for_each_dma_reading(p, name, [&](const neff::Instr &i) {
        int64_t n = 1;
        for (size_t d = 0; d + 1 < i.dst.dims.size(); d++)
            n *= i.dst.dims[d].num;
        runs.push_back(i.dst.dims.back().step == 1 ? n : i.dst.free_count());
    });
    return runs;
}

/** Engine instructions copying SBUF into an SBUF tile with rows of `rows` x `columns` elements
 *  `pitch` apart (the padded tile's interior). */
int copies_into_rows(const neff::Program &p, int64_t pitch, int64_t rows, int64_t columns) {
    int n = 0;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            n += i.op != neff::Opcode::Dma && i.op != neff::Opcode::Matmul &&
                 i.src.space == neff::MemSpace::SBUF && i.dst.space == neff::MemSpace::SBUF &&
                 i.dst.dims.size() == 2 && i.dst.dims[0].step == pitch &&
                 i.dst.dims[0].num == rows && i.dst.dims[1].num == columns;
    return n;
}

} // namespace

TEST_CASE("ConvTaps padded on chip (ImagePlan): the image loaded in one run per partition, an "
          "engine copies it into the zeroed tile, a script states it; the default's values") {
    // 256 channels (two chunks) of 16 x 16: rows of 64 bytes, which the default DMAs one by one
    // into the padded tile's interior.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 256, 16, 16] x, float[64, 256, 3, 3] w, float[64] b) => (float[1, 64, 16, 16] y) {
  y = Conv <pads = [1, 1, 1, 1]> (x, w, b)
}
)");
    auto inputs = test::random_inputs(g, 5);
    auto want = alg::run_reference(g, inputs);
    Graph passed = g;
    apply_graph_passes(passed, CompileOptions{});
    const Node &conv = test::node_with_output(passed, "y");
    REQUIRE(conv.op_type == "ConvTaps");
    neff::Program plain = with_image_plan(passed, conv, false),
                  on_chip = with_image_plan(passed, conv, true);
    // Each load of x writes its partitions' elements as one run (on chip) or as 16 rows of 16
    // elements in rows of 18 (the default); on chip, one engine copy per chunk into the tile.
    CHECK(runs_per_partition(plain, "x") == std::vector<int64_t>{16, 16});
    CHECK(runs_per_partition(on_chip, "x") == std::vector<int64_t>{1, 1});
    CHECK(copies_into_rows(on_chip, 18, 16, 16) == 2);
    for (neff::Program *p : {&plain, &on_chip}) {
        test::E2EResult got = test::run_program(*p, passed, inputs);
        CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-5).rel_l2 <= 1e-6);
    }
}

TEST_CASE("PoolTaps padded on chip (ImagePlan): a max pooling (-inf border) and a depthwise "
          "convolution (zero border) load their image in one run per partition; the values") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 16, 16] x, float[64, 1, 3, 3] wd) => (float[1, 64, 8, 8] y, float[1, 64, 16, 16] z) {
  y = MaxPool <kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]> (x)
  z = Conv <pads = [1, 1, 1, 1], group = 64> (x, wd)
}
)");
    auto inputs = test::random_inputs(g, 9);
    auto want = alg::run_reference(g, inputs);
    Graph passed = g;
    apply_graph_passes(passed, CompileOptions{});
    // The max pooling's padded tile is 17 x 17 (what its eight strided windows read), the
    // depthwise convolution's 18 x 18.
    for (auto [out, pitch] : {std::pair<const char *, int64_t>{"y", 17}, {"z", 18}}) {
        CAPTURE(out);
        const Node &pool = test::node_with_output(passed, out);
        REQUIRE(pool.op_type == "PoolTaps");
        neff::Program plain = with_image_plan(passed, pool, false),
                      on_chip = with_image_plan(passed, pool, true);
        // The group of the other output loads x too, by its default schedule.
        std::vector<int64_t> plain_runs = runs_per_partition(plain, "x"),
                             on_chip_runs = runs_per_partition(on_chip, "x");
        std::sort(plain_runs.begin(), plain_runs.end());
        std::sort(on_chip_runs.begin(), on_chip_runs.end());
        CHECK(plain_runs == std::vector<int64_t>{16, 16});
        CHECK(on_chip_runs == std::vector<int64_t>{1, 16});
        CHECK(copies_into_rows(on_chip, pitch, 16, 16) == 1);
        for (neff::Program *p : {&plain, &on_chip}) {
            test::E2EResult got = test::run_program(*p, passed, inputs);
            for (const char *o : {"y", "z"})
                CHECK(test::compare(got.outputs.at(o), want.at(o), 1e-4, 1e-5).rel_l2 <= 1e-6);
        }
    }
}

TEST_CASE("kernel rows packed into the channels: a 3-channel 7 x 7 convolution contracts its "
          "kernel rows and channels per matmul, one per kernel column, and matches") {
    // ResNet-50's first convolution at 64 x 64 (stride 2, pads 3, a bias) with constant weights:
    // blocks of 3 channels padded to 8 (zeros), so that each kernel row's copy has DMA engines
    // of its own. A dilated 3 x 3 one over a batch of 2 with a runtime weight (permuted by a
    // Transpose): dense blocks of 4.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 64, 64] x, float[16, 3, 7, 7] w, float[16] b, float[2, 4, 20, 18] x1,
   float[8, 4, 3, 3] w1) => (float[1, 16, 32, 32] y, float[2, 8, 20, 18] z) {
  y = Conv <pads = [3, 3, 3, 3], strides = [2, 2]> (x, w, b)
  z = Conv <pads = [2, 2, 2, 2], dilations = [2, 2]> (x1, w1)
}
)");
    auto inputs = test::random_inputs(g, 11);
    auto want = alg::run_reference(g, inputs);
    make_constant(g, inputs, "w");
    Graph packed = g;
    ConvLimits always{128, 1 << 16, 1 << 16, 8, [](const RowPacking &) { return true; }};
    CHECK(lower_convs_to_matmuls(packed, always) == 2);
    std::vector<std::vector<int64_t>> packings;
    for (const Node &n : packed.nodes)
        if (n.op_type == "ConvTaps" && n.has_attr("packed_rows"))
            packings.push_back(n.attr_ints("packed_rows")); // (KH, stride, dilation, pad, block)
    CHECK(packings == std::vector<std::vector<int64_t>>{{7, 2, 1, 3, 8}, {3, 1, 2, 2, 4}});
    test::E2EResult got = test::compile_and_run(packed, inputs);
    for (const char *out : {"y", "z"})
        CHECK(test::compare(got.outputs.at(out), want.at(out), 1e-4, 1e-5).rel_l2 <= 1e-6);
    // y's 32 x 32 outputs are two tiles of 16 rows: 7 matmuls each contracting 7 blocks of 8
    // partitions, where the per-tap form takes 49 contracting 3; with a runtime weight, 7
    // contracting 21.
    auto y_only = [&](bool constant_weights) {
        Graph y = load_text(kResNetStem64);
        auto y_inputs = test::random_inputs(y, 12);
        if (constant_weights)
            make_constant(y, y_inputs, "w");
        CHECK(lower_convs_to_matmuls(y, always) == 1);
        return test::compile_graph(y);
    };
    neff::Program aligned = y_only(true), dense = y_only(false);
    CHECK(test::matmuls_contracting(aligned, 56) == 14);
    CHECK(test::matmuls_contracting(dense, 21) == 14);
    CHECK(test::matmuls_contracting(dense, 3) == 0);
}

TEST_CASE("kernel rows are packed at -O2 when the cost formulas say the matmuls saved outweigh "
          "the bytes staged; never at -O1") {
    const target::TargetInfo &trn1 = target::target_by_name("trn1");
    auto packs = [&](std::optional<DType> operand, const Shape &x, int64_t co, int64_t k,
                     int64_t stride, bool aligned) {
        ConvGeometry geo;
        geo.kernel = {k, k};
        geo.stride = {stride, stride};
        geo.dilation = {1, 1};
        geo.pad_begin = geo.pad_end = {k / 2, k / 2};
        for (int a = 0; a < 2; a++)
            geo.out.push_back((x[2 + a] + 2 * (k / 2) - k) / stride + 1);
        ConvLimits limits = sched::conv_limits(trn1, operand);
        int64_t block = aligned ? packed_block(x[1], k, limits) : x[1];
        return packs_kernel_rows(x, geo, co, block, limits);
    };
    // ResNet-50's first convolution: 49 matmuls of K = 3 per tile outweigh everything.
    CHECK(packs(DType::Float32, {1, 3, 224, 224}, 64, 7, 2, true));
    CHECK(packs(DType::BFloat16, {1, 3, 224, 224}, 64, 7, 2, true));
    CHECK(packs(DType::Float32, {1, 3, 224, 224}, 64, 7, 2, false));
    // MobileNetV2's: with dense blocks (a runtime weight), 9 bf16 matmuls per tile of 32 output
    // channels save less than the three kernel rows' copies cost, all on the first DMA engine
    // (measured with such blocks: 2,027.7 unpacked against 2,068.4 us); with blocks on engines
    // of their own, packing pays (1,976.3 us).
    CHECK_FALSE(packs(DType::BFloat16, {1, 3, 224, 224}, 32, 3, 2, false));
    CHECK(packs(DType::BFloat16, {1, 3, 224, 224}, 32, 3, 2, true));
    // Packed channels past the partitions (32 x 7), and -O1 (no operand type): never.
    CHECK_FALSE(packs(DType::Float32, {1, 32, 56, 56}, 64, 7, 1, true));
    CHECK_FALSE(packs(std::nullopt, {1, 3, 224, 224}, 64, 7, 2, true));
    // Through the driver: the same convolution at 64 x 64, per tap at -O1, packed at -O2.
    Graph g = load_text(kResNetStem64);
    auto inputs = test::random_inputs(g, 13);
    make_constant(g, inputs, "w");
    CompileOptions o1, o2;
    o1.optlevel = 1;
    o2.optlevel = 2;
    CHECK(test::matmuls_contracting(test::compile_graph(g, o1), 3) == 2 * 49);
    CHECK(test::matmuls_contracting(test::compile_graph(g, o2), 56) == 2 * 7);
}

TEST_CASE("a patchify convolution packs its kernel rows at -O2 where its per-tap weights do not "
          "fit, instead of an im2col copy, and matches") {
    // ViT's patch embedding at 64 x 64: 16 x 16 patches, stride 16, 3 channels, 128 outputs. Per
    // tap, 256 weight columns of 128 outputs do not fit the weights' budget, so the convolution
    // used to be a patches copy (64-byte runs) and a matmul; packed, 16 matmuls contract the
    // kernel rows and channels, one per kernel column.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 64, 64] x, float[128, 3, 16, 16] w, float[128] b) => (float[1, 128, 4, 4] y) {
  y = Conv <kernel_shape = [16, 16], strides = [16, 16]> (x, w, b)
}
)");
    auto inputs = test::random_inputs(g, 17);
    auto want = alg::run_reference(g, inputs);
    make_constant(g, inputs, "w");
    CompileOptions o2;
    o2.optlevel = 2;
    Graph passed = g;
    apply_graph_passes(passed, o2);
    int packed = 0, copies = 0;
    for (const Node &n : passed.nodes) {
        packed += n.op_type == "ConvTaps" && n.has_attr("packed_rows");
        copies += n.op_type == "Im2Col" || n.op_type == "Transpose";
    }
    CHECK(packed == 1);
    CHECK(copies == 0);
    test::E2EResult got = test::compile_and_run(g, inputs, o2);
    CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-4, 1e-5).rel_l2 <= 1e-6);
}

TEST_CASE("a convolution's ReLU and residual Add join its group when its channels fill half the "
          "partitions, and match") {
    // 64 output channels: c never reaches HBM (the Add with the residual r and the Relu run on
    // the conv's output tiles, channels on partitions). 16 channels: the Relu is a group of its
    // own over [N*C*H, W] rows and reads c from HBM.
    auto model = [](int co) {
        std::string c = std::to_string(co);
        return R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 8, 12, 12] x, float[)" +
               c + R"(, 8, 3, 3] w, float[1, )" + c + R"(, 12, 12] r) => (float[1, )" + c +
               R"(, 12, 12] y) {
  c = Conv <pads = [1, 1, 1, 1]> (x, w)
  s = Add(c, r)
  y = Relu(s)
}
)";
    };
    for (int co : {64, 16}) {
        CAPTURE(co);
        Graph g = load_text(model(co));
        CHECK(test::worst_rel_l2(g, test::random_inputs(g, 3), {"y"}, 1e-4, 1e-5) <= 1e-6);
        CompileOptions o1;
        o1.optlevel = 1; // no tensor kept in SBUF between groups: the grouping alone
        neff::Program p = test::compile_graph(g, o1);
        // (w, a runtime input, is permuted into a scratch tensor of its own: not counted.)
        bool stored = false;
        for (const neff::Variable &v : p.vars)
            stored = stored || (v.kind == neff::VarKind::Scratch &&
                                v.num_elements() == co * 12 * 12 && test::dmas_reading(p, v.name));
        CHECK(stored == (co == 16));
    }
}

TEST_CASE("a convolution's bias and ReLU are one instruction out of PSUM per tile, and match") {
    // The conv's output (acc + bias) is computed inline into the Relu (schedules/DefaultSchedule):
    // ACT's relu with the bias, or DVE's (acc add bias) max 0, where a copy with the bias and a
    // max were two instructions through a tile of their own.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 8, 12, 12] x, float[64, 8, 3, 3] w, float[64] b) => (float[1, 64, 12, 12] y) {
  c = Conv <pads = [1, 1, 1, 1]> (x, w, b)
  y = Relu(c)
}
)");
    neff::Program p = test::compile_graph(g);
    int from_psum = 0, relus = 0, matmul_tiles = 0;
    std::set<int64_t> accumulators;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream) {
            if (i.op == neff::Opcode::Matmul)
                accumulators.insert(i.dst.offset);
            bool reads_psum = i.op != neff::Opcode::Matmul && i.op != neff::Opcode::Dma &&
                              i.src.space == neff::MemSpace::PSUM;
            from_psum += reads_psum;
            relus += reads_psum && ((i.op == neff::Opcode::Activation &&
                                     i.func == neff::ActFunc::Relu && i.s1.is_ap) ||
                                    (i.op == neff::Opcode::TensorScalar &&
                                     i.alu0 == neff::AluOp::Add && i.alu1 == neff::AluOp::Max));
        }
    matmul_tiles = static_cast<int>(accumulators.size());
    CHECK(matmul_tiles >= 1);
    CHECK(from_psum == relus);
    CHECK(relus >= matmul_tiles);
    int maxes = 0; // a ReLU of its own: a max with 0 after the copy out of PSUM
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            maxes += i.op == neff::Opcode::TensorScalar && i.alu0 == neff::AluOp::Max;
    CHECK(maxes == 0);
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 3), {"y"}, 1e-4, 1e-5) <= 1e-6);
}

TEST_CASE("ConvTaps past the chip: 256 input channels in two chunks accumulated in PSUM; an "
          "image over the budget staged in bands of output rows with their halo; both match") {
    Graph wide = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 256, 8, 8] x, float[64, 256, 3, 3] w, float[64] b) => (float[1, 64, 8, 8] y) {
  y = Conv <pads = [1, 1, 1, 1]> (x, w, b)
}
)");
    CHECK(test::worst_rel_l2(wide, test::random_inputs(wide, 11), {"y"}, 1e-4, 1e-5) <= 1e-6);
    neff::Program p = test::compile_graph(wide);
    CHECK(test::matmuls_contracting(p, 128) == 9 * 2); // taps x channel chunks, one output tile
    CHECK(test::dmas_reading(p, "x") == 2);
    CHECK(test::bytes_read_from(p, "x") == 256 * 8 * 8 * 4); // once, not once per tap

    // A ResNet-style stem: 118 x 118 padded rows of 4 bytes (55.7 KB per channel) do not fit
    // the budget of a staged image (graph/ConvIm2Col's ConvLimits), so bands of output rows
    // stage the rows they read; adjacent bands share the kernel's halo rows.
    Graph stem = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 112, 112] x, float[8, 3, 7, 7] w) => (float[1, 8, 56, 56] y) {
  y = Conv <pads = [3, 3, 3, 3], strides = [2, 2]> (x, w)
}
)");
    CHECK(test::worst_rel_l2(stem, test::random_inputs(stem, 12), {"y"}, 1e-4, 1e-5) <= 1e-6);
    CompileOptions per_tap; // -O1: -O2 packs this stem's kernel rows (tested below)
    per_tap.optlevel = 1;
    neff::Program banded = test::compile_graph(stem, per_tap);
    int64_t image = 3 * 112 * 112 * 4, read = test::bytes_read_from(banded, "x");
    CHECK(test::dmas_reading(banded, "x") > 1);
    CHECK(read > image);         // the halo rows, twice
    CHECK(read < image * 3 / 2); // not im2col's 49 copies
}

TEST_CASE("ConvTaps whose weights exceed the resident budget stages them per tile of output "
          "channels; a patchify convolution (16 x 16 taps, 3 channels) is a matmul over its "
          "patches") {
    // 128 channels x 49 taps x 1024 output channels x 4 bytes: 200 KB per partition, more than
    // SBUF holds; one tile of 128 output channels is 25 KB.
    Graph heavy = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 128, 4, 4] x, float[1024, 128, 7, 7] w) => (float[1, 1024, 4, 4] y) {
  y = Conv <pads = [3, 3, 3, 3]> (x, w)
}
)");
    CHECK(test::worst_rel_l2(heavy, test::random_inputs(heavy, 13), {"y"}, 1e-4, 1e-5) <= 1e-6);
    neff::Program p = test::compile_graph(heavy);
    CHECK(test::matmuls_contracting(p, 128) == 49 * 8); // taps x output tiles: still ConvTaps
    CHECK(test::bytes_read_from(p, "x") == 128 * 16 * 4);

    // ViT's patch embedding: ConvTaps would stage 256 taps x 128 output channels per partition
    // (131 KB) and contract 3 channels per matmul; the patches [4, 768] contract 768 = 3 x 256
    // at once. The windows tile the image, so the patches are a rearrangement of it that moves
    // rows of 16 pixels, not im2col's copy of one pixel per window and tap.
    Graph patchify = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 32, 32] x, float[192, 3, 16, 16] w) => (float[1, 192, 2, 2] y) {
  y = Conv <strides = [16, 16]> (x, w)
}
)");
    CHECK(test::worst_rel_l2(patchify, test::random_inputs(patchify, 14), {"y"}, 1e-4, 1e-5) <=
          1e-6);
    Graph lowered = patchify;
    apply_graph_passes(lowered, {});
    int im2col = 0, taps = 0;
    for (const Node &n : lowered.nodes) {
        im2col += n.op_type == "Im2Col";
        taps += n.op_type == "ConvTaps";
    }
    CHECK(im2col == 0);
    CHECK(taps == 0);
    neff::Program pp = test::compile_graph(patchify);
    CHECK(test::matmuls_contracting(pp, 128) == 2 * 6); // 2 tiles of 96 channels x 6 of 128
    CHECK(test::bytes_read_from(pp, "x") == 3 * 32 * 32 * 4);
    test::for_each_dma_reading(pp, "x", [](const neff::Instr &i) {
        REQUIRE(!i.src.dims.empty());
        CHECK(i.src.dims.back().step == 4);
        CHECK(i.src.dims.back().num == 16);
    });
}

TEST_CASE("ViT's patch embedding (patchify, flatten, transpose to channels last) is computed "
          "channels last, with no Transpose left; matches") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 32, 32] x, float[192, 3, 16, 16] w, float[192] b) => (float[1, 4, 192] y)
    <int64[3] s = {1, 192, 4}> {
  c = Conv <strides = [16, 16]> (x, w, b)
  f = Reshape(c, s)
  y = Transpose <perm = [0, 2, 1]> (f)
}
)");
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 15), {"y"}, 1e-4, 1e-5) <= 1e-6);
    Graph lowered = g;
    apply_graph_passes(lowered, {});
    int transposes = 0;
    for (const Node &n : lowered.nodes)
        transposes += n.op_type == "Transpose";
    CHECK(transposes == 1); // the patches' rearrangement of x only
    neff::Program p = test::compile_graph(g);
    int dmas = 0, element_rows = 0; // DMAs whose HBM side moves single elements
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            if (i.op == neff::Opcode::Dma)
                for (const neff::AccessPattern *a : {&i.src, &i.dst})
                    if (a->space == neff::MemSpace::HBM) {
                        dmas++;
                        element_rows += a->dims.back().step != 4 || a->dims.back().num == 1;
                    }
    CHECK(dmas > 0);
    CHECK(element_rows == 0);
}

TEST_CASE("a squeeze-and-excitation gate (x [1, C, H, W] times a per-channel [1, C, 1, 1]) "
          "moves tiles of 128 channels, not one per channel; matches") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1152, 7, 7] x, float[1, 1152, 1, 1] s) => (float[1, 1152, 7, 7] y) {
  gate = Sigmoid(s)
  y = Mul(x, gate)
}
)");
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 16), {"y"}, 1e-5, 1e-6) <= 1e-6);
    neff::Program p = test::compile_graph(g);
    CHECK(test::bytes_read_from(p, "x") == 1152 * 49 * 4);
    CHECK(test::dmas_reading(p, "x") == 1152 / 128); // was one per channel
}

TEST_CASE("PoolTaps past the budget: ResNet's 112 x 112 max pool in bands of output rows with "
          "their halo, over 128 channels; matches exactly") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 160, 112, 112] x) => (float[1, 160, 56, 56] y) {
  y = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (x)
}
)");
    HostTensor x(DType::Float32, {1, 160, 112, 112});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, std::sin(0.1 * double(i)) - 0.5);
    auto want = alg::run_reference(g, {{"x", x}});
    test::E2EResult got = test::compile_and_run(g, {{"x", x}});
    CHECK(test::compare(got.outputs.at("y"), want.at("y"), 0, 0).rel_l2 == 0);
    neff::Program p = test::compile_graph(g);
    int64_t image = 160 * 112 * 112 * 4, read = test::bytes_read_from(p, "x");
    CHECK(read > image);
    CHECK(read < image * 5 / 4);
}

TEST_CASE("PoolTaps past the budget of one output row: a 1-D pool over a long row in bands of "
          "output columns, a 2-D MaxPool whose one window exceeds it as a pass per axis; both "
          "match exactly") {
    // One row of 12,000 fp32 (48 KB) exceeds the staged-image budget; one window (58) does not.
    Graph long_row = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 12000] x) => (float[1, 2, 5977] y) {
  y = MaxPool <kernel_shape = [20], strides = [2], dilations = [3], pads = [5, 5]> (x)
}
)");
    CHECK(test::worst_rel_l2(long_row, test::random_inputs(long_row, 17), {"y"}, 0, 0) == 0);
    neff::Program p = test::compile_graph(long_row);
    CHECK(test::dmas_reading(p, "x") > 1);                    // a band at a time
    CHECK(test::bytes_read_from(p, "x") < 2 * 12000 * 4 * 2); // the halos, not the row per band
    // 12 x 16 taps at dilation 10 span 111 x 151 pixels (67 KB); a line of them fits.
    Graph wide = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 120, 160] x) => (float[1, 1, 2, 2] y) {
  y = MaxPool <kernel_shape = [12, 16], strides = [10, 10], dilations = [10, 10],
               pads = [5, 5, 5, 5]> (x)
}
)");
    CHECK(test::worst_rel_l2(wide, test::random_inputs(wide, 18), {"y"}, 0, 0) == 0);
    Graph lowered = wide;
    apply_graph_passes(lowered, {});
    int pools = 0;
    for (const Node &n : lowered.nodes)
        pools += n.op_type == "PoolTaps";
    CHECK(pools == 2);
    // An average over such a window is not split (NHC_EALG001, naming the sizes).
    Graph average = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 120, 160] x) => (float[1, 1, 12, 16] y) {
  y = AveragePool <kernel_shape = [100, 100], strides = [10, 10], pads = [45, 45, 45, 45]> (x)
}
)");
    std::string error = test::compile_error(average);
    CHECK(error.rfind("NHC_EALG001", 0) == 0);
    CHECK(error.find("40000 bytes of the padded image per channel") != std::string::npos);
}

TEST_CASE("Depthwise convolution as PoolTaps: a weight per channel and tap on the vector engines, "
          "the input read once, over 128 channels; matches") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 144, 28, 28] x, float[144, 1, 3, 3] w, float[144] b) => (float[1, 144, 14, 14] y) {
  y = Conv <pads = [1, 1, 1, 1], strides = [2, 2], group = 144> (x, w, b)
}
)");
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 13), {"y"}, 1e-5, 1e-6) <= 1e-6);
    neff::Program p = test::compile_graph(g);
    CHECK(p.stream(neff::Engine::PE).empty()); // no per-group matmuls
    CHECK(test::bytes_read_from(p, "x") == 144 * 28 * 28 * 4);
}

TEST_CASE("PoolTaps: one reduction over the kernel taps of every window, the input read once; "
          "3-D refused") {
    // Max: exact. Average: the taps summed kernel row by kernel row (the reference sums column by
    // column), then times the reciprocal count: a rounding apart.
    for (std::string pool : {"MaxPool", "AveragePool"}) {
        CAPTURE(pool);
        Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 8, 16, 16] x) => (float[1, 8, 8, 8] y) {
  y = )" + pool + R"( <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (x)
}
)");
        neff::Program p = test::compile_graph(g);
        int per_tap = 0, reductions = 0;
        for (const auto &stream : p.streams)
            for (const neff::Instr &i : stream) {
                per_tap += i.op == neff::Opcode::TensorTensor &&
                           (i.alu0 == neff::AluOp::Max || i.alu0 == neff::AluOp::Add);
                // The output rows and columns kept, the window's rows and columns reduced.
                reductions += i.op == neff::Opcode::TensorReduce && i.axes == 2 &&
                              i.src.dims.size() == 4 && i.dst.dims.size() == 2;
            }
        int x_loads = test::dmas_reading(p, "x");
        CHECK(per_tap == 0);
        CHECK(reductions == 1);
        CHECK(x_loads == 1);
        HostTensor x(DType::Float32, {1, 8, 16, 16});
        for (int64_t i = 0; i < x.numel(); i++)
            x.set_f64(i, std::sin(0.1 * double(i)) - 0.5);
        auto want = alg::run_reference(g, {{"x", x}});
        test::E2EResult got = test::compile_and_run(g, {{"x", x}});
        CHECK(test::compare(got.outputs.at("y"), want.at("y"), 0, 0).rel_l2 <=
              (pool == "MaxPool" ? 0 : 1e-6));
    }

    Graph three_d = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 4, 4, 4] x) => (float[1, 2, 3, 3, 3] y) {
  y = AveragePool <kernel_shape = [2, 2, 2]> (x)
}
)");
    std::string three_d_error = test::compile_error(three_d);
    CHECK(three_d_error.rfind("NHC_EALG001", 0) == 0);
    CHECK(three_d_error.find("2-D pooling") != std::string::npos);
}

TEST_CASE("ConvTranspose with constant weights (flipped at compile time) matches ONNX's outputs") {
    fs::path node = "/usr/share/libonnx-testdata/data/node";
    if (!fs::is_directory(node)) {
        MESSAGE("libonnx-testdata not installed: nothing to check");
        return;
    }
    int checked = 0;
    for (const char *name : {"test_convtranspose", "test_convtranspose_1d",
                             "test_convtranspose_pads", "test_convtranspose_output_shape",
                             "test_convtranspose_dilations", "test_convtranspose_autopad_same"}) {
        INFO(name);
        fs::path c = node / name;
        test::TempDir tmp;
        Graph g = load_with_constant_operands(c, tmp);
        REQUIRE(g.value(g.nodes[0].inputs[1]).is_constant());
        HostTensor x = test::read_pb(c / "test_data_set_0" / "input_0.pb");
        HostTensor want = test::read_pb(c / "test_data_set_0" / "output_0.pb");
        test::E2EResult got = test::compile_and_run(g, {{g.inputs[0], x}});
        CHECK(test::compare(got.outputs.at(g.outputs[0]), want, 1e-5, 1e-5).rel_l2 <= 1e-6);
        checked++;
    }
    CHECK(checked == 6);
}

TEST_CASE("Expand to a constant shape broadcasts like numpy") {
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3, 1, 1] x) => (float[2, 3, 4, 5] y) <int64[4] s = {2, 1, 4, 5}> {
  y = Expand(x, s)
}
)");
    HostTensor x(DType::Float32, {3, 1, 1});
    for (int64_t i = 0; i < 3; i++)
        x.set_f64(i, 1.5 * double(i) - 1.0);
    test::E2EResult got = test::compile_and_run(g, {{"x", x}});
    const HostTensor &y = got.outputs.at("y");
    for (int64_t i = 0; i < y.numel(); i++)
        REQUIRE(y.get_f64(i) == x.get_f64((i / 20) % 3));
}

TEST_CASE("A stride-2 ConvTranspose whose spread image exceeds the budget is staged per band of "
          "output rows; matches") {
    // 8 -> 4 channels, 4 x 4 kernel, stride 2, pads 1 on a 48 x 48 image: the spread, padded
    // image (99 x 99 fp32, 39 KB per channel) exceeds the staged-image budget, so bands of
    // output rows each stage the spread rows they read (a strided copy into a zeroed tile).
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 8, 48, 48] x, float[8, 4, 4, 4] w) => (float[1, 4, 96, 96] y) {
  y = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w)
}
)");
    std::map<std::string, HostTensor> in = test::random_inputs(g, 12);
    neff::Program p = test::compile_graph(g);
    CHECK(test::dmas_reading(p, "x") > 1);
    CHECK(test::bytes_read_from(p, "x") < 2 * 8 * 48 * 48 * 4); // each row in at most two bands
    // y[co, oy, ox] = sum over ci, iy, ix, ky, kx with oy = 2 iy - 1 + ky, ox = 2 ix - 1 + kx.
    std::vector<double> want(4 * 96 * 96, 0.0);
    const HostTensor &x = in["x"], &w = in["w"];
    for (int ci = 0; ci < 8; ci++)
        for (int iy = 0; iy < 48; iy++)
            for (int ix = 0; ix < 48; ix++)
                for (int co = 0; co < 4; co++)
                    for (int ky = 0; ky < 4; ky++)
                        for (int kx = 0; kx < 4; kx++) {
                            int oy = 2 * iy - 1 + ky, ox = 2 * ix - 1 + kx;
                            if (oy < 0 || oy >= 96 || ox < 0 || ox >= 96)
                                continue;
                            want[size_t((co * 96 + oy) * 96 + ox)] +=
                                x.get_f64((ci * 48 + iy) * 48 + ix) *
                                w.get_f64(((ci * 4 + co) * 4 + ky) * 4 + kx);
                        }
    HostTensor expected(DType::Float32, {1, 4, 96, 96});
    for (size_t i = 0; i < want.size(); i++)
        expected.set_f64(static_cast<int64_t>(i), want[i]);
    test::E2EResult got = test::compile_and_run(g, in);
    CHECK(test::compare(got.outputs.at("y"), expected, 1e-5, 1e-5).rel_l2 <= 1e-6);
}
