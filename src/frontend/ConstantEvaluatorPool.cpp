/** \file
 * Host evaluators of the pooling and normalisation operators the device does not run (ONNX
 * Operators.md, opset 17): LpPool and GlobalLpPool ((Σ |x|^p)^(1/p) over each window; padding
 * adds nothing), LpNormalization (x over its L1 or L2 norm along an axis) and MaxRoiPool (Fast
 * R-CNN's region pooling: each region's corners scaled and rounded, cut into pooled_shape bins,
 * the maximum of each, 0 for an empty bin, as ONNX Runtime computes it). Sums in double, rounded
 * once into the output's type. They fold on constants and otherwise run in a host segment
 * (driver/HostPartition.h).
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace nhc::folding {

namespace {

/** The float input 0 of rank 3 or more ([N, C, spatial...]). */
const HostTensor &image_input(const Ctx &c) {
    const HostTensor &x = c.input(0);
    if (!dtype_is_float(x.dtype()) || x.shape().size() < 3)
        c.fail("input 0 must be a float tensor [N, C, spatial...], not of rank " +
               std::to_string(x.shape().size()));
    return x;
}

double p_of(const Ctx &c) {
    const int64_t p = c.attr_int("p", 2);
    if (p < 1)
        c.fail("p must be 1 or more, not " + std::to_string(p));
    return double(p);
}

/** (Σ |x|^p)^(1/p) over `n` values at `at(i)`. */
template <typename F>
double lp_norm(int64_t n, double p, F at) {
    double sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += p == 1 ? std::fabs(at(i)) : p == 2 ? at(i) * at(i) : std::pow(std::fabs(at(i)), p);
    return p == 1 ? sum : p == 2 ? std::sqrt(sum) : std::pow(sum, 1 / p);
}

} // namespace

Outputs lp_pool(const Ctx &c) {
    const HostTensor &x = image_input(c);
    const Shape &xs = x.shape();
    const size_t dims = xs.size() - 2;
    const bool global = c.node.op_type() == "GlobalLpPool";
    std::vector<int64_t> kernel(xs.begin() + 2, xs.end());
    if (!global) {
        std::optional<std::vector<int64_t>> k = c.attr_ints("kernel_shape");
        if (!k)
            c.fail("attribute 'kernel_shape' is missing");
        kernel = *k;
    }
    const Window win =
        global ? Window{kernel, std::vector<int64_t>(dims, 1), std::vector<int64_t>(dims, 1),
                        std::vector<int64_t>(dims, 0), std::vector<int64_t>(dims, 1)}
               : conv_window(c, xs, kernel);
    const double p = p_of(c);
    Shape ys = {xs[0], xs[1]};
    ys.insert(ys.end(), win.out.begin(), win.out.end());
    HostTensor y(x.dtype(), ys);
    const std::vector<int64_t> xstride = row_major_strides(xs), ystride = row_major_strides(ys);
    const int64_t planes = xs[0] * xs[1], outs = shape_numel(win.out), taps = shape_numel(kernel);
    std::vector<int64_t> at;
    for (int64_t plane = 0; plane < planes; plane++)
        for (int64_t o = 0; o < outs; o++) {
            // The window's elements inside the image (padding adds nothing to the sum).
            at.clear();
            for (int64_t t = 0; t < taps; t++) {
                int64_t flat = plane * xstride[1], orest = o, trest = t;
                bool inside = true;
                for (size_t d = dims; d-- > 0;) {
                    const int64_t od = orest % win.out[d], td = trest % win.kernel[d];
                    orest /= win.out[d];
                    trest /= win.kernel[d];
                    const int64_t i = od * win.stride[d] - win.pad_begin[d] + td * win.dilation[d];
                    inside &= i >= 0 && i < xs[2 + d];
                    flat += i * xstride[2 + d];
                }
                if (inside)
                    at.push_back(flat);
            }
            y.set_f64(plane * ystride[1] + o, lp_norm(int64_t(at.size()), p, [&](int64_t i) {
                          return x.get_f64(at[size_t(i)]);
                      }));
        }
    return std::vector<HostTensor>{std::move(y)};
}

Outputs lp_normalization(const Ctx &c) {
    const HostTensor &x = c.input(0);
    if (!dtype_is_float(x.dtype()))
        c.fail("input 0 must be a float tensor");
    const Shape &xs = x.shape();
    const int64_t axis = c.norm_axis(c.attr_int("axis", -1), int64_t(xs.size()));
    const double p = p_of(c);
    if (p != 1 && p != 2)
        c.fail("p must be 1 or 2, not " + std::to_string(int64_t(p)));
    const int64_t n = xs[size_t(axis)], inner = row_major_strides(xs)[size_t(axis)];
    const int64_t outer = n ? x.numel() / (n * inner) : 0;
    HostTensor y(x.dtype(), xs);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const int64_t base = o * n * inner + i;
            const double norm =
                lp_norm(n, p, [&](int64_t k) { return x.get_f64(base + k * inner); });
            // A zero norm leaves zeros, as ONNX Runtime gives them
            // (host_ops/lp_normalization_l1_zero).
            for (int64_t k = 0; k < n; k++)
                y.set_f64(base + k * inner, norm == 0 ? 0 : x.get_f64(base + k * inner) / norm);
        }
    return std::vector<HostTensor>{std::move(y)};
}

Outputs max_roi_pool(const Ctx &c) {
    const HostTensor &x = image_input(c), &rois = c.input(1);
    const Shape &xs = x.shape();
    if (xs.size() != 4 || rois.shape().size() != 2 || rois.shape()[1] != 5)
        c.fail("expected X [N, C, H, W] and rois [R, 5]");
    const std::optional<std::vector<int64_t>> pooled = c.attr_ints("pooled_shape");
    if (!pooled || pooled->size() != 2 || (*pooled)[0] < 1 || (*pooled)[1] < 1)
        c.fail("attribute 'pooled_shape' must be two positive extents");
    const auto *scale_attr = c.attr("spatial_scale");
    const double scale = scale_attr ? double(scale_attr->f()) : 1.0;
    const int64_t ph_n = (*pooled)[0], pw_n = (*pooled)[1], channels = xs[1], h = xs[2], w = xs[3];
    const int64_t regions = rois.shape()[0];
    HostTensor y(x.dtype(), {regions, channels, ph_n, pw_n});
    for (int64_t r = 0; r < regions; r++) {
        const int64_t batch = int64_t(rois.get_f64(r * 5));
        if (batch < 0 || batch >= xs[0])
            c.fail("region " + std::to_string(r) + " names image " + std::to_string(batch) +
                   " of " + std::to_string(xs[0]));
        // Corners scaled and rounded half away from zero; a region is at least one pixel.
        auto corner = [&](int k) { return int64_t(std::round(rois.get_f64(r * 5 + k) * scale)); };
        const int64_t x0 = corner(1), y0 = corner(2), x1 = corner(3), y1 = corner(4);
        // Bin edges in float, as ONNX Runtime (and Caffe's ROI pooling) computes them: a region
        // 29 high in 7 bins ends its last at 29 in float, at 30 in double.
        const float bin_h = float(std::max<int64_t>(y1 - y0 + 1, 1)) / float(ph_n);
        const float bin_w = float(std::max<int64_t>(x1 - x0 + 1, 1)) / float(pw_n);
        for (int64_t ph = 0; ph < ph_n; ph++)
            for (int64_t pw = 0; pw < pw_n; pw++) {
                auto clamp = [](int64_t v, int64_t hi) {
                    return std::min(std::max<int64_t>(v, 0), hi);
                };
                const int64_t hs = clamp(int64_t(std::floor(float(ph) * bin_h)) + y0, h);
                const int64_t he = clamp(int64_t(std::ceil(float(ph + 1) * bin_h)) + y0, h);
                const int64_t ws = clamp(int64_t(std::floor(float(pw) * bin_w)) + x0, w);
                const int64_t we = clamp(int64_t(std::ceil(float(pw + 1) * bin_w)) + x0, w);
                for (int64_t ch = 0; ch < channels; ch++) {
                    double m = he <= hs || we <= ws ? 0 : -DBL_MAX;
                    const int64_t plane = (batch * channels + ch) * h * w;
                    for (int64_t i = hs; i < he; i++)
                        for (int64_t j = ws; j < we; j++)
                            m = std::max(m, x.get_f64(plane + i * w + j));
                    y.set_f64(((r * channels + ch) * ph_n + ph) * pw_n + pw, m);
                }
            }
    }
    return std::vector<HostTensor>{std::move(y)};
}

} // namespace nhc::folding
