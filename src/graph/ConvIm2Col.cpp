#include "graph/ConvIm2Col.h"
#include "graph/PoolTaps.h"

#include "graph/GraphRewriter.h"

#include "support/Error.h"

#include <algorithm>
#include <memory>

namespace nhc {

ConvGeometry conv_geometry(const Node &node, const Shape &x, const Shape &w) {
    int spatial = static_cast<int>(x.size()) - 2;
    auto refuse = [&](const std::string &what) {
        user_error("NHC_EALG001", node.describe(), ": ", what);
    };
    if (spatial < 1 || w.size() != x.size())
        refuse("expected input and weight of rank 3 or more, found " + shape_str(x) + " and " +
               shape_str(w));
    int64_t group = node.attr_int("group", 1);
    if (group < 1 || x[1] % group != 0 || w[0] % group != 0 || w[1] * group != x[1])
        refuse("group " + std::to_string(group) + " does not divide input channels " +
               std::to_string(x[1]) + " into weight channels " + std::to_string(w[1]));
    std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
        auto_pad != "SAME_LOWER")
        refuse("auto_pad " + auto_pad + " is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
    ConvGeometry g;
    g.kernel.assign(w.begin() + 2, w.end());
    g.stride = node.attr_ints("strides");
    g.dilation = node.attr_ints("dilations");
    std::vector<int64_t> pads = node.attr_ints("pads");
    // Absent attributes take their defaults below; present ones must have one value per spatial
    // axis (two for pads): ONNX 1.12's inference reports other lengths only as a swallowed node
    // error, and a short `pads` read past its end (the front-end fuzz target's finding 11).
    auto check_length = [&](const char *name, const std::vector<int64_t> &v, size_t want) {
        if (!v.empty() && v.size() != want)
            refuse(std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
                   " values; expected " + std::to_string(want) + " for " + std::to_string(spatial) +
                   " spatial axes");
    };
    check_length("strides", g.stride, size_t(spatial));
    check_length("dilations", g.dilation, size_t(spatial));
    check_length("pads", pads, 2 * size_t(spatial));
    for (int64_t v : g.stride)
        if (v < 1)
            refuse("a stride of " + std::to_string(v) + "; strides are at least 1");
    for (int64_t v : g.dilation)
        if (v < 1)
            refuse("a dilation of " + std::to_string(v) + "; dilations are at least 1");
    g.stride.resize(static_cast<size_t>(spatial), 1);
    g.dilation.resize(static_cast<size_t>(spatial), 1);
    pads.resize(static_cast<size_t>(2 * spatial), 0);
    for (size_t i = 0; i < static_cast<size_t>(spatial); i++) {
        int64_t size = x[i + 2], span = (g.kernel[i] - 1) * g.dilation[i] + 1;
        if (auto_pad == "VALID") {
            pads[i] = pads[i + static_cast<size_t>(spatial)] = 0;
        } else if (auto_pad != "NOTSET") { // SAME: ceil(size / stride) outputs
            int64_t out = (size + g.stride[i] - 1) / g.stride[i];
            int64_t total = std::max<int64_t>((out - 1) * g.stride[i] + span - size, 0);
            pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            pads[i + static_cast<size_t>(spatial)] = total - pads[i];
        }
        g.pad_begin.push_back(pads[i]);
        g.pad_end.push_back(pads[i + static_cast<size_t>(spatial)]);
        int64_t padded = size + pads[i] + pads[i + static_cast<size_t>(spatial)];
        if (padded < span)
            refuse("the kernel is larger than the padded input");
        g.out.push_back((padded - span) / g.stride[i] + 1);
    }
    return g;
}

int64_t window_extent(int64_t out, int64_t kernel, int64_t stride, int64_t dilation) {
    return (out - 1) * stride + (kernel - 1) * dilation + 1;
}

int64_t padded_image_bytes(const Shape &x, const ConvGeometry &geo,
                           const std::vector<int64_t> &out) {
    int64_t bytes = dtype_size(DType::Float32);
    for (size_t i = 0; i < out.size(); i++)
        bytes *= std::max(x[i + 2] + geo.pad_begin[i],
                          window_extent(out[i], geo.kernel[i], geo.stride[i], geo.dilation[i]));
    return bytes;
}

int64_t row_band_bytes(const Shape &x, const ConvGeometry &geo, const std::vector<int64_t> &out) {
    Shape band = x;
    std::vector<int64_t> one_row = out;
    if (out.size() == 2) // the band's height is the window's, not the image's
        band[2] = one_row[0] = 1;
    return padded_image_bytes(band, geo, one_row);
}

int64_t channel_chunk(int64_t channels, int64_t partitions) {
    for (int64_t d = std::min(channels, partitions); d > 1; d--)
        if (channels % d == 0)
            return d;
    return 1;
}

bool chunked_image_fits(int64_t channels, int64_t image_bytes, const ConvLimits &limits) {
    int64_t chunk = channel_chunk(channels, limits.channels);
    // A chunk of fewer than half the partitions leaves the PE's rows mostly idle (a prime
    // channel count): im2col contracts the channels and taps together instead.
    return 2 * chunk >= std::min(channels, limits.channels) &&
           channels / chunk * image_bytes <= limits.image_bytes;
}

bool conv_epilogue_joins(int64_t out_channels, const ConvLimits &limits) {
    return 2 * out_channels >= limits.channels;
}

int64_t packed_block(int64_t channels, int64_t kernel_rows, const ConvLimits &limits) {
    int64_t group = std::max<int64_t>(1, limits.dma_partition_group);
    int64_t aligned = (channels + group - 1) / group * group;
    return aligned * kernel_rows <= limits.channels ? aligned : channels;
}

bool packs_kernel_rows(const Shape &x, const ConvGeometry &geo, int64_t out_channels, int64_t block,
                       const ConvLimits &limits) {
    if (!limits.rows_pack_pays || geo.out.size() != 2 || geo.kernel[0] < 2 ||
        block * geo.kernel[0] > limits.channels)
        return false;
    int64_t row_bytes = x[3] * dtype_size(DType::Float32);
    RowPacking p;
    p.taps_saved = (geo.kernel[0] - 1) * geo.kernel[1];
    p.output_columns = x[0] * geo.out[0] * geo.out[1];
    p.output_channels = out_channels;
    p.channels = x[1];
    p.kernel_rows = geo.kernel[0];
    p.block = block;
    p.unpacked_bytes =
        x[0] * row_bytes *
        std::min(x[2], window_extent(geo.out[0], geo.kernel[0], geo.stride[0], geo.dilation[0]));
    p.packed_bytes = x[0] * row_bytes * geo.out[0];
    p.row_bytes = row_bytes;
    return limits.rows_pack_pays(p);
}

bool tap_weights_fit(int64_t channels, int64_t taps, int64_t out_channels,
                     const ConvLimits &limits) {
    int64_t chunks = channels / channel_chunk(channels, limits.channels);
    int64_t tile = std::min(out_channels, limits.channels);
    return chunks * taps * tile * dtype_size(DType::Float32) <= limits.weight_bytes;
}

std::vector<int64_t> as_2d(std::vector<int64_t> v, int64_t fill) {
    if (v.size() == 1)
        v.insert(v.begin(), fill);
    return v;
}

void add_window_node(const Graph &g, GraphRewriter &b, const Node &n, const char *op,
                     const std::vector<std::string> &operands,
                     const std::map<std::string, AttrValue> &attrs) {
    Shape x = g.value(n.inputs[0]).shape, y = g.value(n.outputs[0]).shape;
    bool one_d = x.size() == 3;
    std::vector<std::string> inputs = {one_d ? b.reshape(n.inputs[0], {x[0], x[1], 1, x[2]})
                                             : n.inputs[0]};
    inputs.insert(inputs.end(), operands.begin(), operands.end());
    std::string y4 =
        one_d ? b.value(g.value(n.outputs[0]).dtype, {y[0], y[1], 1, y[2]}) : n.outputs[0];
    Node &node = b.add(op, inputs, {y4});
    node.domain = "nhc";
    node.attrs = attrs;
    // The image's own extent, for schedules that stage it whole (ConvSchedule's cover_image).
    node.attrs["input_spatial"] =
        one_d ? std::vector<int64_t>{1, x[2]} : std::vector<int64_t>{x[2], x[3]};
    if (one_d)
        b.reshape(y4, y, n.outputs[0]);
}

namespace {

/** `v` with `shape`: a constant's copy or a Reshape view, written into `out_name` if given. */
std::string view(GraphRewriter &b, const std::string &v, const Shape &shape,
                 const std::string &out_name = "") {
    return out_name.empty() ? b.flattened(v, shape) : b.reshape(v, shape, out_name);
}

void lower_group_conv(Graph &g, const Node &n, const ConvGeometry &geo, const ConvLimits &lim,
                      std::vector<Node> &out);

/** w [Co, Ci, K...] as [Ci, KH, KW, Co] (a 1-D kernel as KH = 1): the contraction axis outermost
 *  and the output channels contiguous, so that each tap's [Ci, Co] block loads in rows. */
std::string taps_weights(Graph &g, GraphRewriter &b, const std::string &w_name, int64_t kh,
                         int64_t kw) {
    const Value &w = g.value(w_name);
    int64_t co = w.shape[0], ci = w.shape[1];
    Shape taps_shape = {ci, kh, kw, co};
    if (!w.is_constant())
        return b.transpose(b.reshape(w_name, {co, ci, kh, kw}), {1, 2, 3, 0});
    auto t = std::make_shared<HostTensor>(w.dtype, taps_shape);
    for (int64_t o = 0; o < co; o++)
        for (int64_t i = 0; i < ci; i++)
            for (int64_t k = 0; k < kh * kw; k++)
                t->set_f64((i * kh * kw + k) * co + o,
                           w.constant->get_f64((o * ci + i) * kh * kw + k));
    return b.constant(t);
}

/** A 1-D or 2-D convolution whose padded rows of one output row fit the budget in channel
 *  chunks, as ConvTaps (graph/ConvIm2Col.h); the 1-D form as a 2-D one of height 1. */
bool lower_conv_taps(Graph &g, const Node &n, const ConvGeometry &geo, const ConvLimits &lim,
                     std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]);
    size_t sp = geo.out.size();
    if (sp > 2)
        return false;
    // The schedule stages the image in bands of output rows when it does not fit whole
    // (schedules/ConvSchedule): the rows one output row reads must fit.
    if (!chunked_image_fits(x.shape[1], row_band_bytes(x.shape, geo, geo.out), lim) ||
        !tap_weights_fit(x.shape[1], shape_numel(geo.kernel), g.value(n.inputs[1]).shape[0], lim))
        return false;
    GraphRewriter b(g, n, "__conv_taps", out);
    std::vector<int64_t> kernel = as_2d(geo.kernel, 1);
    std::vector<std::string> operands = {taps_weights(g, b, n.inputs[1], kernel[0], kernel[1])};
    if (n.inputs.size() > 2 && !n.inputs[2].empty())
        operands.push_back(n.inputs[2]);
    add_window_node(g, b, n, "ConvTaps", operands,
                    {{"strides", as_2d(geo.stride, 1)},
                     {"dilations", as_2d(geo.dilation, 1)},
                     {"pads_begin", as_2d(geo.pad_begin, 0)},
                     {"output_spatial", as_2d(geo.out, 1)}});
    return true;
}

/** A 2-D convolution whose kernel rows pack into its channels (packs_kernel_rows) as a ConvTaps
 *  of kernel (1, KW) over the same input, with attribute packed_rows = (KH, row stride, row
 *  dilation, row padding, block): its staged image has KH blocks of `block` channels
 * (packed_block), channel kh * block + c holding the input rows kernel row kh reads of channel c,
 * one row per output row, and zeros past Ci; the weights as [KH * block, 1, KW, Co] in that order.
 * False, adding nothing, when either form would not be a ConvTaps. */
bool lower_conv_rows_packed(Graph &g, const Node &n, const ConvGeometry &geo, const ConvLimits &lim,
                            std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
    if (geo.out.size() != 2)
        return false;
    int64_t ci = x.shape[1], co = w.shape[0], kh = geo.kernel[0], kw = geo.kernel[1];
    // A runtime weight is permuted by a Transpose, which cannot add the zero channels of
    // aligned blocks: its blocks are dense.
    int64_t block = w.is_constant() ? packed_block(ci, kh, lim) : ci;
    if (!packs_kernel_rows(x.shape, geo, co, block, lim))
        return false;
    ConvGeometry rows = geo;
    rows.kernel[0] = rows.stride[0] = rows.dilation[0] = 1;
    rows.pad_begin[0] = rows.pad_end[0] = 0;
    Shape packed_image = {x.shape[0], block * kh, geo.out[0], x.shape[3]};
    // A constant weight is permuted at compile time, so packing may stand in for a per-tap form
    // that does not fit (ViT's patch embedding: 256 taps of 768 outputs, else a patches copy of
    // 64-byte runs); a runtime weight's permute is a Transpose at run time, which only pays
    // where the per-tap form fits too.
    bool per_tap_fits = chunked_image_fits(ci, row_band_bytes(x.shape, geo, geo.out), lim) &&
                        tap_weights_fit(ci, kh * kw, co, lim);
    if ((!w.is_constant() && !per_tap_fits) ||
        !chunked_image_fits(block * kh, row_band_bytes(packed_image, rows, rows.out), lim) ||
        !tap_weights_fit(block * kh, kw, co, lim))
        return false;
    GraphRewriter b(g, n, "__conv_rows", out);
    std::string weights;
    if (w.is_constant()) { // w [Co, Ci, KH, KW] as [KH * block, 1, KW, Co], zeros past Ci
        auto t = std::make_shared<HostTensor>(w.dtype, Shape{kh * block, 1, kw, co});
        for (int64_t o = 0; o < co; o++)
            for (int64_t c = 0; c < ci; c++)
                for (int64_t r = 0; r < kh; r++)
                    for (int64_t k = 0; k < kw; k++)
                        t->set_f64(((r * block + c) * kw + k) * co + o,
                                   w.constant->get_f64(((o * ci + c) * kh + r) * kw + k));
        weights = b.constant(t);
    } else {
        weights = b.reshape(b.transpose(n.inputs[1], {2, 1, 3, 0}), {kh * ci, 1, kw, co});
    }
    std::vector<std::string> operands = {weights};
    if (n.inputs.size() > 2 && !n.inputs[2].empty())
        operands.push_back(n.inputs[2]);
    add_window_node(g, b, n, "ConvTaps", operands,
                    {{"strides", rows.stride},
                     {"dilations", rows.dilation},
                     {"pads_begin", rows.pad_begin},
                     {"output_spatial", geo.out},
                     {"packed_rows", std::vector<int64_t>{kh, geo.stride[0], geo.dilation[0],
                                                          geo.pad_begin[0], block}}});
    // The staged image is the packed one: one row per output row.
    out.back().attrs["input_spatial"] = std::vector<int64_t>{geo.out[0], x.shape[3]};
    return true;
}

/** Whether the windows tile the input exactly: stride = kernel, no padding or dilation, every
 *  input element in one window (ViT's 16 x 16 patch embedding). */
bool is_patchify(const Shape &x, const ConvGeometry &geo) {
    for (size_t a = 0; a < geo.out.size(); a++)
        if (geo.stride[a] != geo.kernel[a] || geo.dilation[a] != 1 || geo.pad_begin[a] != 0 ||
            geo.pad_end[a] != 0 || geo.out[a] * geo.kernel[a] != x[a + 2])
            return false;
    return true;
}

/** The patches [N * prod(O), C * prod(K)] of a patchify convolution, a rearrangement of x:
 *  x [N, C, O1, K1, O2, K2] -> [N, O1, O2, C, K1, K2]. It moves the kernel's rows (K2
 *  contiguous elements) at a time, where Im2Col's copy per tap moves one element per window
 *  (4-byte rows). */
std::string patches_of(const Graph &g, GraphRewriter &b, const std::string &x,
                       const ConvGeometry &geo) {
    const Shape &xs = g.value(x).shape;
    size_t sp = geo.out.size();
    Shape split = {xs[0], xs[1]};
    std::vector<int64_t> perm = {0};
    for (size_t a = 0; a < sp; a++) {
        split.push_back(geo.out[a]);
        split.push_back(geo.kernel[a]);
        perm.push_back(static_cast<int64_t>(2 + 2 * a));
    }
    perm.push_back(1);
    for (size_t a = 0; a < sp; a++)
        perm.push_back(static_cast<int64_t>(3 + 2 * a));
    int64_t k = xs[1] * shape_numel(geo.kernel), m = xs[0] * shape_numel(geo.out);
    return b.reshape(b.transpose(b.reshape(x, split), perm), {m, k});
}

/** Whether `value` [N, C, O...] is read only through Reshapes to [N, C, prod(O)] by a Transpose
 *  to [N, prod(O), C] (ViT's `flatten(2).transpose(1, 2)`): then it is best computed with its
 *  channels last, and the Transpose back to [N, C, O...] cancels the model's
 *  (graph/CancelTransposes). */
bool read_channels_last(const Graph &g, std::string value) {
    const Shape &s = g.value(value).shape;
    Shape flat = {s[0], s[1], shape_numel(Shape(s.begin() + 2, s.end()))};
    for (;;) {
        const Node *reader = nullptr;
        int readers = 0;
        for (const Node &r : g.nodes)
            for (const std::string &in : r.inputs)
                if (in == value) {
                    reader = &r;
                    readers++;
                }
        if (readers != 1 || !reader->domain.empty() ||
            std::find(g.outputs.begin(), g.outputs.end(), value) != g.outputs.end())
            return false;
        if (reader->op_type == "Transpose")
            return g.value(value).shape == flat &&
                   reader->attr_ints("perm") == std::vector<int64_t>{0, 2, 1};
        if (reader->op_type != "Reshape" || reader->inputs[0] != value)
            return false;
        value = reader->outputs[0];
    }
}

/** A patchify convolution computed channels last: y [N * P, Co] = patches x w^T (+ bias), then
 *  transposed to [N, Co, P] and viewed as the convolution's output. */
void lower_patchify_channels_last(const Graph &g, GraphRewriter &b, const Node &n,
                                  const ConvGeometry &geo) {
    const Value &x = g.value(n.inputs[0]);
    int64_t co = g.value(n.inputs[1]).shape[0], k = x.shape[1] * shape_numel(geo.kernel),
            positions = shape_numel(geo.out), m = x.shape[0] * positions;
    std::string y = b.value(x.dtype, {m, co});
    b.add("MatMul",
          {patches_of(g, b, n.inputs[0], geo), b.transpose(view(b, n.inputs[1], {co, k}), {1, 0})},
          {y});
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        std::string biased = b.value(x.dtype, {m, co});
        b.add("Add", {y, n.inputs[2]}, {biased});
        y = biased;
    }
    std::string channels_first = b.transpose(view(b, y, {x.shape[0], positions, co}), {0, 2, 1});
    view(b, channels_first, g.value(n.outputs[0]).shape, n.outputs[0]);
}

void lower_conv(Graph &g, const Node &n, const ConvLimits &lim, std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
    ConvGeometry geo = conv_geometry(n, x.shape, w.shape);
    if (n.attr_int("group", 1) > 1) {
        if (!lower_depthwise_conv(g, n, geo, lim, out))
            lower_group_conv(g, n, geo, lim, out);
        return;
    }
    if (lower_conv_rows_packed(g, n, geo, lim, out) || lower_conv_taps(g, n, geo, lim, out))
        return;
    int64_t batch = x.shape[0], co = w.shape[0], k = x.shape[1] * shape_numel(geo.kernel),
            m = batch * shape_numel(geo.out);
    GraphRewriter b(g, n, "__im2col", out);
    bool patchify = is_patchify(x.shape, geo);
    if (patchify && read_channels_last(g, n.outputs[0])) {
        lower_patchify_channels_last(g, b, n, geo);
        return;
    }
    std::string cols;
    if (patchify) // the columns as the patches transposed, a Transpose the MatMul folds
        cols = b.transpose(patches_of(g, b, n.inputs[0], geo), {1, 0});
    else {
        cols = b.value(x.dtype, {k, m});
        Node &im2col = b.add("Im2Col", {n.inputs[0]}, {cols});
        im2col.domain = "nhc";
        im2col.attrs["kernel_shape"] = geo.kernel;
        im2col.attrs["strides"] = geo.stride;
        im2col.attrs["dilations"] = geo.dilation;
        im2col.attrs["pads_begin"] = geo.pad_begin;
        im2col.attrs["output_spatial"] = geo.out;
    }
    std::string y = b.value(x.dtype, {co, m});
    b.add("MatMul", {view(b, n.inputs[1], {co, k}), cols}, {y});
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        std::string biased = b.value(x.dtype, {co, m});
        b.add("Add", {y, view(b, n.inputs[2], {co, 1})}, {biased});
        y = biased;
    }
    const Shape &result = g.value(n.outputs[0]).shape;
    if (batch == 1) { // [Co, 1, O...] and [1, Co, O...] are the same bytes
        view(b, y, result, n.outputs[0]);
        return;
    }
    Shape grouped = {co, batch};
    grouped.insert(grouped.end(), geo.out.begin(), geo.out.end());
    std::vector<int64_t> perm = {1, 0};
    for (size_t i = 0; i < geo.out.size(); i++)
        perm.push_back(static_cast<int64_t>(i) + 2);
    Node &t = b.add("Transpose", {view(b, y, grouped)}, {n.outputs[0]});
    t.attrs["perm"] = perm;
}

// Grouped (and depthwise) convolutions: one convolution per group on its slice of the input
// channels and of the weights and bias, the results concatenated along the channels.
void lower_group_conv(Graph &g, const Node &n, const ConvGeometry &geo, const ConvLimits &lim,
                      std::vector<Node> &out) {
    int64_t group = n.attr_int("group", 1);
    const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
    int64_t ci = x.shape[1] / group, co = w.shape[0] / group;
    GraphRewriter b(g, n, "__im2col", out);
    std::vector<std::string> parts;
    for (int64_t i = 0; i < group; i++) {
        Node one = n;
        one.name = n.name + "__group" + std::to_string(i);
        one.attrs["group"] = int64_t(1);
        one.attrs.erase("auto_pad"); // the pads below are the resolved ones
        std::vector<int64_t> pads = geo.pad_begin;
        for (size_t a = 0; a < geo.out.size(); a++) // end pads that give the same output size
            pads.push_back((geo.out[a] - 1) * geo.stride[a] +
                           (geo.kernel[a] - 1) * geo.dilation[a] + 1 - x.shape[a + 2] -
                           geo.pad_begin[a]);
        one.attrs["pads"] = pads;
        one.inputs[0] = b.slice(n.inputs[0], 1, i * ci, (i + 1) * ci);
        one.inputs[1] = b.slice(n.inputs[1], 0, i * co, (i + 1) * co);
        if (n.inputs.size() > 2 && !n.inputs[2].empty())
            one.inputs[2] = b.slice(n.inputs[2], 0, i * co, (i + 1) * co);
        Shape part_shape = g.value(n.outputs[0]).shape;
        part_shape[1] = co;
        one.outputs = {b.value(x.dtype, part_shape)};
        parts.push_back(one.outputs[0]);
        lower_conv(g, one, lim, out);
    }
    b.concat(parts, 1, n.outputs[0]);
}

} // namespace

int lower_convs_to_matmuls(Graph &g, const ConvLimits &limits) {
    return rewrite_each(g, "Conv", [&](Graph &graph, const Node &n, std::vector<Node> &out) {
        lower_conv(graph, n, limits, out);
    });
}

} // namespace nhc
