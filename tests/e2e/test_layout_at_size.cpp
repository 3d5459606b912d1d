// Data movement too large to stage whole (issue 15): a Transpose of the last two axes goes
// through the PE in [128, 128] tiles, and Slices and other layout outputs are staged per tile of
// rows, so that no transfer is an HBM -> HBM copy of single elements.

#include "TextCases.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace nhc;
using test::load_text;

namespace {

/** Whether `got` holds exactly `want` (same shape and values). */
bool same(const HostTensor &got, const HostTensor &want) {
    if (got.shape() != want.shape())
        return false;
    for (int64_t i = 0; i < got.numel(); i++)
        if (got.get_f64(i) != want.get_f64(i))
            return false;
    return true;
}

/** DMAs whose source and destination are both in HBM. */
int hbm_to_hbm(const neff::Program &p) {
    int n = 0;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            n += i.op == neff::Opcode::Dma && i.src.space == neff::MemSpace::HBM &&
                 i.dst.space == neff::MemSpace::HBM;
    return n;
}

/** The PE's transpose instructions. */
int pe_transposes(const neff::Program &p) {
    int n = 0;
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        n += i.op == neff::Opcode::Transpose;
    return n;
}

/** A 2-D tensor transposed on the host, in its own dtype: the values a Transpose must give. */
HostTensor transposed(const HostTensor &x) {
    int64_t rows = x.shape()[0], cols = x.shape()[1];
    HostTensor t(x.dtype(), {cols, rows});
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            t.set_f64(c * rows + r, x.get_f64(r * cols + c));
    return t;
}

} // namespace

TEST_CASE("A large Transpose of the last two axes is PE transposes of [128, 128] tiles") {
    // 300 x 700 fp32 (840 KB: no axis fits the partitions whole): 3 x 6 output tiles, the last
    // of each axis shifted inwards; each tile one natural load of 128 rows, one transpose.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[300, 700] x) => (float[700, 300] y) {
  y = Transpose <perm = [1, 0]> (x)
}
)");
    neff::Program p = test::compile_graph(g);
    CHECK(pe_transposes(p) == 18);
    CHECK(test::dmas_reading(p, "x") == 18);
    CHECK(hbm_to_hbm(p) == 0);
    std::map<std::string, HostTensor> in = test::random_inputs(g, 3);
    CHECK(same(test::compile_and_run(g, in).outputs.at("y"), transposed(in["x"])));
}

TEST_CASE("A large bf16 Transpose of the last two axes goes through the PE too, exactly") {
    // The PE's transposes write fp32 on NeuronCore-v2: the tiles are widened, transposed and
    // rounded back, which is exact; before, a 16-bit Transpose was an HBM -> HBM copy of single
    // elements (a [512, 256] bf16 one: 328.0 us, now 7.2 us).
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bfloat16[300, 700] x) => (bfloat16[700, 300] y) {
  y = Transpose <perm = [1, 0]> (x)
}
)");
    neff::Program p = test::compile_graph(g);
    CHECK(pe_transposes(p) == 18);
    CHECK(hbm_to_hbm(p) == 0);
    HostTensor x(DType::BFloat16, {300, 700});
    for (int64_t i = 0; i < x.numel(); i++)
        x.set_f64(i, std::ldexp(double(i % 251) - 125.0, -int(i % 7))); // exact in bf16
    CHECK(same(test::compile_and_run(g, {{"x", x}}).outputs.at("y"), transposed(x)));
}

TEST_CASE("A large Slice and a head-splitting Transpose are staged per tile of rows") {
    // Each output is over the layout budget: per tile of rows, loaded into SBUF and stored,
    // instead of one HBM -> HBM copy: s in two tiles of 75 rows per channel (150 rows in
    // balanced tiles), t in one tile of 64 rows per position.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 64, 200, 300] x) => (float[1, 64, 150, 300] s, float[1, 200, 64, 300] t)
    <int64[1] starts = {20}, int64[1] ends = {170}, int64[1] axes = {2}> {
  s = Slice(x, starts, ends, axes)
  t = Transpose <perm = [0, 2, 1, 3]> (x)
}
)");
    neff::Program p = test::compile_graph(g);
    CHECK(hbm_to_hbm(p) == 0);
    CHECK(test::dmas_reading(p, "x") == 64 * 2 + 200);
    std::map<std::string, HostTensor> in = test::random_inputs(g, 4);
    test::E2EResult r = test::compile_and_run(g, in);
    HostTensor s(DType::Float32, {1, 64, 150, 300}), t(DType::Float32, {1, 200, 64, 300});
    const HostTensor &x = in["x"];
    for (int64_t c = 0; c < 64; c++)
        for (int64_t h = 0; h < 200; h++)
            for (int64_t w = 0; w < 300; w++) {
                double v = x.get_f64((c * 200 + h) * 300 + w);
                if (h >= 20 && h < 170)
                    s.set_f64((c * 150 + h - 20) * 300 + w, v);
                t.set_f64((h * 64 + c) * 300 + w, v);
            }
    CHECK(same(r.outputs.at("s"), s));
    CHECK(same(r.outputs.at("t"), t));
}

TEST_CASE("A GatherElements past the one-hot limit gathers single elements by indirect DMA") {
    // 64 x 300 indices into rows of 2048: a one-hot mask of 39 M elements; instead one
    // indirect DMA per tile of 128 indices (from Pool), reading only the gathered elements.
    Graph g = load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[64, 2048] x, int64[64, 300] idx) => (float[64, 300] y) {
  y = GatherElements <axis = 1> (x, idx)
}
)");
    std::map<std::string, HostTensor> in = test::random_inputs(g, 6);
    HostTensor idx(DType::Int64, {64, 300});
    for (int64_t i = 0; i < idx.numel(); i++) // negative ones count from the row's end
        idx.set_f64(i, double((i * 7919) % 4096 - 2048));
    in["idx"] = idx;
    neff::Program p = test::compile_graph(g);
    // Three tiles of 100 indices per row (300 in balanced tiles), one element each: every
    // element gathered once (tiles of 128 with the last shifted inwards gathered 84 twice).
    int gathers = 0;
    int64_t gathered = 0;
    for (const neff::Instr &i : p.stream(neff::Engine::POOL))
        if (i.op == neff::Opcode::Dma && i.src1.present()) {
            gathers++;
            gathered += int64_t(i.dst.num_partitions) * i.dst.free_count();
        }
    CHECK(gathers == 64 * 3);
    CHECK(gathered == 64 * 300);
    HostTensor want(DType::Float32, {64, 300});
    for (int64_t r = 0; r < 64; r++)
        for (int64_t j = 0; j < 300; j++) {
            int64_t k = static_cast<int64_t>(idx.get_f64(r * 300 + j));
            want.set_f64(r * 300 + j, in["x"].get_f64(r * 2048 + (k < 0 ? k + 2048 : k)));
        }
    CHECK(same(test::compile_and_run(g, in).outputs.at("y"), want));
}
