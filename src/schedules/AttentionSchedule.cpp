// Fused attention's default schedule (DESIGN.md §4): the scores MatMul, its epilogue, the Softmax
// and the context MatMul P·V in one group, per head (score rows within a PSUM bank) or per row
// tile of queries (wider rows), with the placements of MatmulSchedule.cpp.

#include "schedules/MemoryTypes.h"
#include "schedules/ScheduleParts.h"
#include "support/Error.h"

#include <algorithm>

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

/** Long-row attention: K^T (the scores' B, transposed on the PE from K's natural rows) and V
 *  (P·V's B, positions on partitions) built once per head at `head`, in SBUF, for every row
 *  tile of queries to read, instead of once per row tile (GPT-2 over 1,024 positions: eight
 *  times each). */
void stage_keys_and_values_per_head(Group &g, int context_node, const Halide::LoopLevel &head,
                                    const Limits &L) {
    // Each within a whole-row epilogue's budget of SBUF per partition, as the score rows are.
    Func k_t = g.stage("rhs", 0), k_tp = g.stage("b_tp", 0);
    int64_t keys = g.values.at(g.nodes[0]->outputs[0]).shape.back();
    if (keys * k_t.output_types()[0].bytes() <= L.row_budget) {
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
    Func v = g.stage("rhs", context_node);
    int64_t positions = contraction_extent(g.stage("acc", context_node));
    int k_chunk = divisor_at_most(positions, L.partitions);
    int64_t v_bytes =
        positions / k_chunk * g.outputs[0].result.shape.back() * v.output_types()[0].bytes();
    if (!k_innermost(*g.nodes[static_cast<size_t>(context_node)], 1) &&
        full_k_chunks(positions, k_chunk, L) && positions % k_chunk == 0 &&
        v_bytes <= L.row_budget) {
        Var kco("kco"), kci("kci");
        v.compute_at(head).store_in(SBUF).split(var(1), kco, kci, k_chunk).unroll(kco);
        g.partition_split[v.name()] = k_chunk;
    }
}

} // namespace

/** Long-row attention: the A^T of matmul node `node` (Q^T for the scores, P^T for P·V) built
 *  once per row tile of queries at `row_tile`, its PE transposes four K chunks to a PSUM bank
 *  with one copy out each (place_a_transposes, the default plan's), where Q^T was built again
 *  for each bank of scores and P^T each K chunk in a bank of its own. */
void transpose_a_per_row_tile(Group &g, int node, const Halide::LoopLevel &row_tile,
                              const Limits &L) {
    Func a_t = g.stage("lhs_t", node);
    if (!g.stage("a_tp", node).defined() || !g.stage("a_nat", node).defined())
        return;
    int64_t k = contraction_extent(g.stage("acc", node));
    int k_chunk = divisor_at_most(k, L.partitions);
    const Shape &s = g.outputs[0].result.shape;
    int tm = balanced_tile(s[s.size() - 2], L.partitions);
    if (!full_k_chunks(k, k_chunk, L) || k % k_chunk)
        return;
    Var kco("kco"), kci("kci");
    a_t.compute_at(row_tile).store_in(SBUF).split(var(1), kco, kci, k_chunk);
    g.partition_split[a_t.name()] = k_chunk;
    place_a_transposes(g, a_t, kco, k / k_chunk, tm, row_tile, MatmulPlan(), L, node);
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
        TileLoop tile = per_batch ? TileLoop{false, Halide::LoopLevel(result, var(2))}
                                  : tile_matmul_output(f, s, L, L.moving_free);
        std::vector<Func> qk = place_matmul(g, 0, *g.nodes[0], tile, L);
        std::vector<Func> pv = place_matmul(g, context_node, *g.nodes[context_node], tile, L);
        stage_operands_per_batch(g, f, contraction_extent(g.stage("acc", 0)), qk, L);
        // P (the context product's A) is computed on chip; only V comes from HBM.
        stage_operands_per_batch(g, f, positions, {pv[1]}, L);
        place_epilogue(g, tile, static_cast<int>(s.size()));
        if (per_batch)
            result.compute_at(f, var(static_cast<int>(s.size()) - 1));
    } else {
        // Score rows wider than a PSUM bank (GPT-2 over 1,024 positions): per row tile of
        // queries, the scores are built in SBUF bank by bank, the softmax runs on the whole
        // rows, and P·V contracts them in K chunks. Only a row tile of scores is ever on chip.
        Var mo("mo"), mi("mi");
        f.split(var(1), mo, mi, balanced_tile(s[s.size() - 2], L.partitions));
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
        for (int node : {0, context_node})
            transpose_a_per_row_tile(g, node, row_tile.level, L);
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
