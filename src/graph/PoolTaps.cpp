#include "graph/PoolTaps.h"

#include "graph/GraphRewriter.h"
#include "support/Error.h"

#include <algorithm>

namespace nhc {

namespace {

/** Per output position along one axis: how many kernel taps land in [lo, hi). */
std::vector<int64_t> taps_inside(int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                                 int64_t pad_begin, int64_t lo, int64_t hi) {
    std::vector<int64_t> count(static_cast<size_t>(out), 0);
    for (int64_t o = 0; o < out; o++)
        for (int64_t t = 0; t < kernel; t++) {
            int64_t pos = o * stride + t * dilation - pad_begin;
            count[static_cast<size_t>(o)] += pos >= lo && pos < hi;
        }
    return count;
}

/** The bytes per channel (fp32) of the padded image one output position's window spans. */
int64_t window_bytes(const ConvGeometry &geo) {
    int64_t bytes = dtype_size(DType::Float32);
    for (size_t i = 0; i < geo.kernel.size(); i++)
        bytes *= window_extent(1, geo.kernel[i], geo.stride[i], geo.dilation[i]);
    return bytes;
}

void lower_pool(Graph &g, const Node &n, const ConvLimits &lim, std::vector<Node> &out);

/** A 2-D MaxPool as a pool along the rows' width, then one along the columns' height: the max
 *  over a rectangle is the max of its rows' maxima, and each pass's window is one line of the
 *  original's (60 x 80 taps at dilation 10 span 591 x 791 pixels; a line of them fits on chip). */
void lower_separable_max_pool(Graph &g, const Node &n, const ConvGeometry &geo,
                              const ConvLimits &lim, std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]);
    GraphRewriter b(g, n, "__separable", out);
    Node along_w = n, along_h = n;
    for (Node *pass : {&along_w, &along_h})
        pass->attrs.erase("auto_pad"); // the pads below are the resolved ones
    along_w.name = n.name + "__along_w";
    along_w.attrs["kernel_shape"] = std::vector<int64_t>{1, geo.kernel[1]};
    along_w.attrs["strides"] = std::vector<int64_t>{1, geo.stride[1]};
    along_w.attrs["dilations"] = std::vector<int64_t>{1, geo.dilation[1]};
    along_w.attrs["pads"] = std::vector<int64_t>{0, geo.pad_begin[1], 0, geo.pad_end[1]};
    along_w.outputs = {b.value(x.dtype, {x.shape[0], x.shape[1], x.shape[2], geo.out[1]})};
    along_h.name = n.name + "__along_h";
    along_h.inputs = {along_w.outputs[0]};
    along_h.attrs["kernel_shape"] = std::vector<int64_t>{geo.kernel[0], 1};
    along_h.attrs["strides"] = std::vector<int64_t>{geo.stride[0], 1};
    along_h.attrs["dilations"] = std::vector<int64_t>{geo.dilation[0], 1};
    along_h.attrs["pads"] = std::vector<int64_t>{geo.pad_begin[0], 0, geo.pad_end[0], 0};
    lower_pool(g, along_w, lim, out);
    lower_pool(g, along_h, lim, out);
}

void lower_pool(Graph &g, const Node &n, const ConvLimits &lim, std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]);
    auto refuse = [&](const std::string &what) {
        user_error("NHC_EALG001", n.describe(), ": ", what);
    };
    size_t sp = x.shape.size() - 2;
    if (x.shape.size() < 3 || sp > 2)
        refuse("expected 1-D or 2-D pooling (an input of rank 3 or 4), found rank " +
               std::to_string(x.shape.size()));
    if (n.outputs.size() > 1 && !n.outputs[1].empty())
        refuse("the Indices output is not supported yet");
    std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
    if (kernel.size() != sp)
        refuse("attribute 'kernel_shape' has " + std::to_string(kernel.size()) +
               " values; expected " + std::to_string(sp) + " for " + std::to_string(sp) +
               " spatial axes");
    Shape w_shape = {1, x.shape[1]};
    w_shape.insert(w_shape.end(), kernel.begin(), kernel.end());
    ConvGeometry geo = conv_geometry(n, x.shape, w_shape); // pads, strides, dilations, auto_pad
    const Shape &y = g.value(n.outputs[0]).shape;
    // The output's shape is the model's word when ONNX's inference failed on the node (findings
    // 11 and 13: outputs of rank 3 and 1 of a 2-D pool): it must at least index like the input.
    if (y.size() != x.shape.size() || y[0] != x.shape[0] || y[1] != x.shape[1])
        refuse("expected an output of rank " + std::to_string(x.shape.size()) + " with " +
               std::to_string(x.shape[0]) + " images of " + std::to_string(x.shape[1]) +
               " channels, as the input; found " + shape_str(y));
    std::vector<int64_t> out_spatial(y.begin() + 2, y.end());
    // The schedule stages the padded image in bands of output rows, and of output columns when
    // one row's do not fit (schedules/ConvSchedule): one output position's window must fit.
    if (window_bytes(geo) > lim.image_bytes) {
        if (n.op_type == "MaxPool" && sp == 2) {
            lower_separable_max_pool(g, n, geo, lim, out);
            return;
        }
        refuse("one output's window spans " + std::to_string(window_bytes(geo)) +
               " bytes of the padded image per channel, more than the on-chip budget of " +
               std::to_string(lim.image_bytes) + " (only MaxPool is split into passes per axis)");
    }
    GraphRewriter b(g, n, "__pool_taps", out);
    std::vector<std::string> operands;
    bool avg = n.op_type == "AveragePool";
    if (avg) {
        bool include_pad = n.attr_int("count_include_pad", 0) != 0;
        std::vector<std::vector<int64_t>> counts;
        for (size_t i = 0; i < sp; i++) {
            // With count_include_pad, the explicit (or auto_pad) pads count, a ceil_mode
            // overhang does not.
            int64_t lo = include_pad ? -geo.pad_begin[i] : 0;
            int64_t hi = x.shape[i + 2] + (include_pad ? geo.pad_end[i] : 0);
            counts.push_back(taps_inside(out_spatial[i], geo.kernel[i], geo.stride[i],
                                         geo.dilation[i], geo.pad_begin[i], lo, hi));
        }
        if (sp == 1)
            counts.insert(counts.begin(), std::vector<int64_t>{1});
        std::vector<double> inv;
        for (int64_t c0 : counts[0])
            for (int64_t c1 : counts[1])
                inv.push_back(c0 * c1 > 0 ? 1.0 / static_cast<double>(c0 * c1) : 0.0);
        operands.push_back(b.constant_f32(
            {static_cast<int64_t>(counts[0].size()), static_cast<int64_t>(counts[1].size())}, inv));
    }
    add_window_node(g, b, n, "PoolTaps", operands,
                    {{"mode", std::string(avg ? "avg" : "max")},
                     {"kernel", as_2d(geo.kernel, 1)},
                     {"strides", as_2d(geo.stride, 1)},
                     {"dilations", as_2d(geo.dilation, 1)},
                     {"pads_begin", as_2d(geo.pad_begin, 0)},
                     {"output_spatial", as_2d(out_spatial, 1)}});
}

} // namespace

bool lower_depthwise_conv(Graph &g, const Node &n, const ConvGeometry &geo, const ConvLimits &lim,
                          std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
    size_t sp = geo.out.size();
    int64_t channels = x.shape[1];
    if (sp > 2 || n.attr_int("group", 1) != channels || w.shape[0] != channels)
        return false;
    if (row_band_bytes(x.shape, geo, geo.out) > lim.image_bytes)
        return false;
    GraphRewriter b(g, n, "__depthwise_taps", out);
    std::vector<int64_t> kernel = as_2d(geo.kernel, 1);
    std::vector<std::string> operands = {
        b.flattened(n.inputs[1], {channels, kernel[0], kernel[1]})};
    if (n.inputs.size() > 2 && !n.inputs[2].empty())
        operands.push_back(n.inputs[2]);
    add_window_node(g, b, n, "PoolTaps", operands,
                    {{"mode", std::string("conv")},
                     {"kernel", kernel},
                     {"strides", as_2d(geo.stride, 1)},
                     {"dilations", as_2d(geo.dilation, 1)},
                     {"pads_begin", as_2d(geo.pad_begin, 0)},
                     {"output_spatial", as_2d(geo.out, 1)}});
    return true;
}

int lower_pools(Graph &g, const ConvLimits &limits) {
    auto lower = [&](Graph &graph, const Node &n, std::vector<Node> &out) {
        lower_pool(graph, n, limits, out);
    };
    return rewrite_each(g, "MaxPool", lower) + rewrite_each(g, "AveragePool", lower);
}

} // namespace nhc
