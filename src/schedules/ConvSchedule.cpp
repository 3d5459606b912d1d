// The default schedule of graph/ConvIm2Col's ConvTaps (DESIGN.md §4): output tiles of up to 128
// output channels (M, on partitions) x output rows of one PSUM bank (N = rows x columns <= 512
// fp32); the zero-padded image staged once per image with its channels on partitions (one DMA
// of the image into the interior of a zeroed tile), the weights once with their input channels
// on partitions; per tile, one matmul per kernel tap, each contracting the channels over the
// partitions and reading a shifted, strided window of the staged image, accumulated in PSUM.
// The input crosses HBM once instead of once per tap (im2col).

#include "schedules/MemoryTypes.h"
#include "schedules/ScheduleParts.h"
#include "support/Error.h"

#include <algorithm>

namespace nhc::sched::detail {

using Halide::Func;
using Halide::Var;

void schedule_conv(Group &g, const Limits &L) {
    const Shape &s = g.outputs[0].result.shape; // [N, Co, Ho, Wo]
    nhc_assert(s.size() == 4, "ConvTaps output of rank " << s.size());
    Func f = g.outputs[0].func, acc = g.stage("acc"), x_pad = g.stage("x_pad"),
         w_t = g.stage("w_t");
    int co_tile = balanced_tile(s[1], L.partitions);
    int wo_tile = balanced_tile(s[3], L.moving_free);
    // Whole output rows per tile when a row fits a PSUM bank, as many as fit (dividing Ho).
    int ho_tile =
        wo_tile < s[3] ? 1 : divisor_at_most(s[2], static_cast<int>(L.moving_free / s[3]));
    Var coo("coo"), coi("coi"), oho("oho"), ohi("ohi"), owo("owo"), owi("owi");
    f.split(var(2), coo, coi, co_tile)
        .split(var(1), oho, ohi, ho_tile)
        .split(var(0), owo, owi, wo_tile)
        .reorder(owi, ohi, coi, owo, oho, coo, var(3));
    TileLoop tile{false, Halide::LoopLevel(f, owo)};
    x_pad.compute_at(f, var(3)).store_in(SBUF);
    g.partition_dim[x_pad.name()] = 2; // (w, h, c, n): the channels
    w_t.compute_root().store_in(SBUF);
    g.partition_dim[w_t.name()] = 3; // (co, kw, kh, ci): the input channels
    acc.compute_at(tile.level).store_in(PSUM);
    g.partition_dim[acc.name()] = 2; // (ow, oh, co, n): the output channels
    // The channels innermost (one matmul contracts them), the taps outermost and unrolled: one
    // matmul instruction per tap, accumulating into the tile.
    const auto &rvars = acc.function().update(0).schedule().rvars();
    Halide::RVar ci(rvars[0].var), kh(rvars[1].var), kw(rvars[2].var);
    acc.update().reorder(ci, var(0), var(1), var(2), kh, kw).unroll(kh).unroll(kw);
    for (const alg::Stage &st : g.op.stages)
        if (st.role != "acc" && st.role != "x_pad" && st.role != "w_t") {
            place(st.func, tile, SBUF); // the bias column, the result out of PSUM
            g.partition_dim[st.func.name()] = st.func.dimensions() - 1 == 0 ? 0 : 2;
        }
    stage_inputs(g, tile);
}

} // namespace nhc::sched::detail

namespace nhc::sched::detail {

// graph/PoolTaps's PoolTaps: output tiles of up to 128 channels (on partitions) x whole output
// rows within the on-chip budget; the padded image staged once per channel tile; per tile, one
// vector instruction per kernel tap (a max or an add of a shifted, strided window of the image
// into the accumulator).
void schedule_pool(Group &g, const Limits &L) {
    const Shape &s = g.outputs[0].result.shape; // [N, C, Ho, Wo]
    nhc_assert(s.size() == 4, "PoolTaps output of rank " << s.size());
    Func f = g.outputs[0].func, acc = g.stage("acc"), x_pad = g.stage("x_pad");
    // The accumulator, the result and the reciprocal counts: a quarter of the budget each.
    int64_t row_bytes = s[3] * acc.output_types()[0].bytes();
    int64_t rows = std::max<int64_t>(1, L.layout_budget / 4 / row_bytes);
    Var co("co"), ci("ci"), oho("oho"), ohi("ohi");
    f.split(var(2), co, ci, balanced_tile(s[1], L.partitions))
        .split(var(1), oho, ohi,
               divisor_at_most(s[2], static_cast<int>(std::min<int64_t>(rows, s[2]))))
        .reorder(var(0), ohi, ci, oho, co, var(3));
    TileLoop tile{false, Halide::LoopLevel(f, oho)};
    x_pad.compute_at(f, co).store_in(SBUF);
    g.partition_dim[x_pad.name()] = 2; // (w, h, c, n): the channels
    acc.compute_at(tile.level).store_in(SBUF);
    g.partition_dim[acc.name()] = 2;
    const auto &rvars = acc.function().update(0).schedule().rvars();
    Halide::RVar kw(rvars[0].var), kh(rvars[1].var);
    acc.update().reorder(var(0), var(1), var(2), kw, kh).unroll(kw).unroll(kh);
    for (const alg::Stage &st : g.op.stages)
        if (st.role != "acc" && st.role != "x_pad") {
            place(st.func, tile, SBUF); // the reciprocal counts, the result
            g.partition_dim[st.func.name()] = 2;
        }
    stage_inputs(g, tile);
}

} // namespace nhc::sched::detail
