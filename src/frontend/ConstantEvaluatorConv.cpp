/** \file
 * Host evaluators of the quantized convolutions ConvInteger and QLinearConv, and of MaxUnpool
 * (ONNX Operators.md, opsets 10-17), which the device does not run. They fold on constants and
 * otherwise run in a host segment (driver/HostPartition.h). The convolutions take any number of
 * spatial dims, groups, strides, dilations and pads (explicit or auto_pad); they sum in int64
 * over (x - x_zero_point) * (w - w_zero_point), where padding adds nothing, and QLinearConv
 * requantizes each sum (with its bias) by one float32 multiplier per output channel, rounded
 * half to even, as ONNX Runtime does.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace nhc::folding {

Window conv_window(const Ctx &c, const Shape &x, const std::vector<int64_t> &kernel) {
    const size_t dims = x.size() - 2;
    Window win;
    win.kernel = kernel;
    if (win.kernel.size() != dims)
        c.fail("the kernel has " + std::to_string(win.kernel.size()) + " dims for " +
               std::to_string(dims) + " spatial dims");
    win.stride = c.attr_ints("strides").value_or(std::vector<int64_t>(dims, 1));
    win.dilation = c.attr_ints("dilations").value_or(std::vector<int64_t>(dims, 1));
    std::vector<int64_t> pads = c.attr_ints("pads").value_or(std::vector<int64_t>(2 * dims, 0));
    if (win.stride.size() != dims || win.dilation.size() != dims || pads.size() != 2 * dims)
        c.fail("strides, dilations or pads do not have one value per spatial dim (" +
               std::to_string(dims) + ")");
    auto positive = [](const std::vector<int64_t> &v) {
        return std::all_of(v.begin(), v.end(), [](int64_t e) { return e > 0; });
    };
    if (!positive(win.stride) || !positive(win.dilation) || !positive(win.kernel) ||
        std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
        c.fail("strides, dilations and the kernel must be positive and pads not negative");
    const auto *auto_pad_attr = c.attr("auto_pad");
    const std::string auto_pad = auto_pad_attr ? auto_pad_attr->s() : "NOTSET";
    for (size_t d = 0; d < dims; d++) {
        const int64_t in = x[2 + d], span = win.dilation[d] * (win.kernel[d] - 1) + 1;
        int64_t begin = pads[d], end = pads[dims + d];
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            const int64_t out = (in + win.stride[d] - 1) / win.stride[d];
            const int64_t total = std::max<int64_t>(0, (out - 1) * win.stride[d] + span - in);
            begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            end = total - begin;
        } else if (auto_pad == "VALID") {
            begin = end = 0;
        }
        const int64_t out = (in + begin + end - span) / win.stride[d] + 1;
        if (out < 1)
            c.fail("the window " + std::to_string(span) + " is larger than the padded input");
        win.pad_begin.push_back(begin);
        win.out.push_back(out);
    }
    return win;
}

namespace {

/** One value of `z` (a zero point or scale) for channel `m`: a scalar, or one per channel. */
double per_channel(const Ctx &c, const HostTensor *z, int64_t m, int64_t channels) {
    if (!z)
        return 0;
    if (z->numel() == 1)
        return z->get_f64(0);
    if (z->numel() != channels)
        c.fail("a zero point or scale of shape " + shape_str(z->shape()) +
               " is neither a scalar nor one per output channel (" + std::to_string(channels) +
               ")");
    return z->get_f64(m);
}

/** The int64 sums of an integer convolution, [N, M, out...]. */
HostTensor integer_conv(const Ctx &c, const HostTensor &x, const HostTensor &w,
                        const HostTensor *x_zero, const HostTensor *w_zero) {
    const Shape &xs = x.shape(), &ws = w.shape();
    const int64_t group = c.attr_int("group", 1);
    if (xs.size() < 3 || ws.size() != xs.size() || group < 1 || xs[1] % group != 0 ||
        ws[0] % group != 0 || ws[1] * group != xs[1])
        c.fail("an input of shape " + shape_str(xs) + " and weights of shape " + shape_str(ws) +
               " in " + std::to_string(group) + " groups do not make a convolution");
    if (x_zero && x_zero->numel() != 1)
        c.fail("the input's zero point is not one value");
    const Window win = conv_window(c, xs, std::vector<int64_t>(ws.begin() + 2, ws.end()));
    const size_t dims = xs.size() - 2;
    const int64_t batch = xs[0], in_channels = ws[1], out_channels = ws[0];
    const int64_t per_group = out_channels / group;
    Shape out_shape = {batch, out_channels};
    out_shape.insert(out_shape.end(), win.out.begin(), win.out.end());
    HostTensor out(DType::Int64, out_shape);
    const std::vector<int64_t> x_strides = row_major_strides(xs), w_strides = row_major_strides(ws);
    const int64_t positions = shape_numel(win.out), taps = shape_numel(win.kernel);
    const int64_t xz = x_zero ? x_zero->get_i64(0) : 0;
    std::vector<int64_t> at(dims), tap(dims);
    for (int64_t n = 0; n < batch; n++)
        for (int64_t m = 0; m < out_channels; m++) {
            const int64_t wz = int64_t(per_channel(c, w_zero, m, out_channels));
            const int64_t first_channel = (m / per_group) * in_channels;
            for (int64_t p = 0; p < positions; p++) {
                for (size_t d = dims, rest = size_t(p); d-- > 0;) {
                    at[d] = int64_t(rest) % win.out[d];
                    rest /= size_t(win.out[d]);
                }
                int64_t sum = 0;
                for (int64_t t = 0; t < taps; t++) {
                    int64_t x_at = n * x_strides[0], rest = t;
                    bool inside = true;
                    for (size_t d = dims; d-- > 0;) {
                        tap[d] = rest % win.kernel[d];
                        rest /= win.kernel[d];
                        const int64_t i =
                            at[d] * win.stride[d] - win.pad_begin[d] + tap[d] * win.dilation[d];
                        inside = inside && i >= 0 && i < xs[2 + d];
                        x_at += i * x_strides[2 + d];
                    }
                    if (!inside) // padding: x equals its zero point there
                        continue;
                    int64_t w_at = m * w_strides[0];
                    for (size_t d = 0; d < dims; d++)
                        w_at += tap[d] * w_strides[2 + d];
                    for (int64_t ci = 0; ci < in_channels; ci++)
                        sum += (x.get_i64(x_at + (first_channel + ci) * x_strides[1]) - xz) *
                               (w.get_i64(w_at + ci * w_strides[1]) - wz);
                }
                out.set_i64((n * out_channels + m) * positions + p, sum);
            }
        }
    return out;
}

} // namespace

Outputs conv_integer(const Ctx &c) {
    HostTensor sums =
        integer_conv(c, c.input(0), c.input(1), c.optional_input(2), c.optional_input(3));
    HostTensor out(DType::Int32, sums.shape());
    for (int64_t i = 0; i < sums.numel(); i++)
        out.set_i64(i, sums.get_i64(i));
    return std::vector<HostTensor>{std::move(out)};
}

Outputs qlinear_conv(const Ctx &c) {
    // Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
    const HostTensor &y_zero = c.input(7);
    if (c.input(1).numel() != 1 || c.input(6).numel() != 1)
        c.fail("the input's or the output's scale is not one value");
    HostTensor sums = integer_conv(c, c.input(0), c.input(3), &c.input(2), &c.input(5));
    const HostTensor *bias = c.optional_input(8);
    const int64_t channels = sums.shape()[1],
                  positions = sums.numel() / sums.shape()[0] / std::max<int64_t>(channels, 1);
    const bool is_u8 = y_zero.dtype() == DType::UInt8;
    HostTensor out(y_zero.dtype(), sums.shape());
    for (int64_t i = 0; i < sums.numel(); i++) {
        const int64_t m = (i / positions) % channels;
        const float multiplier = float(c.input(1).get_f64(0)) *
                                 float(per_channel(c, &c.input(4), m, channels)) /
                                 float(c.input(6).get_f64(0));
        const int64_t acc = sums.get_i64(i) + (bias ? bias->get_i64(m) : 0);
        const double q =
            std::nearbyint(double(float(acc) * multiplier)) + double(y_zero.get_i64(0));
        out.set_i64(i, int64_t(std::clamp(q, is_u8 ? 0.0 : -128.0, is_u8 ? 255.0 : 127.0)));
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs max_unpool(const Ctx &c) {
    const HostTensor &x = c.input(0), &indices = c.input(1);
    const Shape &xs = x.shape();
    const std::vector<int64_t> kernel =
        c.attr_ints("kernel_shape").value_or(std::vector<int64_t>{});
    const size_t dims = xs.size() < 3 ? 0 : xs.size() - 2;
    if (dims == 0 || kernel.size() != dims || indices.shape() != xs)
        c.fail("an input of shape " + shape_str(xs) + " with indices of shape " +
               shape_str(indices.shape()) + " and " + std::to_string(kernel.size()) +
               " kernel dims does not unpool");
    const std::vector<int64_t> stride =
        c.attr_ints("strides").value_or(std::vector<int64_t>(dims, 1));
    const std::vector<int64_t> pads =
        c.attr_ints("pads").value_or(std::vector<int64_t>(2 * dims, 0));
    if (stride.size() != dims || pads.size() != 2 * dims)
        c.fail("strides or pads do not have one value per spatial dim");
    // The indices are flat positions in the unpooled shape the attributes give; an output_shape
    // input places each at the same coordinates in its own (larger) shape.
    Shape unpooled = {xs[0], xs[1]};
    for (size_t d = 0; d < dims; d++)
        unpooled.push_back((xs[2 + d] - 1) * stride[d] + kernel[d] - pads[d] - pads[dims + d]);
    Shape out_shape = unpooled;
    if (c.has_input(2)) {
        out_shape = c.input(2).to_i64_vector();
        if (out_shape.size() != xs.size())
            c.fail("output_shape " + shape_str(out_shape) + " is not of rank " +
                   std::to_string(xs.size()));
    }
    for (size_t d = 0; d < out_shape.size(); d++)
        if (unpooled[d] < 1 || out_shape[d] < 0)
            c.fail("the unpooled shape " + shape_str(unpooled) + " or output_shape " +
                   shape_str(out_shape) + " has a dimension below 1");
    const std::vector<int64_t> from = row_major_strides(unpooled),
                               to = row_major_strides(out_shape);
    HostTensor out(x.dtype(), out_shape); // zeros
    for (int64_t i = 0; i < x.numel(); i++) {
        const int64_t index = indices.get_i64(i);
        if (index < 0 || index >= shape_numel(unpooled))
            c.fail("index " + std::to_string(index) + " is outside the unpooled shape " +
                   shape_str(unpooled));
        int64_t at = 0;
        for (size_t d = 0; d < out_shape.size(); d++) {
            const int64_t coord = (index / from[d]) % unpooled[d];
            if (coord >= out_shape[d])
                c.fail("index " + std::to_string(index) + " falls outside output_shape " +
                       shape_str(out_shape));
            at += coord * to[d];
        }
        if (dtype_is_float(x.dtype()))
            out.set_f64(at, x.get_f64(i));
        else
            out.set_i64(at, x.get_i64(i));
    }
    return std::vector<HostTensor>{std::move(out)};
}

} // namespace nhc::folding
