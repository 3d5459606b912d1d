/** \file
 * Host evaluator of GridSample (ONNX Operators.md, opset 16: 4-D input, nearest, bilinear and
 * bicubic modes, zeros, border and reflection padding, align_corners), which the device does not
 * run. It folds on constants and otherwise runs in a host segment (driver/HostPartition.h). The
 * sampling follows ONNX Runtime's grid_sample.cc step for step: the grid denormalized to pixel
 * coordinates, nearest rounded half to even, border and reflection applied to the coordinate
 * (nearest, bilinear) or to each pixel fetched (bicubic), cubic coefficients with A = -0.75.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace nhc::folding {

namespace {

enum class Padding { Zeros, Border, Reflection };

/** `v` reflected into [low, high] as often as it takes. */
double reflect(double v, double low, double high) {
    const double range = high - low;
    if (range <= 0)
        return low;
    if (v < low) {
        const double d = low - v, r = d - std::floor(d / range) * range;
        return int64_t(d / range) % 2 == 0 ? low + r : high - r;
    }
    if (v > high) {
        const double d = v - high, r = d - std::floor(d / range) * range;
        return int64_t(d / range) % 2 == 0 ? high - r : low + r;
    }
    return v;
}

struct Plane {
    const HostTensor &x;
    int64_t base, height, width;
    Padding padding;
    double low_x, low_y, high_x, high_y; ///< the reflection bounds

    /** The pixel at (row, col), with the padding outside the image. */
    double at(int64_t row, int64_t col) const {
        if (padding == Padding::Border) {
            row = std::clamp<int64_t>(row, 0, height - 1);
            col = std::clamp<int64_t>(col, 0, width - 1);
        } else if (padding == Padding::Reflection) {
            row = int64_t(reflect(double(row), low_y, high_y));
            col = int64_t(reflect(double(col), low_x, high_x));
        }
        if (row < 0 || row >= height || col < 0 || col >= width)
            return 0;
        return x.get_f64(base + row * width + col);
    }
};

std::array<double, 4> cubic_coefficients(double t) {
    const double a = -0.75, x = std::fabs(t);
    return {((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a,
            ((a + 2) * x - (a + 3)) * x * x + 1,
            ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1,
            ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a};
}

double bicubic(const Plane &p, double x, double y) {
    const int64_t x0 = int64_t(std::floor(x)) - 1, y0 = int64_t(std::floor(y)) - 1;
    const std::array<double, 4> cx = cubic_coefficients(x - double(x0) - 1),
                                cy = cubic_coefficients(y - double(y0) - 1);
    double sum = 0;
    for (int64_t i = 0; i < 4; i++) {
        double row = 0;
        for (int64_t j = 0; j < 4; j++)
            row += cx[size_t(j)] * p.at(y0 + i, x0 + j);
        sum += cy[size_t(i)] * row;
    }
    return sum;
}

} // namespace

Outputs grid_sample(const Ctx &c) {
    const HostTensor &x = c.input(0), &grid = c.input(1);
    const Shape &xs = x.shape(), &gs = grid.shape();
    if (xs.size() != 4 || gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2)
        c.fail("an input of shape " + shape_str(xs) + " and a grid of shape " + shape_str(gs) +
               " are not [N, C, H, W] and [N, H_out, W_out, 2]");
    const auto *mode_attr = c.attr("mode"), *padding_attr = c.attr("padding_mode");
    const std::string mode = mode_attr ? mode_attr->s() : "bilinear";
    const std::string padding = padding_attr ? padding_attr->s() : "zeros";
    if ((mode != "bilinear" && mode != "nearest" && mode != "bicubic") ||
        (padding != "zeros" && padding != "border" && padding != "reflection"))
        c.fail("mode '" + mode + "' or padding_mode '" + padding + "' is not one ONNX defines");
    if (xs[2] < 1 || xs[3] < 1)
        c.fail("the input " + shape_str(xs) + " has no pixel to sample");
    const bool align = c.attr_int("align_corners", 0) != 0;
    const int64_t channels = xs[1], height = xs[2], width = xs[3], out_h = gs[1], out_w = gs[2];
    // Pixel centres span [0, extent - 1] with align_corners, else the pixels' edges span
    // [-0.5, extent - 0.5].
    auto denormalize = [&](double v, int64_t extent) {
        return align ? (v + 1) / 2 * double(extent - 1) : ((v + 1) * double(extent) - 1) / 2;
    };
    const double edge = align ? 0.0 : 0.5;
    Plane plane{x,
                0,
                height,
                width,
                padding == "border"       ? Padding::Border
                : padding == "reflection" ? Padding::Reflection
                                          : Padding::Zeros,
                -edge,
                -edge,
                double(width - 1) + edge,
                double(height - 1) + edge};
    HostTensor out(x.dtype(), {xs[0], channels, out_h, out_w});
    for (int64_t n = 0; n < xs[0]; n++)
        for (int64_t ch = 0; ch < channels; ch++) {
            plane.base = (n * channels + ch) * height * width;
            for (int64_t i = 0; i < out_h * out_w; i++) {
                const int64_t g = (n * out_h * out_w + i) * 2;
                double px = denormalize(grid.get_f64(g), width);
                double py = denormalize(grid.get_f64(g + 1), height);
                double v;
                if (mode == "bicubic") {
                    v = bicubic(plane, px, py);
                } else {
                    if (mode == "nearest") {
                        px = std::nearbyint(px);
                        py = std::nearbyint(py);
                    }
                    if (plane.padding == Padding::Border) {
                        px = std::clamp(px, 0.0, double(width - 1));
                        py = std::clamp(py, 0.0, double(height - 1));
                    } else if (plane.padding == Padding::Reflection) {
                        px = reflect(px, plane.low_x, plane.high_x);
                        py = reflect(py, plane.low_y, plane.high_y);
                    }
                    if (mode == "nearest") {
                        v = plane.at(int64_t(py), int64_t(px));
                    } else {
                        const double x1 = std::floor(px), y1 = std::floor(py);
                        const double dx = px - x1, dy = py - y1;
                        const int64_t c1 = int64_t(x1), r1 = int64_t(y1);
                        v = (1 - dy) * ((1 - dx) * plane.at(r1, c1) + dx * plane.at(r1, c1 + 1)) +
                            dy * ((1 - dx) * plane.at(r1 + 1, c1) + dx * plane.at(r1 + 1, c1 + 1));
                    }
                }
                out.set_f64((n * channels + ch) * out_h * out_w + i, v);
            }
        }
    return std::vector<HostTensor>{std::move(out)};
}

} // namespace nhc::folding
