// Weights left where the model file holds them (frontend/WeightsInPlace, frontend/LoadModel):
// the wire-format walk, and the constants the front end makes of them.

#include "TestModels.h"
#include "frontend/Frontend.h"
#include "frontend/WeightsInPlace.h"
#include "support/Error.h"

#include <doctest/doctest.h>
#include <fstream>

using namespace nhc;
using nhc::test::TempDir;

namespace {

constexpr size_t kBig = 64 << 10; // LoadModel's threshold: a weight of this size stays in place

/** `Y = MatMul(X, W) + B` with W float[rows, 64] (rows * 256 bytes) and B float[64] of values
 *  the test can check; `opset` as declared. */
onnx::ModelProto linear_model(int64_t rows, int opset = 17) {
    onnx::ModelProto m = test::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, )" + std::to_string(rows) + R"(] X) => (float[1, 64] Y) {
  Z = MatMul(X, W)
  Y = Add(Z, B)
}
)");
    m.mutable_opset_import(0)->set_version(opset);
    auto add = [&](const char *name, std::vector<int64_t> dims, float scale) {
        onnx::TensorProto *t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        int64_t n = 1;
        for (int64_t d : dims) {
            t->add_dims(d);
            n *= d;
        }
        std::vector<float> values(static_cast<size_t>(n), 0.0f);
        for (int64_t i = 0; i < n; i++)
            values[size_t(i)] = scale * float(i % 1000);
        t->set_raw_data(std::string(reinterpret_cast<const char *>(values.data()), 4 * size_t(n)));
    };
    add("W", {rows, 64}, 0.5f);
    add("B", {64}, -1.0f);
    return m;
}

/** Appends length-delimited field `number` holding `payload` (protobuf's encoding). */
void append_field(std::string &out, uint64_t number, const std::string &payload) {
    for (uint64_t v : {number << 3 | 2, uint64_t(payload.size())}) {
        for (; v >= 0x80; v >>= 7)
            out += char(uint8_t(v) | 0x80);
        out += char(v);
    }
    out += payload;
}

ByteView view_of(const std::string &s) {
    return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

} // namespace

TEST_CASE("the raw data of large initializers is found in place and left out of the parse") {
    onnx::ModelProto m = linear_model(256); // W: 64 KiB, B: 256 bytes
    m.set_doc_string("fields before and after the graph are kept");
    std::string bytes = m.SerializeAsString();
    std::optional<WeightsInPlace> w = find_weights_in_place(view_of(bytes), kBig);
    REQUIRE(w);
    REQUIRE(w->weights.size() == 1);
    CHECK(w->weights[0].initializer == 0);
    CHECK(w->weights[0].size == kBig);
    CHECK(bytes.compare(w->weights[0].offset, kBig, m.graph().initializer(0).raw_data()) == 0);
    onnx::ModelProto parsed;
    REQUIRE(parsed.ParseFromString(w->stripped));
    CHECK(!parsed.graph().initializer(0).has_raw_data());
    // Every other field as it was.
    parsed.mutable_graph()->mutable_initializer(0)->set_raw_data(
        m.graph().initializer(0).raw_data());
    CHECK(parsed.SerializeAsString() == bytes);
    // Nothing that large: nothing to leave out.
    CHECK(!find_weights_in_place(view_of(bytes), kBig + 1));
}

TEST_CASE("bytes that are not plainly protobuf, or raw data given twice, are left to the parser") {
    onnx::ModelProto m = linear_model(256);
    std::string bytes = m.SerializeAsString();
    CHECK(!find_weights_in_place(view_of(bytes.substr(0, bytes.size() / 2)), kBig));
    CHECK(!find_weights_in_place(view_of(std::string(100, '\xff')), kBig));
    CHECK(!find_weights_in_place(ByteView(), kBig));
    // A second raw_data field after the first (protobuf keeps the last): not taken apart.
    const onnx::TensorProto &w = m.graph().initializer(0);
    std::string tensor = w.SerializeAsString();
    append_field(tensor, 9, w.raw_data()); // TensorProto.raw_data
    onnx::GraphProto graph = m.graph();
    graph.clear_initializer();
    std::string graph_bytes = graph.SerializeAsString();
    append_field(graph_bytes, 5, tensor); // GraphProto.initializer
    onnx::ModelProto top = m;
    top.clear_graph();
    std::string bytes2 = top.SerializeAsString();
    append_field(bytes2, 7, graph_bytes); // ModelProto.graph
    onnx::ModelProto reparsed;
    REQUIRE(reparsed.ParseFromString(bytes2)); // well-formed, W's data given twice
    CHECK(reparsed.graph().initializer(0).raw_data() == w.raw_data());
    CHECK(!find_weights_in_place(view_of(bytes2), kBig));
}

TEST_CASE("a large weight becomes a constant viewing the model file, with the same values") {
    TempDir dir;
    for (int opset : {17, 13}) { // 13: through ONNX's version converter, which drops the location
        CAPTURE(opset);
        onnx::ModelProto m = linear_model(512, opset);
        Graph g = run_frontend(test::write_model(m, dir.file("m.onnx")), {});
        const HostTensor &w = *g.value("W").constant;
        CHECK(w.is_view());
        CHECK(w.bytes() == ByteView(view_of(m.graph().initializer(0).raw_data())));
        CHECK(w.get_f64(1001) == 0.5);
        const HostTensor &b = *g.value("B").constant; // small: decoded as before
        CHECK(!b.is_view());
        CHECK(b.get_f64(3) == -3.0);
    }
}

TEST_CASE("external data is viewed in its file too; writing to a view copies it first") {
    TempDir dir;
    onnx::ModelProto m = linear_model(16);
    onnx::TensorProto *w = m.mutable_graph()->mutable_initializer(0);
    std::string data = w->raw_data();
    std::ofstream(dir.file("w.bin"), std::ios::binary) << std::string(8, '\0') << data;
    w->clear_raw_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [key, value] :
         {std::pair<const char *, std::string>{"location", "w.bin"}, {"offset", "8"}}) {
        auto *e = w->add_external_data();
        e->set_key(key);
        e->set_value(value);
    }
    Graph g = run_frontend(test::write_model(m, dir.file("m.onnx")), {});
    HostTensor t = *g.value("W").constant;
    CHECK(t.is_view());
    CHECK(t.bytes() == ByteView(view_of(data)));
    t.set_f64(0, 7.0);
    CHECK(!t.is_view());
    CHECK(t.get_f64(0) == 7.0);
    CHECK(t.get_f64(1) == 0.5);
    CHECK(g.value("W").constant->get_f64(0) == 0.0); // the file's bytes are untouched
}
