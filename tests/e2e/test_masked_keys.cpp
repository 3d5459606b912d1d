// Causal attention without its masked keys (graph/SkipMaskedKeys): where the mask's fill
// vanishes in the softmax, the Softmax's maximum and sum and P·V's contraction stop at each
// row's diagonal, and a tile of query rows computes its scores only up to its last row's
// diagonal key; the values are those of -O1, element for element. A fill that does not vanish
// keeps every key. Either way GpSimd's affine_select masks only the tiles the diagonal crosses
// (neff/SelectCompute).

#include "TextCases.h"
#include "driver/GraphPasses.h"
#include "graph/SkipMaskedKeys.h"

#include <doctest/doctest.h>
#include <optional>

using namespace nhc;

namespace {

/** The columns the scores' matmuls compute: the moving columns of every matmul contracting
 *  d = 64 partitions (P·V contracts chunks of 128 keys; `moving` is src1). */
int64_t score_columns(const neff::Program &p) {
    int64_t columns = 0;
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        if (i.op == neff::Opcode::Matmul && i.src1.num_partitions == 64)
            columns += i.src1.free_count();
    return columns;
}

/** The program's instructions with opcode `op` (and value `value`, when given). */
int count(const neff::Program &p, neff::Opcode op, std::optional<float> value = std::nullopt) {
    int n = 0;
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            n += i.op == op && (!value || i.value == *value);
    return n;
}

/** Whether -O2's graph passes mark the Softmax and P·V of `g` as reducing over kept keys. */
std::pair<bool, bool> marked(Graph g) {
    CompileOptions o;
    o.optlevel = 2;
    apply_graph_passes(g, o);
    bool softmax = false, product = false;
    for (const Node &n : g.nodes) {
        softmax = softmax || (n.op_type == "Softmax" && n.attr_int(kKeysUpToDiagonal, -1) == 0);
        product = product || (n.op_type == "MatMul" && n.attr_int(kKeysUpToDiagonal, -1) == 0);
    }
    return {softmax, product};
}

} // namespace

TEST_CASE("causal attention over 640 positions computes scores up to each row tile's diagonal") {
    // Five row tiles of 128 queries per head; tile t needs the keys up to 128 (t + 1): 128 +
    // 256 + 384 + 512 + 640 = 1,920 columns of scores per head, where every tile computed all
    // 640 (3,200). The values are -O1's, element for element: the terms left out are exact
    // zeros there (exp of -3.4e38 / 8 below the row's maximum).
    Graph g = test::causal_attention(640, true);
    CHECK(marked(g) == std::make_pair(true, true));
    CompileOptions o;
    o.model_type = "transformer";
    test::require_same_values_at_o1_and_o2(
        g, test::random_inputs(g, 13), o, "o", [&](int level, const neff::Program &p) {
            CHECK(score_columns(p) == 2 * (level == 2 ? 1920 : 3200));
            // GpSimd masks only the column tiles (320 keys) that the diagonal crosses: 1, 1, 2,
            // 1, 1 for the five row tiles; the scores below it leave PSUM straight into the
            // mask's tile (-O1 selects on DVE from the mask it loads).
            if (level == 2)
                CHECK(count(p, neff::Opcode::AffineSelect) == 2 * 6);
        });
}

TEST_CASE("a causal mask whose fill does not vanish keeps every key") {
    // exp((-1 - max) / 8) is not 0: the masked keys weigh in the softmax, so none is skipped.
    Graph g = test::causal_attention(640, true, "-1.0");
    CHECK(marked(g) == std::make_pair(false, false));
    CompileOptions o;
    o.optlevel = 2;
    o.model_type = "transformer";
    neff::Program p = test::compile_graph(g, o);
    CHECK(score_columns(p) == 2 * 3200);
    // Of the ten tiles of 320 keys per head, GpSimd masks the six the diagonal crosses; the
    // second tile of the first two row tiles is all fill, set by a memset; the last two row
    // tiles' first tile is all kept, copied out of PSUM.
    CHECK(count(p, neff::Opcode::AffineSelect) == 2 * 6);
    CHECK(count(p, neff::Opcode::Memset, -1.0f) == 2 * 2);
    CHECK(test::worst_rel_l2(g, test::random_inputs(g, 17), {"o"}, 1e-5, 1e-6) <= 1e-5);
}

TEST_CASE("probabilities read by another node keep every key") {
    // P is also the graph's output: its masked columns must be computed (as exact zeros).
    Graph g = test::causal_attention(128, false);
    g.outputs.push_back("p");
    CHECK(marked(g) == std::make_pair(false, false));
}
