// Output rows that the partitions do not divide (ViT-B/16's 197 positions): balanced tiles whose
// last one is guarded and shorter (schedules/ScheduleParts.h, rows_tail), so that each row is
// computed and stored once. Tiles shifted inwards over their neighbour stored the shared rows
// twice, the second store waiting for the first, and matched no reader's tiles.

#include "TextCases.h"

#include <algorithm>
#include <doctest/doctest.h>
#include <map>

using namespace nhc;

namespace {

/** The partitions of each DMA that stores into the HBM variable `name`, sorted. */
std::vector<int32_t> stores_into(const neff::Program &p, const std::string &name) {
    std::vector<int32_t> rows;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            if (i.op == neff::Opcode::Dma && i.dst.space == neff::MemSpace::HBM && i.dst.var >= 0 &&
                p.vars[static_cast<size_t>(i.dst.var)].name == name)
                rows.push_back(i.src.num_partitions);
    std::sort(rows.begin(), rows.end());
    return rows;
}

} // namespace

TEST_CASE("197 rows: a LayerNorm and a Gemm store each row once, in tiles of 99 and 98") {
    Graph g = test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[197, 256] x, float[256] s, float[256] b, float[256, 192] w, float[192] c)
    => (float[197, 256] y, float[197, 192] z) {
  y = LayerNormalization<axis = -1>(x, s, b)
  z = Gemm(x, w, c)
}
)");
    for (int level : {1, 2}) {
        CAPTURE(level);
        CompileOptions o;
        o.optlevel = level;
        neff::Program p = test::compile_graph(g, o);
        CHECK(stores_into(p, "y") == std::vector<int32_t>{98, 99});
        CHECK(stores_into(p, "z") == std::vector<int32_t>{98, 99});
    }
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 3), {"y", "z"}, 1e-5, 1e-6) <= 1e-5);
}
