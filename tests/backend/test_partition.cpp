// Partitioned NEFFs (host fallback, runtime/Partition.h) made by hand: a device segment and a
// host segment run in order with values passed by name; a NEFF whose manifest or segments do not
// hold together is NHC_ENEFF015 at load; a failing host node is NHC_ERT024 at execute.

#include "BackendTest.h"

#include "../unit/TestModels.h"
#include "neff/DefJson.h"
#include "runtime/Partition.h"

#include <cstring>

using namespace nhc;
using namespace nhc::test;

namespace {

// The two largest of each row of y, with their indices.
const char *kTopTwo = R"(
<ir_version: 8, opset_import: ["" : 17]>
host (float[128, 16] y) => (float[128, 2] v, int64[128, 2] i) {
  k = Constant <value = int64[1] {2}> ()
  v, i = TopK <axis = 1> (y, k)
}
)";

std::vector<uint8_t> bytes_of(const std::string &s) {
    return {s.begin(), s.end()};
}

std::vector<uint8_t> onnx_bytes(const char *text) {
    return bytes_of(parse_model(text).SerializeAsString());
}

/** A partitioned NEFF of the add_one device segment then `host` (ONNX bytes), with `manifest`. */
std::string write_partitioned(const TempDir &dir, const std::string &manifest,
                              const std::vector<uint8_t> &host) {
    neff::Program shell;
    shell.name = "two_segments";
    shell.target = "trn1";
    neff::ArchiveMembers m;
    m["info.json"] = bytes_of(neff::make_info_json(shell));
    m[neff::kPartitionMember] = bytes_of(manifest);
    m["sg00.neff"] = neff::write_neff(neff::parse_program(kAddOne));
    m["sg01.onnx"] = host;
    std::string path = dir.file("p.neff");
    neff::write_partitioned_neff_file(path, shell.name, m);
    return path;
}

const char *kManifest = R"({"inputs": ["x"], "outputs": ["v", "i"], "segments": [
  {"kind": "device", "file": "sg00.neff", "inputs": ["x"], "outputs": ["y"]},
  {"kind": "host", "file": "sg01.onnx", "inputs": ["y"], "outputs": ["v", "i"]}]})";

rt::Tensor input_x() {
    rt::Tensor x{neff::DType::F32, {128, 16}, std::vector<uint8_t>(128 * 16 * 4)};
    for (int r = 0; r < 128; r++)
        for (int c = 0; c < 16; c++) {
            float v = float((c * 7 + r) % 16); // a permutation of 0..15 per row
            std::memcpy(x.data.data() + (r * 16 + c) * 4, &v, 4);
        }
    return x;
}

} // namespace

TEST_CASE("a partitioned NEFF runs its device and host segments in order") {
    TempDir dir;
    auto m = rt::Model::load_file(write_partitioned(dir, kManifest, onnx_bytes(kTopTwo)));
    REQUIRE(m->partition() != nullptr);
    REQUIRE(m->tensors().size() == 3);
    CHECK(m->tensor_info("x").is_input);
    CHECK(m->tensor_info("i").dtype == neff::DType::I32); // int64 carried as int32
    rt::ExecResult r = m->execute({{"x", input_x()}});
    CHECK(r.summary.host_nodes == 2); // the Constant and the TopK
    CHECK(r.summary.total_ns > 0);    // the device segment's simulated time
    const rt::Tensor &v = r.outputs.at("v"), &i = r.outputs.at("i");
    REQUIRE(v.shape == std::vector<int64_t>{128, 2});
    for (int row = 0; row < 128; row++) {
        float v0, v1;
        int32_t i0;
        std::memcpy(&v0, v.data.data() + row * 8, 4);
        std::memcpy(&v1, v.data.data() + row * 8 + 4, 4);
        std::memcpy(&i0, i.data.data() + row * 8, 4);
        CHECK(v0 == 16.0f); // 15 + 1 on the device
        CHECK(v1 == 15.0f);
        CHECK((i0 * 7 + row) % 16 == 15);
    }
    // Timing only: the host segment is skipped, the device one timed.
    rt::ExecOptions timing;
    timing.timing_only = true;
    CHECK(m->execute({}, timing).outputs.empty());
}

TEST_CASE("a partitioned NEFF that does not hold together is NHC_ENEFF015") {
    TempDir dir;
    auto load = [&](const std::string &manifest, const std::vector<uint8_t> &host) {
        return rt::Model::load_file(write_partitioned(dir, manifest, host));
    };
    std::string missing = kManifest;
    missing.replace(missing.find("sg01.onnx"), 9, "sg07.onnx");
    CHECK_CODE(load(missing, onnx_bytes(kTopTwo)), "NHC_ENEFF015");
    CHECK_THROWS_WITH_AS(load(missing, onnx_bytes(kTopTwo)),
                         doctest::Contains("no segment file 'sg07.onnx'"), UserError);
    CHECK_CODE(load(kManifest, bytes_of("not a model")), "NHC_ENEFF015");
    const char *no_evaluator = R"(
<ir_version: 8, opset_import: ["" : 17]>
host (float[128, 16] y) => (float[128, 16] v, float[128, 16] i) {
  v = Bernoulli(y)
  i = Identity(y)
}
)";
    CHECK_CODE(load(kManifest, onnx_bytes(no_evaluator)), "NHC_ENEFF015");
    CHECK_THROWS_WITH_AS(load(kManifest, onnx_bytes(no_evaluator)),
                         doctest::Contains("node Bernoulli"), UserError);
    // The host segment reads y as float16; the device writes float32.
    const char *other_type = R"(
<ir_version: 8, opset_import: ["" : 17]>
host (float16[128, 16] y) => (float16[128, 2] v, int64[128, 2] i) {
  k = Constant <value = int64[1] {2}> ()
  v, i = TopK <axis = 1> (y, k)
}
)";
    CHECK_CODE(load(kManifest, onnx_bytes(other_type)), "NHC_ENEFF015");
    CHECK_THROWS_WITH_AS(load(kManifest, onnx_bytes(other_type)),
                         doctest::Contains("is written as f32"), UserError);
    const char *no_writer = R"({"inputs": ["x"], "outputs": ["w"], "segments": [
  {"kind": "device", "file": "sg00.neff", "inputs": ["x"], "outputs": ["y"]},
  {"kind": "host", "file": "sg01.onnx", "inputs": ["y"], "outputs": ["v", "i"]}]})";
    CHECK_THROWS_WITH_AS(load(no_writer, onnx_bytes(kTopTwo)),
                         doctest::Contains("model output 'w' is written by no segment"), UserError);
    // Not a manifest at all.
    CHECK_CODE(load("{\"inputs\": 3}", onnx_bytes(kTopTwo)), "NHC_ENEFF006");
}

TEST_CASE("a host node that fails at run time is NHC_ERT024, naming it") {
    TempDir dir;
    // K larger than the axis.
    std::string text = kTopTwo;
    text.replace(text.find("{2}"), 3, "{20}");
    auto m = rt::Model::load_file(write_partitioned(dir, kManifest, onnx_bytes(text.c_str())));
    CHECK_CODE(m->execute({{"x", input_x()}}), "NHC_ERT024");
    CHECK_THROWS_WITH_AS(m->execute({{"x", input_x()}}), doctest::Contains("TopK"), UserError);
}
