// The default matmul schedules (DESIGN.md §4): resident operands, per-batch operand staging and
// whole-row epilogues; the placements that fused attention (AttentionSchedule.cpp) shares.

#include "schedules/MemoryTypes.h"
#include "schedules/RFactor.h"
#include "schedules/ScheduleParts.h"
#include "support/Error.h"

#include <algorithm>

namespace nhc::sched::detail {

using Halide::Func;
using Halide::Var;

namespace {

/** The widest output tile a plan allows: at most one PSUM bank of fp32 (N). Tiles keep all the
 *  partitions' rows (M): fewer would break the folded broadcasts' period (FoldBroadcasts.h). */
int max_tile_columns(const MatmulPlan &p, const Limits &L) {
    return p.max_tile_n > 0 ? std::min(p.max_tile_n, L.moving_free) : L.moving_free;
}

/** Whether the resident-operand placement (place_resident) fits a 2-D matmul: B stored with K
 *  outer, K over one chunk, and B, or its blocks of `b_columns`, on chip with A's row tile. B
 *  whole must fit the resident budget with A's row tile in half of it. A block (which only a
 *  searched plan asks for) must fit the SBUF with one of each tile that is live beside it (A's
 *  row tile, natural and transposed, and an output tile of `tn` columns): the simulator then
 *  charges the little room left for double buffering. */
bool resident_fits(const Group &g, int64_t k_chunk, const Limits &L, int64_t b_columns, int tn) {
    const Shape &s = g.outputs[0].result.shape;
    if (s.size() != 2 || k_innermost(*g.node, 1) || g.node->op_type == "Gather")
        return false;
    Func acc = g.stage("acc"), rhs = g.stage("rhs");
    const Halide::Internal::ReductionVariable &rv = acc.function().update(0).schedule().rvars()[0];
    int64_t k = *Halide::Internal::as_const_int(rv.extent);
    int64_t op_bytes = rhs.output_types()[0].bytes();
    int64_t tm = balanced_tile(s[0], L.partitions);
    if (k <= k_chunk || !full_k_chunks(k, k_chunk, L))
        return false;
    int64_t b_bytes = (k / k_chunk) * b_columns * op_bytes;
    int64_t a_row_tile = k * op_bytes + (k / k_chunk) * tm * op_bytes;
    if (b_columns < s[1])
        return b_bytes + a_row_tile + tn * int64_t(sizeof(float)) <= L.sbuf_capacity;
    return b_bytes <= L.resident_budget && a_row_tile + k * op_bytes <= L.resident_budget / 2;
}

/** The block of a dimension `extent` (rows of A^T or of a K-blocked sum, columns of B) to keep
 *  on chip: the whole extent if it fits; else the largest multiple of the output tile `tile`,
 *  at most `max_block` (0: no blocks), that divides the extent and fits; else 0 (the plan does
 *  not apply). The resident plans pass their resident_block: blocks are a fallback, never a
 *  choice over a whole operand that fits, so that they add candidates only to the matmuls that
 *  need them. */
template <typename Fits>
int64_t fitting_block(int64_t max_block, int64_t extent, int64_t tile, Fits fits) {
    if (fits(extent))
        return extent;
    for (int64_t block = std::min<int64_t>(max_block, extent) / tile * tile; block > 0;
         block -= tile)
        if (extent % block == 0 && fits(block))
            return block;
    return 0;
}

/** The accumulator of a 2-D matmul: in PSUM per output tile (at `out_tile`), summed over K
 *  chunks of `k_chunk`, the chunk loop outermost. */
void place_accumulator(Group &g, const Halide::LoopLevel &out_tile, int64_t k_chunk) {
    Func acc = g.stage("acc");
    acc.compute_at(out_tile).store_in(PSUM);
    Halide::RVar ko("ko"), ki("ki");
    acc.update().split(Halide::RVar(acc.function().update(0).schedule().rvars()[0].var), ko, ki,
                       static_cast<int>(k_chunk));
    acc.update().reorder(ki, var(0), var(1), ko);
    g.partition_dim[acc.name()] = 1;
}

/** The epilogue of a 2-D matmul (bias, cast and fused elementwise nodes) and the inputs it
 *  reads, per output tile in SBUF. */
void place_2d_epilogue(Group &g, const TileLoop &tile) {
    for (const alg::Stage &st : g.op.stages)
        if (!is_operand_role(st.role) && st.role != "acc") {
            place(st.func, tile, SBUF);
            declare_layout(g, st.func, 2);
        }
    stage_inputs(g, tile);
}

/** B (`rhs`) at `level`, K chunks of `k_chunk` on partitions, one DMA per chunk (unrolled), so
 *  that the first matmuls start after the first chunk. */
void place_b_chunks(Group &g, const Halide::LoopLevel &level, int64_t k_chunk) {
    Func rhs = g.stage("rhs");
    Var kco("kco"), kci("kci");
    rhs.compute_at(level)
        .store_in(SBUF)
        .split(var(1), kco, kci, static_cast<int>(k_chunk))
        .unroll(kco);
    g.partition_dim[rhs.name()] = 1;
    g.partition_split[rhs.name()] = k_chunk;
}

/** A^T (`lhs_t`, `k` rows of K) at `level`, built row tile by row tile of `tm` rows, K chunks of
 *  `k_chunk` on partitions (a natural load and PE transposes per row tile when A is stored K
 *  innermost, place_a_transposes). */
void place_a_row_tiles(Group &g, const Halide::LoopLevel &level, int64_t k, int64_t k_chunk, int tm,
                       const MatmulPlan &plan, const Limits &L) {
    Func lhs = g.stage("lhs_t");
    Var mt("mt"), mti("mti"), kco("kco"), kci("kci");
    lhs.compute_at(level)
        .store_in(SBUF)
        .split(var(0), mt, mti, tm)
        .split(var(1), kco, kci, static_cast<int>(k_chunk))
        .reorder(mti, kci, kco, mt);
    g.partition_dim[lhs.name()] = 1;
    g.partition_split[lhs.name()] = k_chunk;
    if (k_innermost(*g.node, 0))
        place_a_transposes(g, lhs, kco, k / k_chunk, tm, Halide::LoopLevel(lhs, mt), plan, L);
}

/** Operand reuse for a 2-D matmul: B is staged once, whole, with K split into chunks of <= 128
 *  partitions (at `b_block`: root, or a block of columns); A once per row tile (at `row_tile`;
 *  loaded naturally and transposed chunk by chunk on the PE when its K is innermost); the
 *  accumulator per output tile (at `out_tile`) over the K chunks. Each operand crosses HBM once
 *  (A once per row tile and B block), instead of once per output tile and K chunk. */
void place_resident(Group &g, int64_t k_chunk, const Halide::LoopLevel &b_block,
                    const Halide::LoopLevel &row_tile, const Halide::LoopLevel &out_tile,
                    const MatmulPlan &plan, const Limits &L) {
    Func lhs = g.stage("lhs_t"), rhs = g.stage("rhs");
    Var kco("kco"), kci("kci");
    // B, whole (at root) or per block of columns.
    place_b_chunks(g, b_block, k_chunk);
    // A, per row tile, K chunks on partitions.
    lhs.compute_at(row_tile).store_in(SBUF).split(var(1), kco, kci, static_cast<int>(k_chunk));
    g.partition_dim[lhs.name()] = 1;
    g.partition_split[lhs.name()] = k_chunk;
    if (k_innermost(*g.node, 0)) {
        const Shape &s = g.outputs[0].result.shape;
        int tm = balanced_tile(s[s.size() - 2], L.partitions);
        place_a_transposes(g, lhs, kco, contraction_extent(g.stage("acc")) / k_chunk, tm, row_tile,
                           plan, L);
    }
    place_accumulator(g, out_tile, k_chunk);
}

/** An A-resident output stored in blocks of `nt` output tiles (MatmulPlan::store_columns): per
 *  block of columns B's columns are staged once (at `nb`), and each row tile's result is gathered
 *  in SBUF from its output tiles (one PSUM bank each) and stored in rows of the block's width.
 *  Returns false, having changed nothing, when B's block or the gathered rows do not fit their
 *  budgets or the result is the accumulator itself. */
bool place_store_blocks(Group &g, Func f, int64_t k_chunk, int tm, int tn, int nt,
                        const Limits &L) {
    Func rhs = g.stage("rhs"), rows = g.outputs[0].result.func;
    const Shape &s = g.outputs[0].result.shape;
    int64_t k = contraction_extent(g.stage("acc")), width = int64_t(tn) * nt;
    int64_t b_block = (k / k_chunk) * width * rhs.output_types()[0].bytes();
    if (nt < 2 || width >= s[1] || 2 * b_block > L.layout_budget ||
        2 * width * int64_t(sizeof(float)) > L.row_budget || rows.name() == g.stage("acc").name())
        return false;
    Var nb("nb"), nr("nr"), mo("mo"), mi("mi"), no("no"), ni("ni"), kco("kco"), kci("kci");
    f.split(var(0), nb, nr, static_cast<int>(width))
        .split(var(1), mo, mi, tm, rows_tail(s[0], tm))
        .reorder(nr, mi, mo, nb);
    place_b_chunks(g, Halide::LoopLevel(f, nb), k_chunk);
    place(rows, {false, Halide::LoopLevel(f, mo)}, SBUF);
    declare_layout(g, rows, 2);
    rows.split(var(0), no, ni, tn).reorder(ni, var(1), no);
    TileLoop column_tile{false, Halide::LoopLevel(rows, no)};
    place_accumulator(g, column_tile.level, k_chunk);
    for (const alg::Stage &st : g.op.stages)
        if (!is_operand_role(st.role) && st.role != "acc" && st.func.name() != rows.name()) {
            place(st.func, column_tile, SBUF);
            declare_layout(g, st.func, 2);
        }
    stage_inputs(g, column_tile);
    return true;
}

/** A resident, B streamed (2-D matmuls): A^T is built once and kept whole in SBUF, row tile by
 *  row tile (a natural load, then a PE transpose per K chunk, when A is stored K innermost); the
 *  output is computed column tile by column tile (one PSUM bank wide), row tiles inside, and B
 *  is staged per column tile. The first column tile consumes A's row tiles in the order they
 *  arrive, so the PE starts after one row tile of A and one column tile of B, where a resident
 *  B (schedule_matmul_resident) needs all of B, chunk by chunk over all columns, before the
 *  first row tile can finish (MatMul 2048^3 bf16: 289.9 -> 256.5 us, bench/README.md). Each
 *  operand crosses HBM once. A^T too large to stay whole is kept in blocks of rows (the plan's
 *  resident_block), each built once, and B then crosses HBM once per block. Returns false,
 *  having changed nothing, if A^T (or its block) or two B column tiles do not fit their SBUF
 *  budgets. */
bool schedule_matmul_a_resident(Group &g, int64_t k_chunk, const Limits &L,
                                const MatmulPlan &plan) {
    int max_n = max_tile_columns(plan, L);
    const Shape &s = g.outputs[0].result.shape;
    if (s.size() != 2 || g.node->op_type == "Gather" || k_innermost(*g.node, 1))
        return false;
    Func lhs = g.stage("lhs_t"), rhs = g.stage("rhs");
    int64_t k = contraction_extent(g.stage("acc")), op_bytes = rhs.output_types()[0].bytes();
    int tm = balanced_tile(s[0], L.partitions), tn = balanced_tile(s[1], max_n);
    // A^T whole within the resident budget with two B column tiles in the layout budget; a
    // block of A^T within the SBUF with one of each tile live beside it (resident_fits).
    int64_t a_row_bytes = (k / k_chunk) * op_bytes, b_tile = (k / k_chunk) * tn * op_bytes;
    int64_t block = fitting_block(plan.resident_block, s[0], tm, [&](int64_t rows) {
        if (rows == s[0])
            return rows * a_row_bytes <= L.resident_budget && 2 * b_tile <= L.layout_budget;
        return rows * a_row_bytes + b_tile + k * op_bytes + tn * int64_t(sizeof(float)) <=
               L.sbuf_capacity;
    });
    if (block == 0 || k <= k_chunk || k % k_chunk || !full_k_chunks(k, k_chunk, L))
        return false;
    Func f = g.outputs[0].func;
    Var no("no"), ni("ni"), mo("mo"), mi("mi");
    Halide::LoopLevel a_level = Halide::LoopLevel::root();
    bool store_blocks = block == s[0] && plan.store_columns > tn &&
                        place_store_blocks(g, f, k_chunk, tm, tn, plan.store_columns / tn, L);
    if (store_blocks) {
        // B and the output placed per block of columns (place_store_blocks).
    } else if (block < s[0]) {
        // Blocks of A^T's rows, outermost; B crosses HBM once per block.
        Var mb("mb"), mr("mr");
        f.split(var(1), mb, mr, static_cast<int>(block))
            .split(var(0), no, ni, tn)
            .split(mr, mo, mi, tm)
            .reorder(ni, mi, mo, no, mb);
        a_level = Halide::LoopLevel(f, mb);
    } else {
        f.split(var(0), no, ni, tn)
            .split(var(1), mo, mi, tm, rows_tail(s[0], tm))
            .reorder(ni, mi, mo, no);
    }
    // B, per column tile; A^T, whole or per block.
    if (!store_blocks)
        place_b_chunks(g, Halide::LoopLevel(f, no), k_chunk);
    place_a_row_tiles(g, a_level, k, k_chunk, tm, plan, L);
    if (!store_blocks) {
        place_accumulator(g, Halide::LoopLevel(f, mo), k_chunk);
        place_2d_epilogue(g, {false, Halide::LoopLevel(f, mo)});
    }
    return true;
}

/** B resident, A streamed (2-D matmuls): B is staged whole, or in blocks of columns (the
 *  plan's resident_block) when it is too large to stay on chip; for each block, A streams past
 *  row tile by row tile (transposed on the PE again per block when stored K innermost), and
 *  the output is computed tile by tile. Blocks trade A's extra reads for a B that fits: the
 *  4096x8192x8192 MatMul's B (128 MiB in bf16) is otherwise staged per output tile with A.
 *  Returns false, having changed nothing, when the plan's B does not fit. */
bool schedule_matmul_resident(Group &g, int64_t k_chunk, const Limits &L, const MatmulPlan &plan) {
    const Shape &s = g.outputs[0].result.shape;
    if (s.size() != 2)
        return false;
    int tn = balanced_tile(s[1], max_tile_columns(plan, L));
    int64_t block = fitting_block(plan.resident_block, s[1], tn, [&](int64_t columns) {
        return resident_fits(g, k_chunk, L, columns, tn);
    });
    if (block == 0)
        return false;
    Func f = g.outputs[0].func;
    Var nb("nb"), nr("nr"), no("no"), mo("mo"), ni("ni"), mi("mi");
    Halide::LoopLevel b_level = Halide::LoopLevel::root();
    if (block < s[1]) {
        f.split(var(0), nb, nr, static_cast<int>(block)).split(nr, no, ni, tn);
        split_rows(f, var(1), mo, mi, s[0], L.partitions).reorder(ni, mi, no, mo, nb);
        b_level = Halide::LoopLevel(f, nb);
    } else {
        f.split(var(0), no, ni, tn);
        split_rows(f, var(1), mo, mi, s[0], L.partitions).reorder(ni, mi, no, mo);
    }
    place_resident(g, k_chunk, b_level, Halide::LoopLevel(f, mo), Halide::LoopLevel(f, no), plan,
                   L);
    place_2d_epilogue(g, {false, Halide::LoopLevel(f, no)});
    return true;
}

/** K in two stages (MatmulPlan::k_block, RFactor.h): the output in blocks of rows, each row
 *  block's fp32 sum in SBUF, zeroed and then added to tile by tile; per block of K (outermost
 *  in the row block) B's rows and A^T's block are staged once, and each output tile's partial
 *  product over the block is accumulated in PSUM (`acc_intm`, over the block's K chunks). The
 *  epilogue runs per row tile of whole rows once its sum is complete, stored in rows of N
 *  elements. Returns false, having changed nothing, unless B is stored K outer, K divides into
 *  at least two blocks of whole chunks, the tiles divide the output, and a row block's sum with
 *  one block of each operand fits the resident budget. */
bool schedule_matmul_k_blocked(Group &g, int64_t k_chunk, const Limits &L, const MatmulPlan &plan) {
    const Shape &s = g.outputs[0].result.shape;
    if (s.size() != 2 || g.node->op_type == "Gather" || k_innermost(*g.node, 1) ||
        plan.k_block <= 0)
        return false;
    Func acc = g.stage("acc"), lhs = g.stage("lhs_t"), rhs = g.stage("rhs");
    int64_t k = contraction_extent(acc), kb = plan.k_block;
    int64_t op_bytes = rhs.output_types()[0].bytes();
    int tm = balanced_tile(s[0], L.partitions), tn = balanced_tile(s[1], L.moving_free);
    if (kb >= k || k % kb || kb % k_chunk || !full_k_chunks(k, k_chunk, L) || s[0] % tm ||
        s[1] % tn)
        return false;
    // The tallest row block whose sum (fp32) fits with one K block of B and of A^T.
    int64_t rb = fitting_block(s[0], s[0], tm, [&](int64_t rows) {
        int64_t sum = rows / tm * s[1] * int64_t(sizeof(float));
        return sum + kb / k_chunk * (s[1] + rows) * op_bytes <= L.resident_budget;
    });
    if (rb == 0)
        return false;
    int kc = static_cast<int>(k_chunk);
    Func f = g.outputs[0].func;
    Var mb("mb"), mr("mr"), mo("mo"), mi("mi"), no("no"), ni("ni"), u("u");
    f.split(var(1), mb, mr, static_cast<int>(rb)).split(mr, mo, mi, tm).reorder(var(0), mi, mo, mb);
    place_2d_epilogue(g, {false, Halide::LoopLevel(f, mo)});
    acc.compute_at(f, mb).store_in(SBUF);
    acc.split(var(0), no, ni, tn).split(var(1), mo, mi, tm).reorder(ni, mi, no, mo);
    g.partition_dim[acc.name()] = 1;
    g.partition_split[acc.name()] = tm;
    Halide::RVar rk(acc.function().update(0).schedule().rvars()[0].var), kbo("kb"), kbi("kr");
    acc.update().split(rk, kbo, kbi, static_cast<int>(kb));
    std::string why;
    Func intm = rfactor_stage(g, acc, "acc", "kb", "u", why);
    nhc_assert(intm.defined(), "rfactor of a matmul accumulator: " << why);
    acc.update().split(var(0), no, ni, tn).split(var(1), mo, mi, tm).reorder(ni, mi, no, mo, kbo);
    // Each output tile's partial product over the K block, in PSUM, K chunks outermost.
    Halide::RVar ko("ko"), ki("ki");
    intm.compute_at(acc, no).store_in(PSUM);
    intm.update().split(kbi, ko, ki, kc).reorder(ki, var(0), var(1), u, ko);
    g.partition_dim[intm.name()] = 1;
    // B's rows and A^T of the K block, once per row block and K block.
    place_b_chunks(g, Halide::LoopLevel(acc, kbo), k_chunk);
    place_a_row_tiles(g, Halide::LoopLevel(acc, kbo), kb, k_chunk, tm, plan, L);
    return true;
}

/** The first node of the group that reduces along rows (LayerNorm, Softmax), or -1. */
int first_row_node(const Group &g) {
    for (size_t i = 0; i < g.nodes.size(); i++)
        if (g.nodes[i]->op_type == "LayerNormalization" || g.nodes[i]->op_type == "Softmax")
            return static_cast<int>(i);
    return -1;
}

/** A matmul whose rows are wider than one PSUM bank, tiled by whole rows: the value that
 *  needs whole rows is built per row tile in SBUF, column tile by column tile, each from its
 *  own accumulator (one PSUM bank). That value is what a row reduction in the epilogue reads
 *  (attention output + residual + LayerNorm, N = 768: the LayerNorm and what follows run on the
 *  whole rows) or, without one, the group's result, which is then stored once per row tile in
 *  rows of N elements rather than once per column tile (the FFN's [128, 3072] bf16 tiles move
 *  in 6 KiB rows instead of 1 KiB ones: DMA cost by row size, neuroncore.md L255-259). A
 *  batched matmul's leading axes are outer loops. Returns false, having changed nothing, when
 *  the rows do not fit or need no splitting. */
bool schedule_matmul_row_tiles(Group &g, int64_t k_chunk, const Limits &L, const MatmulPlan &plan) {
    const Shape &s = g.outputs[0].result.shape;
    int rank = static_cast<int>(s.size());
    if (rank < 2 || g.outputs.size() != 1 || balanced_tile(s.back(), L.moving_free) >= s.back())
        return false;
    int row_node = first_row_node(g);
    Func rows_in = whole_rows_value(g);
    if (row_node <= 0) {
        // Without a row reduction, only for 2-D column tiles whose stored rows are short enough
        // to move at the lowest DMA rate (longer ones gain less than the later store costs).
        int64_t out_bytes = g.outputs[0].func.output_types()[0].bytes();
        if (rank != 2 || row_node == 0 || rows_in.name() == g.stage("acc").name() ||
            2 * s[1] * rows_in.output_types()[0].bytes() > L.layout_budget ||
            balanced_tile(s[1], L.moving_free) * out_bytes > L.short_dma_row)
            return false;
    }
    Func f = g.outputs[0].func;
    Var mo("mo"), mi("mi");
    split_rows(f, var(1), mo, mi, s[rank - 2], L.partitions);
    TileLoop row_tile{false, Halide::LoopLevel(f, mo)};
    place_whole_rows(g, rows_in, s.back(), row_tile, k_chunk, L, plan);
    for (const alg::Stage &st : g.op.stages)
        if (is_operand_role(st.role) && !g.partition_dim.count(st.func.name()))
            g.partition_dim[st.func.name()] = st.func.dimensions() >= 2 ? 1 : 0; // M, or K
    stage_inputs(g, row_tile);
    return true;
}

} // namespace

/** Whether chunks of `k_chunk` (a divisor of k) fill at least half the partitions a chunk could:
 *  a prime K (197 positions of ViT attention) has only chunks of 1, one matmul per element. */
bool full_k_chunks(int64_t k, int64_t k_chunk, const Limits &L) {
    return 2 * k_chunk >= std::min<int64_t>(k, L.partitions);
}

/** A's PE transposes (A stored K innermost, `lhs` split into K chunks at `kco`) and their
 *  natural load (at `row_tile`): the plan's number of K chunks per PSUM tile (a divisor of the
 *  `chunks`, at most a bank of fp32 rows of `tm`), each tile one transpose per chunk and one
 *  copy into `lhs`, in the plan's fixed PSUM buffers. The stages are those of the group's node
 *  `node_index`. */
void place_a_transposes(Group &g, Func lhs, const Var &kco, int64_t chunks, int tm,
                        const Halide::LoopLevel &row_tile, const MatmulPlan &p, const Limits &L,
                        int node_index) {
    Func a_nat = g.stage("a_nat", node_index), a_tp = g.stage("a_tp", node_index);
    a_nat.compute_at(row_tile).store_in(SBUF);
    int per_tile =
        divisor_at_most(chunks, std::max(1, std::min(p.transposes_per_tile, L.moving_free / tm)));
    int kc = static_cast<int>(g.partition_split.at(lhs.name()));
    if (per_tile > 1) {
        Var kq("kq"), kr("kr"), ta("ta"), tb("tb");
        lhs.split(kco, kq, kr, per_tile, keys_tail(g));
        a_tp.split(var(1), ta, tb, kc).unroll(ta).compute_at(lhs, kq).store_in(PSUM);
        g.partition_split[a_tp.name()] = kc;
    } else {
        a_tp.compute_at(lhs, kco).store_in(PSUM);
    }
    if (p.transpose_buffers > 0)
        g.buffers[a_tp.name()] = p.transpose_buffers;
    g.partition_dim[a_nat.name()] = 1;
    g.partition_dim[a_tp.name()] = 1;
}

/** A batched matmul whose every (head) item is one output tile and one K chunk, as attention's
 *  score and context products are: the operands that DMA loads (`from_hbm`) are staged once per
 *  item of the outermost batch axis, all inner items (heads) in one transfer, instead of one small
 *  transfer per item. For Q of [batch, seq, heads * 64] read per head that turns 12 transfers of
 *  128-byte rows into one of 1,536-byte rows (the DMA cost by row size: neuroncore.md
 *  L255-259). */
void stage_operands_per_batch(Group &g, Func f, int64_t k, const std::vector<Func> &from_hbm,
                              const Limits &L) {
    const Shape &s = g.outputs[0].result.shape;
    int rank = static_cast<int>(s.size());
    if (rank < 3 || k > L.partitions || s[rank - 2] > L.partitions || s[rank - 1] > L.moving_free ||
        g.node->op_type == "Gather")
        return;
    int64_t items = 1; // inner batch items under one outer one
    for (int d = 1; d < rank - 2; d++)
        items *= s[d];
    // Per partition, each operand holds a row of at most max(K, N, P) elements per inner item.
    int64_t row = std::max<int64_t>({k, s[rank - 1], L.partitions});
    int64_t bytes = 0;
    for (const Func &op : from_hbm)
        bytes += items * row * op.output_types()[0].bytes();
    if (bytes > L.layout_budget / 2)
        return;
    for (Func op : from_hbm)
        op.compute_at(Halide::LoopLevel(f, var(rank - 1)));
}

/** The extent of a matmul accumulator's reduction (K). */
int64_t contraction_extent(const Func &acc) {
    const Halide::Internal::ReductionVariable &rv = acc.function().update(0).schedule().rvars()[0];
    const int64_t *k = Halide::Internal::as_const_int(rv.extent);
    nhc_assert(k, "matmul reduction extent is not constant");
    return *k;
}

int contraction_chunk(int64_t k, const Limits &L) {
    // Halide guards and shrinks a partial last chunk of a reduction: the nest of that chunk has
    // a shorter constant K.
    int k_chunk = divisor_at_most(k, L.partitions);
    return full_k_chunks(k, k_chunk, L) ? k_chunk : balanced_tile(k, L.partitions);
}

/** Places one matmul node's accumulator (PSUM, per output tile, K in chunks that divide it) and
 *  operand chain (per K chunk). Returns the operands that come from HBM by DMA. */
std::vector<Func> place_matmul(Group &g, int node_index, const Node &node, const TileLoop &tile,
                               const Limits &L) {
    Func acc = g.stage("acc", node_index), lhs = g.stage("lhs_t", node_index),
         rhs = g.stage("rhs", node_index);
    nhc_assert(acc.defined() && lhs.defined() && rhs.defined(), "matmul stages missing");
    acc.store_in(PSUM);
    if (tile.root)
        acc.compute_root();
    else
        acc.compute_at(tile.level);
    // Its rows (M) on partitions: without a hint the outermost dimension would go there, a
    // batched matmul's batch axis.
    g.partition_dim[acc.name()] = acc.dimensions() >= 2 ? 1 : 0;
    Halide::RVar rk(acc.function().update(0).schedule().rvars()[0].var), ko("ko"), ki("ki");
    acc.update().split(rk, ko, ki, contraction_chunk(contraction_extent(acc), L));
    acc.update().reorder(ki, var(0), var(1), ko);
    lhs.compute_at(acc, ko).store_in(SBUF);
    rhs.compute_at(acc, ko).store_in(SBUF);
    if (Func ids_b = g.stage("ids_b", node_index); ids_b.defined()) // Gather: broadcast indices
        ids_b.compute_at(acc, ko).store_in(SBUF);
    // An operand stored with K innermost would need one DMA descriptor row per element to land K
    // on partitions; it is loaded naturally and transposed on the PE instead
    // (../shared/reference/isel-prototype.md §5, "natural DMA + PE transpose").
    std::vector<Func> loaded = {lhs, rhs};
    const char *nat[] = {"a_nat", "b_nat"}, *tp[] = {"a_tp", "b_tp"};
    for (int i = 0; i < 2; i++)
        if (k_innermost(node, i)) {
            Func transposed = g.stage(tp[i], node_index);
            loaded[i] = g.stage(nat[i], node_index);
            transposed.compute_at(acc, ko).store_in(PSUM);
            loaded[i].compute_at(acc, ko).store_in(SBUF);
            // B's natural rows are the tile's columns, up to a PSUM bank: wider than the
            // partitions (attention over 197 positions), they are loaded and transposed in
            // balanced chunks of rows (the last shifted inwards, or guarded: the tile's tail).
            auto out = g.values.find(node.outputs[0]);
            int64_t columns =
                out == g.values.end() ? 0 : balanced_tile(out->second.shape.back(), L.moving_free);
            if (i == 1 && columns > L.partitions) {
                Var no("no"), ni("ni");
                transposed.split(var(0), no, ni, balanced_tile(columns, L.partitions), tile.tail)
                    .reorder(ni, var(1), no);
                loaded[i].compute_at(transposed, no);
                // Guarded chunks are those of an operand staged outside this loop: unrolled,
                // each chunk is one transpose (as a loop without its load inside, the chunks
                // would be one copy nest of three loops, no transpose: NHC_EGEN012).
                if (tile.tail == Halide::TailStrategy::GuardWithIf)
                    transposed.unroll(no);
            }
        }
    return loaded;
}

/** Output tiles of up to P rows x one PSUM bank; the loop level of one tile. */
TileLoop tile_matmul_output(Func f, const Shape &s, const Limits &L, int max_n,
                            Halide::TailStrategy tail) {
    int rank = static_cast<int>(s.size());
    if (rank < 2)
        return {};
    Var no("no"), mo("mo"), ni("ni"), mi("mi");
    int tm = balanced_tile(s[rank - 2], L.partitions);
    f.split(var(0), no, ni, balanced_tile(s[rank - 1], max_n))
        .split(var(1), mo, mi, tm,
               tail == Halide::TailStrategy::Auto ? rows_tail(s[rank - 2], tm) : tail)
        .reorder(ni, mi, no, mo);
    return {false, Halide::LoopLevel(f, no), tail};
}

/** Every stage that is neither an operand nor an accumulator (bias, casts, fused elementwise
 *  and row-reduction nodes) is computed per output tile in SBUF. */
void place_epilogue(Group &g, const TileLoop &tile, int rank) {
    for (const alg::Stage &st : g.op.stages) {
        if (!is_operand_role(st.role) && st.role != "acc") {
            place(st.func, tile, SBUF);
            declare_layout(g, st.func, rank);
        } else {
            g.partition_dim[st.func.name()] = st.func.dimensions() >= 2 ? 1 : 0; // M, or K
        }
    }
    stage_inputs(g, tile);
}

/** The Func a group's row reduction (LayerNorm, Softmax) reads, or the group's result without
 *  one: the value whose whole rows a row tile builds. */
Func whole_rows_value(const Group &g) {
    int row_node = first_row_node(g);
    if (row_node <= 0)
        return g.outputs[0].result.func;
    auto row_input = g.values.find(g.nodes[static_cast<size_t>(row_node)]->inputs[0]);
    nhc_assert(row_input != g.values.end(), "the row node's input is not in the group");
    return row_input->second.func;
}

/** Builds `rows` (rows of `row_elems`) per row tile of the group's output (at `row_tile`), in
 *  SBUF, column tile by column tile (one PSUM bank each); places the first matmul's accumulator
 *  and operands per column tile, the stages before the row reduction per column tile and those
 *  after it per row tile. Returns the column tile's loop. */
TileLoop place_whole_rows(Group &g, Func rows, int64_t row_elems, const TileLoop &row_tile,
                          int64_t k_chunk, const Limits &L, const MatmulPlan &plan) {
    int max_n = max_tile_columns(plan, L);
    int rank = static_cast<int>(g.outputs[0].result.shape.size());
    place(rows, row_tile, SBUF);
    declare_layout(g, rows, rank);
    Var no("no"), ni("ni");
    rows.split(var(0), no, ni, balanced_tile(row_elems, max_n), keys_tail(g))
        .reorder(ni, var(1), no);
    TileLoop column_tile{false, Halide::LoopLevel(rows, no)};
    if (rank == 2 &&
        resident_fits(g, k_chunk, L, g.outputs[0].result.shape[1], balanced_tile(row_elems, max_n)))
        place_resident(g, k_chunk, Halide::LoopLevel::root(), row_tile.level, column_tile.level,
                       plan, L);
    else
        place_matmul(g, 0, *g.node, column_tile, L);
    int row_node = first_row_node(g);
    for (size_t i = 0; i < g.op.stages.size(); i++) {
        const alg::Stage &st = g.op.stages[i];
        if (is_operand_role(st.role) || st.role == "acc" || st.func.name() == rows.name())
            continue;
        bool before_rows = row_node < 0 || g.stage_node[i] < row_node;
        place(st.func, before_rows ? column_tile : row_tile, SBUF);
        declare_layout(g, st.func, rank);
    }
    return column_tile;
}

bool whole_row_epilogue_fits(int64_t row_elems, const Limits &L) {
    // The row node's input, its result and a temporary or two per row, in fp32.
    return row_elems * 4 * 4 <= L.row_budget;
}

void schedule_matmul(Group &g, const Limits &L, const MatmulPlan &plan) {
    using Operands = MatmulPlan::Operands;
    int64_t k = contraction_extent(g.stage("acc"));
    int k_chunk = divisor_at_most(k, L.partitions);
    int max_n = max_tile_columns(plan, L);
    // The plan's operand movement when it applies, else the defaults in order (SchedulePlan.h).
    // A row reduction in the epilogue over rows wider than a PSUM bank needs whole rows.
    const Shape &out = g.outputs[0].result.shape;
    MatmulPlan fallback = plan;
    fallback.operands = Operands::Auto;
    if (first_row_node(g) > 0 && out.back() > L.moving_free && plan.operands != Operands::Auto)
        return schedule_matmul(g, L, fallback);
    auto wants = [&](Operands o) { return plan.operands == Operands::Auto || plan.operands == o; };
    if (wants(Operands::WholeRows) && schedule_matmul_row_tiles(g, k_chunk, L, plan))
        return;
    if (wants(Operands::AResident) && schedule_matmul_a_resident(g, k_chunk, L, plan))
        return;
    if (wants(Operands::BResident) && schedule_matmul_resident(g, k_chunk, L, plan))
        return;
    if (plan.operands == Operands::KBlocked && schedule_matmul_k_blocked(g, k_chunk, L, plan))
        return;
    if (plan.operands != Operands::Auto && plan.operands != Operands::Streamed)
        return schedule_matmul(g, L, fallback);
    const Shape &s = g.outputs[0].result.shape;
    Func f = g.outputs[0].func;
    TileLoop tile = tile_matmul_output(f, s, L, max_n);
    std::vector<Func> loaded = place_matmul(g, 0, *g.node, tile, L);
    stage_operands_per_batch(g, f, k, loaded, L);
    place_epilogue(g, tile, static_cast<int>(s.size()));
}

} // namespace nhc::sched::detail
