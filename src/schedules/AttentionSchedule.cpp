// Fused attention's default schedule (DESIGN.md §4): the scores MatMul, its epilogue, the Softmax
// and the context MatMul P·V in one group, per head (score rows within a PSUM bank) or per row
// tile of queries (wider rows), with the placements of MatmulSchedule.cpp.

#include "schedules/MemoryTypes.h"
#include "schedules/ScheduleParts.h"
#include "support/Error.h"

#include <algorithm>
#include <vector>

namespace nhc::sched::detail {

using Halide::Func;
using Halide::Var;

namespace {

/** Whether a fused attention's output tiles can be gathered per item of its outermost batch axis
 *  and stored together (AttentionPlan::outputs_per_batch_item): a 4-D or higher output whose
 *  head is one tile (positions on partitions, a row within a PSUM bank), of one output, all
 *  heads of an item within the staged-layout budget. */
bool heads_stored_together(const Group &g, const Limits &L) {
    const Shape &s = g.outputs[0].result.shape;
    int rank = static_cast<int>(s.size());
    if (rank < 4 || g.outputs.size() != 1 || s[rank - 2] > L.partitions ||
        s[rank - 1] > L.moving_free)
        return false;
    int64_t heads = 1;
    for (int d = 1; d < rank - 2; d++)
        heads *= s[d];
    int64_t bytes = heads * s[rank - 1] * g.outputs[0].result.func.output_types()[0].bytes();
    return bytes <= L.layout_budget / 2;
}

/** K^T (the scores' B, transposed on the PE from K's natural rows) built once per head at
 *  `head`, in SBUF, for every row tile of queries to read, instead of once per row tile (GPT-2
 *  over 1,024 positions: eight times; ViT-B/16 over 197: twice), within a whole-row epilogue's
 *  budget of SBUF per partition, as the score rows are. */
void stage_keys_per_head(Group &g, const Halide::LoopLevel &head, const Limits &L) {
    Func k_t = g.stage("rhs", 0), k_tp = g.stage("b_tp", 0);
    int64_t keys = g.values.at(g.nodes[0]->outputs[0]).shape.back();
    if (keys * k_t.output_types()[0].bytes() > L.row_budget)
        return;
    if (!k_innermost(*g.nodes[0], 1)) {
        k_t.compute_at(head).store_in(SBUF); // K^T as stored: one load per head
    } else if (k_tp.defined()) {
        // K^T in the scores' column tiles, each transposed in chunks of rows (place_matmul).
        Var no("no"), ni("ni");
        k_t.compute_at(head)
            .store_in(SBUF)
            .split(var(0), no, ni, balanced_tile(keys, L.moving_free))
            .reorder(ni, var(1), no);
        k_tp.compute_at(k_t, no);
    }
}

/** Long-row attention: K^T (stage_keys_per_head) and V (P·V's B, positions on partitions)
 *  built once per head at `head`, in SBUF, for every row tile of queries to read. */
void stage_keys_and_values_per_head(Group &g, int context_node, const Halide::LoopLevel &head,
                                    const Limits &L) {
    stage_keys_per_head(g, head, L);
    Func v = g.stage("rhs", context_node);
    int64_t positions = contraction_extent(g.stage("acc", context_node));
    int k_chunk = contraction_chunk(positions, L);
    int64_t v_bytes =
        positions / k_chunk * g.outputs[0].result.shape.back() * v.output_types()[0].bytes();
    if (!k_innermost(*g.nodes[static_cast<size_t>(context_node)], 1) && positions % k_chunk == 0 &&
        v_bytes <= L.row_budget) {
        Var kco("kco"), kci("kci");
        v.compute_at(head).store_in(SBUF).split(var(1), kco, kci, k_chunk).unroll(kco);
        g.partition_split[v.name()] = k_chunk;
    }
}

/** A staged operand of attention: its rows (var(1)) and the chunk of them one tile reads. */
struct StagedRows {
    Func op;
    int64_t rows, chunk;
};

/** Attention whose heads are its outermost axis ([heads, positions, d], as torchvision's
 *  multi-head attention exports it): Q and K (loaded naturally, then transposed on the PE) and
 *  V, to be staged in SBUF once for all heads, one transfer per chunk of rows of heads x d
 *  elements. ViT-B/16's 12 heads of 64 then move in rows of 1,536 bytes, where one transfer per
 *  head and row tile moved rows of 128 (the DMA cost by row size: neuroncore.md L255-259). Rows
 *  over the partitions lie in chunks on the partitions, each chunk what one tile reads: Q's the
 *  output's row tiles, K's the chunks of its transposes, V's the context product's K chunks.
 *  Not for a batch axis outside the heads: stage_operands_per_batch stages those per batch item
 *  up to a partition of rows; beyond it (SD UNet's [1, 8, 256, 64]) their per-head loads are
 *  taken from the projection's tiles in SBUF, which loads for all heads were not (-O2 915.0 ->
 *  941.6 us when staged). Empty when this does not apply or exceeds half the staged-layout
 *  budget. A plan with AttentionPlan::operands_per_head does not call it: staged together, the
 *  first product waits for every head's operands, a loss on SD's [8, 256, 64] and a gain on
 *  ViT-B/16 in the model, so it is searched. */
std::vector<StagedRows> heads_staged_together(const Group &g, int context_node, const Limits &L) {
    const Shape &s = g.outputs[0].result.shape;
    int rank = static_cast<int>(s.size());
    const Node &scores = *g.nodes[0], &context = *g.nodes[static_cast<size_t>(context_node)];
    int64_t rows = s[rank - 2], positions = contraction_extent(g.stage("acc", context_node));
    if (rank != 3 || g.outputs.size() != 1 || !k_innermost(scores, 0) || !k_innermost(scores, 1) ||
        k_innermost(context, 1) || contraction_extent(g.stage("acc", 0)) > L.partitions ||
        positions > L.moving_free)
        return {};
    std::vector<StagedRows> staged = {
        {g.stage("a_nat", 0), rows, balanced_tile(rows, L.partitions)},
        {g.stage("b_nat", 0), positions, balanced_tile(positions, L.partitions)},
        {g.stage("rhs", context_node), positions, contraction_chunk(positions, L)}};
    int64_t heads = s[0], bytes = 0;
    for (const StagedRows &st : staged) {
        if (!st.op.defined())
            return {};
        int64_t chunks = (st.rows + st.chunk - 1) / st.chunk;
        bytes += chunks * heads * s[rank - 1] * st.op.output_types()[0].bytes();
    }
    return bytes <= L.layout_budget / 2 ? staged : std::vector<StagedRows>{};
}

/** Places the operands of heads_staged_together, after place_matmul placed them per tile.
 *  Rows over the partitions are split into their chunks, guarded (the tiles reading them are
 *  too: a tile shifted inwards would straddle two chunks), the chunk outermost, its rows on
 *  partitions, then the heads and d, contiguous in each partition (a partition split's chunks
 *  are outermost there, SelectLayout.cpp): one transfer per chunk. */
void stage_heads_together(Group &g, const std::vector<StagedRows> &staged) {
    for (const StagedRows &st : staged) {
        Func op = st.op;
        if (st.rows > st.chunk) {
            Var c("c"), r("r");
            op.split(var(1), c, r, static_cast<int>(st.chunk), Halide::TailStrategy::GuardWithIf)
                .reorder(var(0), var(2), r, c); // d, heads, rows, chunks
            g.partition_split[op.name()] = st.chunk;
        }
        op.compute_root().store_in(SBUF);
    }
}

} // namespace

/** Long-row attention: the A^T of matmul node `node` (Q^T for the scores, P^T for P·V) built
 *  once per row tile of queries at `row_tile`, its PE transposes four K chunks to a PSUM bank
 *  with one copy out each (place_a_transposes, the default plan's; `per_bank` of them when
 *  given), where Q^T was built again for each bank of scores and P^T each K chunk in a bank of
 *  its own. */
void transpose_a_per_row_tile(Group &g, int node, const Halide::LoopLevel &row_tile,
                              const Limits &L, int per_bank = 0) {
    Func a_t = g.stage("lhs_t", node);
    if (!g.stage("a_tp", node).defined() || !g.stage("a_nat", node).defined())
        return;
    int64_t k = contraction_extent(g.stage("acc", node));
    int k_chunk = contraction_chunk(k, L);
    const Shape &s = g.outputs[0].result.shape;
    int tm = balanced_tile(s[s.size() - 2], L.partitions);
    if (k % k_chunk)
        return;
    Var kco("kco"), kci("kci");
    a_t.compute_at(row_tile).store_in(SBUF).split(var(1), kco, kci, k_chunk);
    g.partition_split[a_t.name()] = k_chunk;
    MatmulPlan transposes;
    if (per_bank > 0)
        transposes.transposes_per_tile = per_bank;
    place_a_transposes(g, a_t, kco, k / k_chunk, tm, row_tile, transposes, L, node);
}

/** Fused attention (Codegen's closes_attention): scores MatMul, its epilogue and Softmax, then
 *  the context MatMul P·V, one output tile per head. Both products, the softmax and P's
 *  transpose run per head on chip; Q, K and V are staged once per batch item. Score rows wider
 *  than a PSUM bank: per row tile of queries, with K^T and V once per head. */
void schedule_attention(Group &g, int context_node, const Limits &L, const AttentionPlan &plan) {
    const Shape &s = g.outputs[0].result.shape;
    Func f = g.outputs[0].func;
    int64_t positions = contraction_extent(g.stage("acc", context_node)); // P's row length
    if (positions <= L.moving_free) {
        bool per_batch = plan.outputs_per_batch_item && heads_stored_together(g, L);
        Func result = g.outputs[0].result.func;
        // Stored per batch item: each head's stages run per head inside the result's loops,
        // the result holds all of them.
        std::vector<StagedRows> together;
        if (!per_batch && !plan.operands_per_head)
            together = heads_staged_together(g, context_node, L);
        TileLoop tile =
            per_batch ? TileLoop{false, Halide::LoopLevel(result, var(2))}
                      : tile_matmul_output(f, s, L, L.moving_free,
                                           together.empty() ? Halide::TailStrategy::Auto
                                                            : Halide::TailStrategy::GuardWithIf);
        std::vector<Func> qk = place_matmul(g, 0, *g.nodes[0], tile, L);
        std::vector<Func> pv = place_matmul(g, context_node, *g.nodes[context_node], tile, L);
        if (!together.empty()) {
            stage_heads_together(g, together);
            stage_keys_per_head(g, Halide::LoopLevel(f, var(2)), L);
        } else {
            stage_operands_per_batch(g, f, contraction_extent(g.stage("acc", 0)), qk, L);
            // P (the context product's A) is computed on chip; only V comes from HBM.
            stage_operands_per_batch(g, f, positions, {pv[1]}, L);
        }
        place_epilogue(g, tile, static_cast<int>(s.size()));
        if (per_batch)
            result.compute_at(f, var(static_cast<int>(s.size()) - 1));
    } else {
        // Score rows wider than a PSUM bank (GPT-2 over 1,024 positions): per row tile of
        // queries, the scores are built in SBUF bank by bank, the softmax runs on the whole
        // rows, and P·V contracts them in K chunks. Only a row tile of scores is ever on chip.
        Var mo("mo"), mi("mi");
        split_rows(f, var(1), mo, mi, s[s.size() - 2], L.partitions);
        TileLoop row_tile{false, Halide::LoopLevel(f, mo)};
        place_whole_rows(g, whole_rows_value(g), positions, row_tile,
                         divisor_at_most(contraction_extent(g.stage("acc", 0)), L.partitions), L,
                         MatmulPlan());
        place_matmul(g, context_node, *g.nodes[context_node], row_tile, L);
        for (const alg::Stage &st : g.op.stages)
            if (is_operand_role(st.role) || st.role == "acc")
                g.partition_dim[st.func.name()] = st.func.dimensions() >= 2 ? 1 : 0;
        if (s.size() >= 3)
            stage_keys_and_values_per_head(g, context_node, Halide::LoopLevel(f, var(2)), L);
        transpose_a_per_row_tile(g, 0, row_tile.level, L);
        transpose_a_per_row_tile(g, context_node, row_tile.level, L, plan.p_transposes_per_bank);
        stage_inputs(g, row_tile);
    }
    // P itself is inlined into its bf16 copy for the PE: the softmax's last operation writes the
    // matmul operand directly, one instruction per head fewer.
    auto p = g.values.find(g.nodes[static_cast<size_t>(context_node)]->inputs[0]);
    if (p != g.values.end())
        p->second.func.compute_inline();
    const std::pair<Func, int> fixed[] = {{g.stage("a_tp", 0), plan.qk_transpose_buffers},
                                          {g.stage("b_tp", 0), plan.qk_transpose_buffers},
                                          {g.stage("a_tp", context_node), plan.p_transpose_buffers},
                                          {g.stage("acc", 0), plan.score_buffers},
                                          {g.stage("acc", context_node), plan.output_buffers}};
    for (const auto &[stage, buffers] : fixed)
        if (stage.defined() && buffers > 0)
            g.buffers[stage.name()] = buffers;
}

} // namespace nhc::sched::detail
