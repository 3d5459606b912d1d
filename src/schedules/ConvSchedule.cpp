// The default schedule of graph/ConvIm2Col's ConvTaps (DESIGN.md §4): output tiles of up to 128
// output channels (M, on partitions) x output rows of one PSUM bank (N = rows x columns <= 512
// fp32); the zero-padded image staged once per image (or, when it does not fit, once per band of
// output rows: the rows the band's windows read) with its channels on partitions in chunks
// of up to 128 (one DMA per chunk into the interior of a zeroed tile), the weights once with
// their input channels on partitions, chunked alike; per tile, one matmul per kernel tap and
// channel chunk, each contracting the chunk over the partitions and reading a shifted, strided
// window of the staged image, accumulated in PSUM.
// The input crosses HBM once instead of once per tap (im2col). A plan may load the image as
// stored instead, one contiguous run per channel, and copy it into the padded tile on an engine
// (ImagePlan::pad_on_chip).

#include "graph/ConvIm2Col.h"
#include "schedules/MemoryTypes.h"
#include "schedules/ScheduleParts.h"
#include "support/Error.h"

#include <algorithm>

namespace nhc::sched::detail {

using Halide::Func;
using Halide::Var;

namespace {

/** The extent of a window node's staged image along attribute axis `a` (0: rows, 1: columns):
 *  the image with the zeros a spread puts between its elements (ConvTranspose) after the
 *  leading padding, or the span its windows read when that is longer. */
int64_t staged_extent(const Node &n, int64_t kernel, size_t a) {
    int64_t image = n.attr_ints("input_spatial")[a], pad = n.attr_ints("pads_begin")[a];
    int64_t spread = n.has_attr("input_strides") ? n.attr_ints("input_strides")[a] : 1;
    int64_t read = window_extent(n.attr_ints("output_spatial")[a], kernel,
                                 n.attr_ints("strides")[a], n.attr_ints("dilations")[a]);
    return std::max((image - 1) * spread + 1 + pad, read);
}

} // namespace

/** Stages x_pad of a window node (kernel (h, w)) over the whole padded image along the axes
 *  given (0: columns, 1: rows), not only the part its windows read: a stride can leave the image's
 * last columns unread, and a copy of whole rows is one contiguous run per partition where a copy of
 * the rows cut short is one run per row (DMA cost, DmaCost.cpp). */
void cover_image(const Group &g, Func x_pad, const std::vector<int64_t> &kernel,
                 const std::vector<int> &axes) {
    for (int axis : axes) {
        size_t a = static_cast<size_t>(1 - axis); // attributes are (h, w)
        x_pad.bound(var(axis), 0, static_cast<int>(staged_extent(*g.node, kernel[a], a)));
    }
}

bool image_rows_padded(const Group &g) {
    int64_t kw = 0;
    if (g.node->op_type == "PoolTaps") {
        kw = g.node->attr_ints("kernel").at(1); // (kh, kw)
    } else if (g.node->op_type == "ConvTaps" && !g.node->has_attr("packed_rows")) {
        const auto &rvars = g.stage("acc").function().update(0).schedule().rvars(); // (ci, kh, kw)
        kw = rvars[2].extent.as<Halide::Internal::IntImm>()->value;
    } else {
        return false;
    }
    return staged_extent(*g.node, kw, 1) > g.node->attr_ints("input_spatial")[1];
}

void schedule_conv(Group &g, const Limits &L, const ImagePlan &plan) {
    const Shape &s = g.outputs[0].result.shape; // [N, Co, Ho, Wo]
    nhc_assert(s.size() == 4, "ConvTaps output of rank " << s.size());
    Func f = g.outputs[0].func, acc = g.stage("acc"), x_pad = g.stage("x_pad"),
         w_t = g.stage("w_t");
    const auto &rvars = acc.function().update(0).schedule().rvars(); // (ci, kh, kw)
    auto extent = [&](int i) {
        return rvars[size_t(i)].extent.as<Halide::Internal::IntImm>()->value;
    };
    int64_t channels = extent(0);
    int chunk = static_cast<int>(channel_chunk(channels, L.partitions));
    int co_tile = balanced_tile(s[1], L.partitions);
    int wo_tile = balanced_tile(s[3], L.moving_free);
    // Whole output rows per tile when a row fits a PSUM bank, as many as fit (dividing Ho).
    int ho_tile =
        wo_tile < s[3] ? 1 : divisor_at_most(s[2], static_cast<int>(L.moving_free / s[3]));
    // The padded image the output rows of a band read, all channel chunks: staged whole when it
    // fits the budget of a staged image (staged_image_budget), else per band of output rows
    // (a multiple of the tile's rows dividing Ho), the halo rows read by two bands.
    std::vector<int64_t> stride = g.node->attr_ints("strides"),
                         dil = g.node->attr_ints("dilations");
    int64_t row_bytes = window_extent(s[3], extent(2), stride[1], dil[1]) *
                        x_pad.output_types()[0].bytes() * (channels / chunk);
    auto image_bytes = [&](int64_t out_rows) {
        return window_extent(out_rows, extent(1), stride[0], dil[0]) * row_bytes;
    };
    int64_t band = s[2], image_budget = staged_image_budget(L);
    if (image_bytes(band) > image_budget) {
        if (image_bytes(ho_tile) > image_budget)
            ho_tile = 1; // the graph lowering checked that one row's band fits
        band = ho_tile;
        for (int64_t r = ho_tile; r <= s[2]; r += ho_tile)
            if (s[2] % r == 0 && image_bytes(r) <= image_budget)
                band = r;
    }
    Var coo("coo"), coi("coi"), ohb("ohb"), ohr("ohr"), oho("oho"), ohi("ohi"), owo("owo"),
        owi("owi");
    f.split(var(2), coo, coi, co_tile)
        .split(var(1), ohb, ohr, static_cast<int>(band))
        .split(ohr, oho, ohi, ho_tile)
        .split(var(0), owo, owi, wo_tile)
        .reorder(owi, ohi, coi, owo, oho, coo, ohb, var(3));
    TileLoop tile{false, Halide::LoopLevel(f, owo)};
    x_pad.compute_at(f, band < s[2] ? ohb : var(3)).store_in(SBUF);
    cover_image(g, x_pad, {extent(1), extent(2)},
                band < s[2] ? std::vector<int>{0} : std::vector<int>{0, 1});
    g.partition_dim[x_pad.name()] = 2; // (w, h, c, n): the channels
    // The image as stored, where the plan asks and the DMA would write the padded tile row by
    // row: one contiguous run per channel, that x_pad's copy then reads on chip
    // (ImagePlan::pad_on_chip).
    Func x_in = g.stage("x_in");
    bool staged_image = plan.pad_on_chip && image_rows_padded(g);
    if (staged_image) {
        x_in.compute_at(f, band < s[2] ? ohb : var(3)).store_in(SBUF);
        g.partition_dim[x_in.name()] = 2;
    }
    // The weights whole when they fit the budget of a resident operand, else per tile of output
    // channels (the graph lowering checked that one tile's fit: conv_limits), reloaded per band.
    int64_t weight_bytes =
        (channels / chunk) * extent(1) * extent(2) * s[1] * w_t.output_types()[0].bytes();
    if (weight_bytes <= L.resident_budget)
        w_t.compute_root().store_in(SBUF);
    else
        w_t.compute_at(f, coo).store_in(SBUF);
    g.partition_dim[w_t.name()] = 3; // (co, kw, kh, ci): the input channels
    // The input channels on partitions in chunks of up to 128 (ConvIm2Col's channel_chunk, the
    // test the graph lowering passed): the image and the weights staged chunk by chunk, one DMA
    // each, and one matmul per chunk and tap accumulating in PSUM.
    if (chunk < channels) {
        Var cko("cko"), cki("cki");
        x_pad.split(var(2), cko, cki, chunk).unroll(cko);
        if (x_pad.function().has_update_definition())
            x_pad.update().split(var(2), cko, cki, chunk).unroll(cko);
        w_t.split(var(3), cko, cki, chunk).unroll(cko);
        if (staged_image) {
            x_in.split(var(2), cko, cki, chunk).unroll(cko);
            g.partition_split[x_in.name()] = chunk;
        }
        g.partition_split[x_pad.name()] = chunk;
        g.partition_split[w_t.name()] = chunk;
    }
    if (g.node->has_attr("packed_rows")) {
        // Kernel rows packed into the channels (Conv.cpp): zeroed whole, then the image copied one
        // kernel row at a time, each into its block of channels (one DMA), not one per channel.
        int64_t block = g.node->attr_ints("packed_rows").at(4); // channels per kernel row
        nhc_assert(chunk == channels, "packed kernel rows in more than one chunk");
        Var kro("kro"), kri("kri");
        x_pad.update().split(var(2), kro, kri, static_cast<int>(block)).unroll(kro);
    }
    acc.compute_at(tile.level).store_in(PSUM);
    g.partition_dim[acc.name()] = 2; // (ow, oh, co, n): the output channels
    // A chunk of channels innermost (one matmul contracts it), the taps and chunks outermost and
    // unrolled: one matmul instruction per tap and chunk, accumulating into the tile.
    Halide::RVar ci(rvars[0].var), kh(rvars[1].var), kw(rvars[2].var), cio("cio"), cii("cii");
    acc.update().split(ci, cio, cii, chunk);
    acc.update()
        .reorder(cii, var(0), var(1), var(2), kh, kw, cio)
        .unroll(kh)
        .unroll(kw)
        .unroll(cio);
    for (const alg::Stage &st : g.op.stages)
        if (st.role == "bias") {
            // One value per output channel: loaded once per tile of output channels, not once
            // per output tile (a 512-byte DMA each, 151 of the SD UNet's 626 DMAs).
            Func bias = st.func;
            bias.compute_at(f, coo).store_in(SBUF);
            g.partition_dim[st.func.name()] = 0;
        } else if (st.role != "acc" && st.role != "x_pad" && st.role != "w_t" &&
                   st.role != "x_in") {
            place(st.func, tile, SBUF); // the result out of PSUM, epilogues
            g.partition_dim[st.func.name()] = st.func.dimensions() - 1 == 0 ? 0 : 2;
        }
    // What a fused epilogue reads of the output's shape (a residual) has the tile's layout: the
    // output channels (Halide dim 2) on partitions.
    stage_inputs(g, tile, 2);
}

} // namespace nhc::sched::detail

namespace nhc::sched::detail {

// graph/PoolTaps's PoolTaps: output tiles of up to 128 channels (on partitions) x whole output
// rows within the on-chip budget; the padded image staged once per channel tile when it fits the
// budget of a staged image (staged_image_budget), else per band of output rows, each
// band staging the rows its windows read (the halo rows read twice); per tile, one reduction
// over the kernel taps of every window (a max or a sum), or for a depthwise convolution one
// vector instruction per kernel tap (a shifted, strided window of the image times the tap's
// weights, added into the accumulator).
void schedule_pool(Group &g, const Limits &L, const ImagePlan &plan) {
    const Shape &s = g.outputs[0].result.shape; // [N, C, Ho, Wo]
    nhc_assert(s.size() == 4, "PoolTaps output of rank " << s.size());
    Func f = g.outputs[0].func, acc = g.stage("acc"), x_pad = g.stage("x_pad");
    // The accumulator, the result and the reciprocal counts: a quarter of the budget each.
    int64_t row_bytes = s[3] * acc.output_types()[0].bytes();
    int64_t rows = std::min<int64_t>(s[2], std::max<int64_t>(1, L.layout_budget / 4 / row_bytes));
    // The padded image rows (and their bytes) that `out_rows` output rows read.
    std::vector<int64_t> kernel = g.node->attr_ints("kernel"),
                         stride = g.node->attr_ints("strides"),
                         dil = g.node->attr_ints("dilations");
    auto image_bytes = [&](int64_t out_rows, int64_t out_cols) {
        return window_extent(out_rows, kernel[0], stride[0], dil[0]) *
               window_extent(out_cols, kernel[1], stride[1], dil[1]) *
               x_pad.output_types()[0].bytes();
    };
    // Bands of output rows when the padded image does not fit, and bands of output columns too
    // when one output row's rows do not (a 1-D pool over 220,000 elements). Column bands are
    // balanced, the last shifted inwards: a width with no divisor near the band (21,821) would
    // otherwise take thousands of one-column bands.
    int64_t image_budget = staged_image_budget(L), cols = s[3];
    bool banded = image_bytes(s[2], cols) > image_budget;
    while (banded && rows > 1 && image_bytes(rows, cols) > image_budget)
        rows--;
    bool column_banded = image_bytes(rows, cols) > image_budget;
    while (column_banded && cols > 1 && image_bytes(rows, cols) > image_budget)
        cols--;
    Var co("co"), ci("ci"), oho("oho"), ohi("ohi"), owo("owo"), owi("owi");
    f.split(var(2), co, ci, balanced_tile(s[1], L.partitions))
        .split(var(1), oho, ohi, divisor_at_most(s[2], static_cast<int>(rows)));
    if (column_banded)
        f.split(var(0), owo, owi, balanced_tile(s[3], static_cast<int>(cols)))
            .reorder(owi, ohi, ci, owo, oho, co, var(3));
    else
        f.reorder(var(0), ohi, ci, oho, co, var(3));
    Var band = column_banded ? owo : oho;
    TileLoop tile{false, Halide::LoopLevel(f, band)};
    x_pad.compute_at(f, banded ? band : co).store_in(SBUF);
    cover_image(g, x_pad, kernel,
                column_banded ? std::vector<int>{}
                : banded      ? std::vector<int>{0}
                              : std::vector<int>{0, 1});
    g.partition_dim[x_pad.name()] = 2; // (w, h, c, n): the channels
    // The image as stored, copied into x_pad on chip (ImagePlan::pad_on_chip), as ConvTaps'.
    if (plan.pad_on_chip && image_rows_padded(g)) {
        Func x_in = g.stage("x_in");
        x_in.compute_at(f, banded ? band : co).store_in(SBUF);
        g.partition_dim[x_in.name()] = 2;
    }
    acc.compute_at(tile.level).store_in(SBUF);
    g.partition_dim[acc.name()] = 2;
    const auto &rvars = acc.function().update(0).schedule().rvars();
    Halide::RVar kw(rvars[0].var), kh(rvars[1].var);
    if (g.node->attr_string("mode", "max") != "conv")
        // The taps innermost: one tensor_reduce over the window axes of the tile, N cycles for
        // the N elements read, where one max or add per tap costs 2N (a tensor_tensor of two SBUF
        // fp32 tiles, neuroncore.md L301, L306): ResNet-50's 3x3 max pool 50 -> 25 us of DVE.
        acc.update().reorder(kw, kh, var(0), var(1), var(2));
    else
        // A depthwise convolution scales each tap by its weight: one instruction per tap.
        acc.update().reorder(var(0), var(1), var(2), kw, kh).unroll(kw).unroll(kh);
    for (const alg::Stage &st : g.op.stages) {
        if (st.role == "w_t" || st.role == "bias") {
            // A depthwise convolution's weights and bias: per channel tile, channels on partitions.
            Func stage = st.func;
            stage.compute_at(f, co).store_in(SBUF);
            g.partition_dim[st.func.name()] = st.func.dimensions() - 1;
        } else if (st.role != "acc" && st.role != "x_pad" && st.role != "x_in") {
            place(st.func, tile, SBUF); // the reciprocal counts, the result
            g.partition_dim[st.func.name()] = 2;
        }
    }
    stage_inputs(g, tile);
}

} // namespace nhc::sched::detail
