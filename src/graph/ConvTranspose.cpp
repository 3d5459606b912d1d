#include "graph/ConvTranspose.h"

#include "graph/GraphRewriter.h"
#include "support/Error.h"

#include <memory>

namespace nhc {

namespace {

/** w [Ci, Co, K...] as the equivalent convolution's [Ci, KH, KW, Co], the kernel flipped. */
std::string flipped_taps_weights(Graph &g, GraphRewriter &b, const std::string &w_name, int64_t kh,
                                 int64_t kw) {
    const Value &w = g.value(w_name);
    int64_t ci = w.shape[0], co = w.shape[1];
    Shape taps = {ci, kh, kw, co};
    if (!w.is_constant()) {
        std::string t = b.transpose(b.reshape(w_name, {ci, co, kh, kw}), {0, 2, 3, 1});
        std::string flipped = b.value(w.dtype, taps);
        b.add("Slice",
              {t, b.constant_i64({-1, -1}), b.constant_i64({-kh - 1, -kw - 1}),
               b.constant_i64({1, 2}), b.constant_i64({-1, -1})},
              {flipped});
        return flipped;
    }
    auto t = std::make_shared<HostTensor>(w.dtype, taps);
    for (int64_t i = 0; i < ci; i++)
        for (int64_t o = 0; o < co; o++)
            for (int64_t y = 0; y < kh; y++)
                for (int64_t x = 0; x < kw; x++)
                    t->set_f64(((i * kh + (kh - 1 - y)) * kw + (kw - 1 - x)) * co + o,
                               w.constant->get_f64(((i * co + o) * kh + y) * kw + x));
    return b.constant(t);
}

void lower_conv_transpose(Graph &g, const Node &n, const ConvLimits &lim, std::vector<Node> &out) {
    auto refuse = [&](const std::string &what) {
        user_error("NHC_EALG001", n.describe(), ": ", what);
    };
    const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
    const Shape &y = g.value(n.outputs[0]).shape;
    size_t sp = x.shape.size() - 2;
    if (x.shape.size() < 3 || sp > 2 || w.shape.size() != x.shape.size())
        refuse("expected a 1-D or 2-D transposed convolution, found an input of rank " +
               std::to_string(x.shape.size()));
    if (n.attr_int("group", 1) != 1)
        refuse("group > 1 is not supported yet");
    std::vector<int64_t> stride = n.attr_ints("strides"), dil = n.attr_ints("dilations"),
                         pads = n.attr_ints("pads"), extra = n.attr_ints("output_padding");
    stride.resize(sp, 1);
    dil.resize(sp, 1);
    pads.resize(2 * sp, 0);
    extra.resize(sp, 0);
    std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
    bool derived =
        n.has_attr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    ConvGeometry geo; // of the equivalent stride-1 convolution over the spread input
    std::vector<int64_t> spread;
    for (size_t i = 0; i < sp; i++) {
        int64_t in = x.shape[i + 2], k = w.shape[i + 2], o = y[i + 2];
        int64_t span = (k - 1) * dil[i] + 1;
        int64_t begin = pads[i];
        if (derived) { // the specification's split of the total padding
            // Floor division (as ONNX's reference): an output longer than the stride gives
            // (a negative total) is extended at the end.
            int64_t total = stride[i] * (in - 1) + extra[i] + span - o;
            int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
            begin = auto_pad == "SAME_UPPER" ? half : total - half;
        } else if (auto_pad == "VALID") {
            begin = 0;
        }
        if (begin > span - 1)
            refuse("a pad_begin larger than the dilated kernel (a crop) is not supported yet");
        geo.kernel.push_back(k);
        geo.stride.push_back(1);
        geo.dilation.push_back(dil[i]);
        geo.pad_begin.push_back(span - 1 - begin);
        geo.pad_end.push_back(0);
        geo.out.push_back(o);
        spread.push_back(stride[i]);
    }
    Shape spread_x = x.shape; // the spread image's extent, for the budget
    for (size_t i = 0; i < sp; i++)
        spread_x[i + 2] = (x.shape[i + 2] - 1) * stride[i] + 1;
    if (!chunked_image_fits(x.shape[1], row_band_bytes(spread_x, geo, geo.out), lim) ||
        !tap_weights_fit(x.shape[1], shape_numel(geo.kernel), w.shape[1], lim))
        refuse("the input's channels, the spread, padded rows that one output row reads or the "
               "weights of one tile of output channels do not fit on chip");
    GraphRewriter b(g, n, "__conv_transpose", out);
    std::vector<int64_t> kernel = as_2d(geo.kernel, 1);
    std::vector<std::string> operands = {
        flipped_taps_weights(g, b, n.inputs[1], kernel[0], kernel[1])};
    if (n.inputs.size() > 2 && !n.inputs[2].empty())
        operands.push_back(n.inputs[2]);
    add_window_node(g, b, n, "ConvTaps", operands,
                    {{"strides", std::vector<int64_t>{1, 1}},
                     {"dilations", as_2d(geo.dilation, 1)},
                     {"pads_begin", as_2d(geo.pad_begin, 0)},
                     {"input_strides", as_2d(spread, 1)},
                     {"output_spatial", as_2d(geo.out, 1)}});
}

} // namespace

int lower_conv_transposes(Graph &g, const ConvLimits &limits) {
    return rewrite_each(g, "ConvTranspose",
                        [&](Graph &graph, const Node &n, std::vector<Node> &out) {
                            lower_conv_transpose(graph, n, limits, out);
                        });
}

} // namespace nhc
