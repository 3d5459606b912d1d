#ifndef NHC_GRAPH_CONVIM2COL_H
#define NHC_GRAPH_CONVIM2COL_H

/** \file
 * Convolutions as matmuls on the PE, in one of two forms.
 *
 * ConvTaps (domain "nhc"), for 1-D and 2-D convolutions whose zero-padded rows that one output
 * row reads fit the SBUF budget with the input channels in chunks of up to a partition count
 * (channel_chunk; the schedule stages the image whole or in bands of output rows): x [N, Ci, H, W]
 * (1-D: H = 1), the weights as [Ci, KH, KW, Co] (permuted at compile time when constant, by a
 * Transpose otherwise), the bias; attributes strides, dilations, pads_begin, output_spatial (2
 * each). Its algorithm (algorithms/Conv.cpp) stages the padded image on chip with the channels on
 * partitions and accumulates, per output tile, one channel-contraction matmul per kernel tap in
 * PSUM, each reading a shifted window of the image: the input crosses HBM once.
 *
 * At -O2 and -O3 a convolution with few input channels may pack its kernel rows into the
 * channels (packs_kernel_rows): a ConvTaps of kernel (1, KW) whose staged image has one block of
 * channels per kernel row (attribute packed_rows).
 *
 * Otherwise (3-D, rows too wide, channel counts with no near-full chunk), im2col:
 * Conv(x [N, Ci, S...], w [Co, Ci, K...], b) becomes
 *   cols = Im2Col(x)              [Ci * prod(K), N * prod(O)]  (domain "nhc": one copy per tap)
 *   y    = MatMul(w viewed [Co, Ci * prod(K)], cols)   [Co, N * prod(O)]
 *   y    = Add(y, b viewed [Co, 1])                     (when there is a bias)
 * and the result viewed as [Co, N, O...], then transposed to [N, Co, O...] (a view when N = 1).
 * The contraction runs over channels and kernel taps with K on partitions; im2col's rows are the
 * output positions of one tap, so the copy moves rows of the input (the code generator fills the
 * padding with zeros). A depthwise convolution is graph/PoolTaps's PoolTaps of mode "conv"; any
 * other grouped convolution is one convolution per group on Slices of its input, weights and
 * bias, concatenated; auto_pad SAME/VALID resolve to pads.
 */

#include "graph/Graph.h"
#include "graph/GraphRewriter.h"

#include <functional>
#include <map>

namespace nhc {

/** A convolution's geometry from its attributes and shapes (per spatial axis). */
struct ConvGeometry {
    std::vector<int64_t> kernel, stride, dilation, pad_begin, pad_end, out;
};

/** The geometry of Conv `node`; NHC_EALG001 naming the node for forms not supported yet. */
ConvGeometry conv_geometry(const Node &node, const Shape &x, const Shape &w);

/** Along one axis, the extent of the padded input that `out` outputs of a window read. */
int64_t window_extent(int64_t out, int64_t kernel, int64_t stride, int64_t dilation);
/** The bytes per partition (one channel, fp32) of x's image padded so that every kernel tap of
 *  the `out` positions lands inside it: what ConvTaps and PoolTaps stage. */
int64_t padded_image_bytes(const Shape &x, const ConvGeometry &geo,
                           const std::vector<int64_t> &out);
/** padded_image_bytes of the rows that one row of the `out` positions reads (for 1-D, the whole
 *  row): the smallest band of output rows ConvTaps and PoolTaps stage (schedules/ConvSchedule). */
int64_t row_band_bytes(const Shape &x, const ConvGeometry &geo, const std::vector<int64_t> &out);
/** A 1-D form's per-axis values as 2-D ones (`fill` for the added first axis). */
std::vector<int64_t> as_2d(std::vector<int64_t> v, int64_t fill);

/** Adds `op` (domain "nhc": ConvTaps, PoolTaps) of node `n`'s input 0 viewed as [N, C, H, W] (a
 *  1-D input as H = 1) followed by `operands`, with `attrs` and input_spatial ([H, W]), writing
 *  `n`'s output 0 (through a view back from [N, C, 1, W] for 1-D). */
void add_window_node(const Graph &g, GraphRewriter &b, const Node &n, const char *op,
                     const std::vector<std::string> &operands,
                     const std::map<std::string, AttrValue> &attrs);

/** What packing a convolution's kernel rows into its channels (packs_kernel_rows) trades:
 *  matmuls the PE no longer issues against image bytes the DMA engines stage in addition. */
struct RowPacking {
    int64_t taps_saved = 0;      ///< matmuls fewer per output tile: (KH - 1) * KW
    int64_t output_columns = 0;  ///< N * Ho * Wo, the moving columns of all tiles
    int64_t output_channels = 0; ///< Co, the stationary side of all tiles
    int64_t channels = 0;        ///< Ci, the partitions an unpacked matmul contracts
    int64_t kernel_rows = 0;     ///< KH: the packed image has KH blocks of channels
    int64_t block = 0;           ///< channels per block: Ci, or Ci rounded up to align blocks
    int64_t unpacked_bytes = 0;  ///< image bytes staged per channel, unpacked
    int64_t packed_bytes = 0;    ///< image bytes staged per packed channel
    int64_t row_bytes = 0;       ///< the contiguous rows the staging copies move
};

/** What decides between the two forms, from the target: input channels on partitions, the
 *  padded image of one channel per partition (bytes), and the weights of one tile of output
 *  channels per partition (bytes). */
struct ConvLimits {
    int64_t channels = 0, image_bytes = 0, weight_bytes = 0;
    /** Partitions one DMA engine serves: a packed image's blocks start on multiples of it, so
     *  that each kernel row's copy runs on engines of its own (1: dense blocks). */
    int64_t dma_partition_group = 1;
    /** Whether packing pays, from the target's cost formulas (schedules/DefaultSchedule's
     *  conv_limits); unset, kernel rows are never packed: -O1 keeps the per-tap form. */
    std::function<bool(const RowPacking &)> rows_pack_pays;
};

/** Whether elementwise nodes after a ConvTaps of `out_channels` output channels join its group,
 *  computed per output tile with the channels on partitions, rather than on their own over
 *  [N*C*H, W] rows (graph/FlattenElementwise): when the channels fill at least half the
 *  partitions, as chunked_image_fits asks of input channels. The tile then spares the result a
 *  round trip through HBM in rows of W elements (ResNet-50 at 224²: 4,894.8 -> 2,526.7 us at
 *  -O1, bench/README.md); below, the activation on few partitions costs more than the trip
 *  (dev_unet's 16-channel convolutions: 922.4 -> 1,128.8 us). */
bool conv_epilogue_joins(int64_t out_channels, const ConvLimits &limits);

/** The input channels ConvTaps contracts per matmul (its schedule splits the channels on
 *  partitions into chunks of this many): the largest divisor of `channels` within `partitions`,
 *  so that every chunk is full. */
int64_t channel_chunk(int64_t channels, int64_t partitions);

/** Whether ConvTaps can stage `channels` channels of a padded image of `image_bytes` per channel:
 *  in chunks of channel_chunk that use at least half the partitions (or all the channels), all
 *  chunks within the budget of one partition. */
bool chunked_image_fits(int64_t channels, int64_t image_bytes, const ConvLimits &limits);

/** Whether the weights ConvTaps stages for one tile of output channels (up to a partition count)
 *  fit their budget: `channels` / channel_chunk rows of `taps` x the tile's fp32 weights per
 *  partition. A patchify convolution (ViT's 16 x 16 taps over 3 channels) does not: im2col
 *  contracts its channels and taps together in K instead of 256 matmuls of K = 3. */
bool tap_weights_fit(int64_t channels, int64_t taps, int64_t out_channels,
                     const ConvLimits &limits);

/** The channels of one kernel row's block in a packed image of `channels` input channels and
 *  `kernel_rows` rows: the channels rounded up to ConvLimits::dma_partition_group when the blocks
 *  still fit the partitions (the channels past the input's are zeros), else the channels. */
int64_t packed_block(int64_t channels, int64_t kernel_rows, const ConvLimits &limits);

/** Whether a 2-D convolution of input `x` and `out_channels` output channels is computed with its
 *  kernel rows packed into the channels, in blocks of `block` channels (packed_block, or the
 *  input channels when the weights are a runtime input): a ConvTaps of kernel (1, KW) whose
 *  staged image holds, for each kernel row and channel, the input rows that kernel row reads,
 *  one per output row.
 *  Each output tile then takes KW matmuls contracting KH blocks of partitions instead of KH * KW
 *  contracting Ci, for about KH / stride times the image's bytes staged. When the blocks fit the
 *  partitions and the cost formulas say the matmuls saved outweigh the staging added
 *  (ConvLimits::rows_pack_pays): ResNet-50's first convolution (3 channels, 7 x 7, stride 2)
 *  contracts 7 blocks of 8 partitions (3 channels and 5 zeros each) per matmul instead of 3. */
bool packs_kernel_rows(const Shape &x, const ConvGeometry &geo, int64_t out_channels, int64_t block,
                       const ConvLimits &limits);

/** Rewrites every Conv; returns how many. */
int lower_convs_to_matmuls(Graph &g, const ConvLimits &limits);

} // namespace nhc

#endif
