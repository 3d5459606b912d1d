// Weights stored in load order (neff/TileWeights): which weights are re-laid out, where their
// bytes go, which loads merge, on hand-built instruction lists; then on a compiled program, whose
// values must not change.

#include "E2E.h"
#include "TextCases.h"
#include "neff/NeffFile.h"
#include "neff/TileWeights.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

using namespace nhc;
using codegen::SelectedInstr;
using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;
using IsaType = neff::DType;

namespace {

constexpr int64_t kCols = 768; // a BERT-base projection's width: 1,536-byte bf16 rows

/** A program with one bf16 weight [rows, kCols] whose element (r, c) holds r * kCols + c. */
neff::Program weight_program(int64_t rows) {
    neff::Program p;
    neff::Variable w;
    w.name = "w";
    w.kind = neff::VarKind::Weight;
    w.dtype = IsaType::BF16;
    w.shape = {rows, kCols};
    std::vector<uint8_t> bytes(size_t(rows * kCols * 2));
    for (int64_t e = 0; e < rows * kCols; e++) {
        uint16_t v = uint16_t(e);
        std::memcpy(bytes.data() + e * 2, &v, 2);
    }
    w.set_bytes(std::move(bytes));
    p.vars.push_back(std::move(w));
    return p;
}

uint16_t element(const neff::Program &p, int64_t byte) {
    uint16_t v = 0;
    p.vars[0].read_bytes(size_t(byte), 2, reinterpret_cast<uint8_t *>(&v));
    return v;
}

/** The load of K-chunk `chunk` (128 rows) of columns [col0, col0 + width) into SBUF at `dst`. */
SelectedInstr load(int64_t chunk, int64_t dst, int64_t col0 = 0, int64_t width = kCols) {
    Instr i;
    i.op = neff::Opcode::Dma;
    i.src.space = MemSpace::HBM;
    i.src.dtype = IsaType::BF16;
    i.src.var = 0;
    i.src.num_partitions = 128;
    i.src.partition_step = kCols * 2;
    i.src.offset = (chunk * 128 * kCols + col0) * 2;
    i.src.dims = {{2, width}};
    i.dst.space = MemSpace::SBUF;
    i.dst.dtype = IsaType::BF16;
    i.dst.num_partitions = 128;
    i.dst.offset = dst;
    i.dst.dims = {{1, width}};
    return {Engine::SP, i};
}

/** A DVE copy reading SBUF bytes [src, src + 2 * width) of every partition. */
SelectedInstr reader(int64_t src, int64_t width = kCols) {
    Instr i;
    i.op = neff::Opcode::TensorCopy;
    i.src.space = i.dst.space = MemSpace::SBUF;
    i.src.dtype = i.dst.dtype = IsaType::BF16;
    i.src.num_partitions = i.dst.num_partitions = 128;
    i.src.offset = src;
    i.dst.offset = 100000;
    i.src.dims = i.dst.dims = {{1, width}};
    return {Engine::DVE, i};
}

} // namespace

TEST_CASE("a weight loaded K-chunk by K-chunk is stored partition by partition, its loads merged") {
    // K = 384: three chunks of 128 rows, loaded into adjacent SBUF bytes.
    neff::Program p = weight_program(384);
    std::vector<SelectedInstr> v = {load(0, 0), load(1, kCols * 2), load(2, kCols * 4)};
    codegen::TileWeightStats s = codegen::tile_weights(v, p, target::target_by_name("trn1"));
    CHECK(s.weights == 1);
    CHECK(s.loads_merged == 2);
    // One load of rows of three chunks: 4,608 contiguous bytes per partition.
    REQUIRE(v.size() == 1);
    const Instr &i = v[0].instr;
    CHECK(i.src.offset == 0);
    CHECK(i.src.partition_step == 3 * kCols * 2);
    CHECK(i.src.dims == std::vector<neff::Dim>{{2, 3 * kCols}});
    CHECK(i.dst.dims == std::vector<neff::Dim>{{1, 3 * kCols}});
    // Row r = 128 * chunk + partition now sits at (partition * 3 + chunk) * kCols: what the load
    // puts at partition p, free element chunk * kCols + c is w[128 * chunk + p, c].
    for (int64_t r : {0, 1, 127, 128, 200, 383})
        for (int64_t c : {int64_t(0), int64_t(5), kCols - 1})
            CHECK(element(p, ((r % 128) * 3 + r / 128) * kCols * 2 + c * 2) ==
                  uint16_t(r * kCols + c));
}

TEST_CASE("a tiled weight's bytes are made as read: any pieces give the layout read whole") {
    // Three K-chunks, two column tiles of 384: pieces that start and end inside a row segment,
    // across segments and across the tiles.
    neff::Program p = weight_program(384);
    std::vector<SelectedInstr> v = {load(0, 0, 0, 384),     load(0, 4096, 384, 384),
                                    load(1, 8192, 0, 384),  load(1, 12288, 384, 384),
                                    load(2, 16384, 0, 384), load(2, 20480, 384, 384)};
    REQUIRE(codegen::tile_weights(v, p, target::target_by_name("trn1")).weights == 1);
    const neff::Variable &w = p.vars[0];
    REQUIRE(w.make_bytes);
    REQUIRE(w.data_size == size_t(384 * kCols * 2));
    std::vector<uint8_t> whole(w.data_size), pieces(w.data_size);
    w.read_bytes(0, whole.size(), whole.data());
    for (size_t at = 0, piece = 1; at < pieces.size(); piece = piece * 7 % 5003 + 2) {
        size_t n = std::min(piece, pieces.size() - at);
        w.read_bytes(at, n, pieces.data() + at);
        at += n;
    }
    CHECK(pieces == whole);
    // Tile 1 (columns 384..767), partition 5, chunk 2 is row 261: its column 400.
    int64_t tile1 = 384 * 384, segment = (5 * 3 + 2) * 384;
    uint16_t e = 0;
    std::memcpy(&e, whole.data() + 2 * (tile1 + segment + 400 - 384), 2);
    CHECK(e == uint16_t(261 * kCols + 400));
}

TEST_CASE("a weight some instruction reads otherwise keeps its layout and its loads") {
    neff::Program p = weight_program(256);
    std::vector<SelectedInstr> v = {load(0, 0), load(1, kCols * 2)};
    // A load of 64 partitions (a different P) reads it too.
    SelectedInstr odd = load(0, 8192);
    odd.instr.src.num_partitions = odd.instr.dst.num_partitions = 64;
    v.push_back(odd);
    codegen::TileWeightStats s = codegen::tile_weights(v, p, target::target_by_name("trn1"));
    CHECK(s.weights == 0);
    CHECK(v.size() == 3);
    CHECK(v[1].instr.src.offset == 128 * kCols * 2);
    CHECK(element(p, 2 * (130 * kCols + 7)) == uint16_t(130 * kCols + 7));
}

TEST_CASE("a load does not merge into an earlier one when something between uses its bytes") {
    neff::Program p = weight_program(256);
    // The second chunk's destination is read between the two loads (its old contents).
    std::vector<SelectedInstr> v = {load(0, 0), reader(kCols * 2), load(1, kCols * 2)};
    codegen::TileWeightStats s = codegen::tile_weights(v, p, target::target_by_name("trn1"));
    CHECK(s.weights == 1); // stored in load order all the same
    CHECK(s.loads_merged == 0);
    REQUIRE(v.size() == 3);
    CHECK(v[2].instr.src.offset == kCols * 2); // partition 0's second chunk, after its first
    CHECK(v[2].instr.src.partition_step == 2 * kCols * 2);
}

TEST_CASE("column tiles are stored tile by tile") {
    // Two column tiles of 384 of one K-chunk: [tile][partition][chunk][384].
    neff::Program p = weight_program(128);
    std::vector<SelectedInstr> v = {load(0, 0, 0, 384), load(0, 4096, 384, 384)};
    codegen::TileWeightStats s = codegen::tile_weights(v, p, target::target_by_name("trn1"));
    CHECK(s.weights == 1);
    CHECK(s.loads_merged == 0);
    CHECK(v[1].instr.src.offset == 128 * 384 * 2);
    CHECK(v[1].instr.src.partition_step == 384 * 2);
    CHECK(element(p, (128 * 384 + 5 * 384 + 7) * 2) == uint16_t(5 * kCols + 384 + 7));
}

TEST_CASE("the last column tile may be narrower: it is stored with its own width") {
    // 768 columns in tiles of 320: two of 320 and the last of 128 (GPT-2's head: 50,257 in 508s).
    neff::Program p = weight_program(256);
    std::vector<SelectedInstr> v = {load(0, 0, 0, 320), load(1, 640, 0, 320),
                                    load(0, 8192, 320, 320), load(0, 16384, 640, 128),
                                    load(1, 16384 + 256, 640, 128)};
    codegen::TileWeightStats s = codegen::tile_weights(v, p, target::target_by_name("trn1"));
    CHECK(s.weights == 1);
    // Tile 2 starts after two full tiles of 128 partitions x 2 chunks x 320; its rows are 128
    // wide, its chunks adjacent, and its two loads merged.
    int64_t tile2 = 2 * 128 * 2 * 320 * 2;
    const Instr &last = v.back().instr;
    CHECK(last.src.offset == tile2);
    CHECK(last.src.partition_step == 2 * 128 * 2);
    CHECK(last.src.dims == std::vector<neff::Dim>{{2, 256}});
    // Element (r, c) of the last tile at tile2 + ((r % 128) * 2 + r / 128) * 128 + c - 640.
    for (int64_t r : {0, 5, 130, 255})
        for (int64_t c : {int64_t(640), int64_t(700), kCols - 1})
            CHECK(element(p, tile2 + (((r % 128) * 2 + r / 128) * 128 + c - 640) * 2) ==
                  uint16_t(r * kCols + c));
    // A load narrower than the tiles but not the last: the weight keeps its layout.
    neff::Program q = weight_program(128);
    std::vector<SelectedInstr> w = {load(0, 0, 0, 320), load(0, 8192, 320, 128)};
    CHECK(codegen::tile_weights(w, q, target::target_by_name("trn1")).weights == 0);
}

TEST_CASE("a last tile shifted inward stores the columns it shares twice, the weight grown") {
    // 768 columns in tiles of 320 at 0, 320 and 448 (the last ends at 768, overlapping [448,
    // 640)), one K-chunk: stored [tile][128][320], 960 columns in all.
    neff::Program p = weight_program(128);
    std::vector<SelectedInstr> v = {load(0, 0, 0, 320), load(0, 8192, 320, 320),
                                    load(0, 16384, 448, 320)};
    codegen::TileWeightStats s = codegen::tile_weights(v, p, target::target_by_name("trn1"));
    CHECK(s.weights == 1);
    CHECK(p.vars[0].shape == std::vector<int64_t>{128, 960});
    CHECK(p.vars[0].data_size == size_t(128 * 960 * 2));
    CHECK(v[2].instr.src.offset == 2 * 128 * 320 * 2);
    // Column 500 of row 7 is in tiles 1 and 2, at its place in each.
    CHECK(element(p, (128 * 320 + 7 * 320 + 500 - 320) * 2) == uint16_t(7 * kCols + 500));
    CHECK(element(p, (2 * 128 * 320 + 7 * 320 + 500 - 448) * 2) == uint16_t(7 * kCols + 500));
    // An overlap that is not the last tile's: the layout stays.
    neff::Program q = weight_program(128);
    std::vector<SelectedInstr> w = {load(0, 0, 0, 320), load(0, 8192, 200, 320),
                                    load(0, 16384, 448, 320)};
    CHECK(codegen::tile_weights(w, q, target::target_by_name("trn1")).weights == 0);
}

namespace {

/** x [128, 256] through two MatMuls whose weights are constants (small integers: exact in bf16). */
Graph two_layer_graph() {
    Graph g = test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x, float[256, 768] w1, float[768, 256] w2) => (float[128, 256] y) {
  h = MatMul(x, w1)
  a = Relu(h)
  y = MatMul(a, w2)
}
)");
    for (const char *name : {"w1", "w2"}) {
        Value &w = g.values.at(name);
        auto t = std::make_shared<HostTensor>(DType::Float32, w.shape);
        for (int64_t e = 0; e < t->numel(); e++)
            t->set_f64(e, double((e * 7) % 19 - 9));
        w.constant = t;
        g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), name));
    }
    return g;
}

} // namespace

TEST_CASE("weights stored in load order change no value: a two-layer bf16 program at -O1, -O2") {
    Graph g = two_layer_graph();
    CompileOptions o;
    o.auto_cast = "matmult";
    o.auto_cast_type = "bf16";
    size_t loads[2] = {0, 0};
    test::require_same_values_at_o1_and_o2(
        g, test::random_inputs(g, 9), o, "y", [&](int level, const neff::Program &p) {
            for (Engine e : {Engine::SP, Engine::ACT, Engine::POOL, Engine::DVE, Engine::PE})
                for (const Instr &i : p.stream(e))
                    loads[level - 1] += i.op == neff::Opcode::Dma && i.src.space == MemSpace::HBM &&
                                        p.vars[size_t(i.src.var)].kind == neff::VarKind::Weight;
        });
    CHECK(loads[1] < loads[0]); // merged at -O2
}

TEST_CASE("a program compiled from a consumed graph, its constants let go of, is the same") {
    CompileOptions o;
    o.auto_cast = "matmult";
    o.auto_cast_type = "bf16";
    o.optlevel = 2;
    Graph kept = two_layer_graph();
    apply_graph_passes(kept, o);
    Graph consumed = kept;
    neff::Program from_kept = generate_program(kept, o);
    neff::Program from_consumed = generate_program(std::move(consumed), o);
    CHECK(neff::write_neff(from_kept, {}) == neff::write_neff(from_consumed, {}));
}
