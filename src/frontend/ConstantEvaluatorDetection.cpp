/** \file
 * Host evaluators of a detector's post-processing operators: TopK, NonMaxSuppression, CumSum and
 * RoiAlign (ONNX Operators.md, opsets 11-17). The device runs none of them (the selection is data
 * dependent and NonMaxSuppression's output shape is too), so they fold when their inputs are
 * constants and otherwise run in a host segment (driver/HostPartition.h). Ties are broken as
 * ONNX Runtime breaks them: the lower index first.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace nhc::folding {

namespace {

/** The element offsets of every line along `axis` of `shape`: outer index, inner index. */
struct Lines {
    int64_t outer = 1, length = 1, inner = 1;
    Lines(const Shape &shape, int64_t axis) {
        for (int64_t d = 0; d < int64_t(shape.size()); d++)
            (d < axis ? outer : d == axis ? length : inner) *= shape[size_t(d)];
    }
    int64_t at(int64_t line, int64_t i) const {
        return (line / inner) * length * inner + i * inner + line % inner;
    }
    int64_t count() const { return outer * inner; }
};

int64_t scalar_int(const Ctx &c, size_t input, const char *what) {
    const HostTensor &t = c.input(input);
    if (t.numel() != 1)
        c.fail(std::string(what) + " must hold one value, found shape " + shape_str(t.shape()));
    return t.get_i64(0);
}

} // namespace

Outputs top_k(const Ctx &c) {
    const HostTensor &x = c.input(0);
    int64_t axis = c.norm_axis(c.attr_int("axis", -1), x.rank());
    int64_t k = scalar_int(c, 1, "K");
    bool largest = c.attr_int("largest", 1) != 0;
    Lines lines(x.shape(), axis);
    if (k < 0 || k > lines.length)
        c.fail("K = " + std::to_string(k) + " is outside [0, " + std::to_string(lines.length) +
               "] for axis " + std::to_string(axis) + " of shape " + shape_str(x.shape()));
    Shape out_shape = x.shape();
    out_shape[size_t(axis)] = k;
    if (too_big(out_shape))
        return std::nullopt;
    HostTensor values(x.dtype(), out_shape), indices(DType::Int64, out_shape);
    Lines out(out_shape, axis);
    std::vector<int64_t> order(size_t(lines.length));
    for (int64_t line = 0; line < lines.count(); line++) {
        std::iota(order.begin(), order.end(), 0);
        // `sorted` = 0 allows any order; the sorted one is such an order.
        auto before = [&](int64_t a, int64_t b) {
            double va = x.get_f64(lines.at(line, a)), vb = x.get_f64(lines.at(line, b));
            return largest ? va > vb : va < vb;
        };
        std::stable_sort(order.begin(), order.end(), before);
        for (int64_t i = 0; i < k; i++) {
            int64_t from = lines.at(line, order[size_t(i)]), to = out.at(line, i);
            if (dtype_is_float(x.dtype()))
                values.set_f64(to, x.get_f64(from));
            else
                values.set_i64(to, x.get_i64(from));
            indices.set_i64(to, order[size_t(i)]);
        }
    }
    return std::vector<HostTensor>{std::move(values), std::move(indices)};
}

Outputs cum_sum(const Ctx &c) {
    const HostTensor &x = c.input(0);
    int64_t axis = c.norm_axis(scalar_int(c, 1, "axis"), x.rank());
    bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
    HostTensor y(x.dtype(), x.shape());
    Lines lines(x.shape(), axis);
    bool is_float = dtype_is_float(x.dtype());
    for (int64_t line = 0; line < lines.count(); line++) {
        double fsum = 0;
        int64_t isum = 0;
        for (int64_t s = 0; s < lines.length; s++) {
            int64_t at = lines.at(line, reverse ? lines.length - 1 - s : s);
            if (exclusive)
                is_float ? y.set_f64(at, fsum) : y.set_i64(at, isum);
            fsum += is_float ? x.get_f64(at) : 0;
            isum += is_float ? 0 : x.get_i64(at);
            if (!exclusive)
                is_float ? y.set_f64(at, fsum) : y.set_i64(at, isum);
        }
    }
    return std::vector<HostTensor>{std::move(y)};
}

namespace {

struct Box {
    double y1, x1, y2, x2;
    double area() const { return (y2 - y1) * (x2 - x1); }
};

/** Box `i` of batch `b`, as (min, max) corners whatever the order the model gave them in. */
Box read_box(const HostTensor &boxes, int64_t b, int64_t i, bool center_point) {
    int64_t base = (b * boxes.shape()[1] + i) * 4;
    double v[4];
    for (int j = 0; j < 4; j++)
        v[j] = boxes.get_f64(base + j);
    if (center_point) // [x_center, y_center, width, height]
        return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
    return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
}

/** As ONNX Runtime: a box of no area suppresses nothing. */
bool suppresses(const Box &a, const Box &b, double iou_threshold) {
    if (a.area() <= 0 || b.area() <= 0)
        return false;
    double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
    double w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
    if (h <= 0 || w <= 0)
        return false;
    double inter = h * w;
    return inter / (a.area() + b.area() - inter) > iou_threshold;
}

} // namespace

Outputs non_max_suppression(const Ctx &c) {
    const HostTensor &boxes = c.input(0), &scores = c.input(1);
    if (boxes.rank() != 3 || boxes.shape()[2] != 4 || scores.rank() != 3 ||
        scores.shape()[0] != boxes.shape()[0] || scores.shape()[2] != boxes.shape()[1])
        c.fail("expected boxes [batches, boxes, 4] and scores [batches, classes, boxes], found " +
               shape_str(boxes.shape()) + " and " + shape_str(scores.shape()));
    int64_t max_out = c.has_input(2) ? scalar_int(c, 2, "max_output_boxes_per_class") : 0;
    double iou = c.has_input(3) ? c.input(3).get_f64(0) : 0.0;
    std::optional<double> score_min;
    if (c.has_input(4))
        score_min = c.input(4).get_f64(0);
    bool center_point = c.attr_int("center_point_box", 0) != 0;
    int64_t batches = scores.shape()[0], classes = scores.shape()[1], n = scores.shape()[2];
    std::vector<int64_t> selected; // (batch, class, box) triples
    for (int64_t b = 0; b < batches; b++)
        for (int64_t k = 0; k < classes && max_out > 0; k++) {
            std::vector<int64_t> order;
            for (int64_t i = 0; i < n; i++)
                if (!score_min || scores.get_f64((b * classes + k) * n + i) > *score_min)
                    order.push_back(i);
            std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
                return scores.get_f64((b * classes + k) * n + x) >
                       scores.get_f64((b * classes + k) * n + y);
            });
            std::vector<Box> kept;
            for (int64_t i : order) {
                Box box = read_box(boxes, b, i, center_point);
                if (std::any_of(kept.begin(), kept.end(),
                                [&](const Box &o) { return suppresses(o, box, iou); }))
                    continue;
                kept.push_back(box);
                selected.insert(selected.end(), {b, k, i});
                if (int64_t(kept.size()) == max_out)
                    break;
            }
        }
    HostTensor out(DType::Int64, {int64_t(selected.size() / 3), 3});
    for (size_t i = 0; i < selected.size(); i++)
        out.set_i64(int64_t(i), selected[i]);
    return std::vector<HostTensor>{std::move(out)};
}

namespace {

/** Bilinear sampling of one channel plane [height, width] at (y, x), as RoiAlign defines it
 *  (ONNX Runtime's roi_align.cc): nothing outside [-1, extent], the last row or column repeated
 *  at the far edge. Returns the four corners' weighted values. */
std::array<double, 4> bilinear(const HostTensor &x, int64_t plane, int64_t height, int64_t width,
                               double y, double xx) {
    if (y < -1.0 || y > double(height) || xx < -1.0 || xx > double(width))
        return {0, 0, 0, 0};
    y = std::max(y, 0.0);
    xx = std::max(xx, 0.0);
    int64_t y0 = int64_t(y), x0 = int64_t(xx), y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= height - 1) {
        y0 = y1 = height - 1;
        y = double(y0);
    }
    if (x0 >= width - 1) {
        x0 = x1 = width - 1;
        xx = double(x0);
    }
    const double ly = y - double(y0), lx = xx - double(x0), hy = 1 - ly, hx = 1 - lx;
    auto at = [&](int64_t r, int64_t c) { return x.get_f64(plane + r * width + c); };
    return {hy * hx * at(y0, x0), hy * lx * at(y0, x1), ly * hx * at(y1, x0), ly * lx * at(y1, x1)};
}

} // namespace

Outputs roi_align(const Ctx &c) {
    const HostTensor &x = c.input(0), &rois = c.input(1), &batch_indices = c.input(2);
    const Shape &xs = x.shape();
    const int64_t count = rois.rank() == 2 ? rois.shape()[0] : -1;
    if (xs.size() != 4 || rois.rank() != 2 || rois.shape()[1] != 4 ||
        batch_indices.numel() != count)
        c.fail("an input of shape " + shape_str(xs) + ", rois of shape " + shape_str(rois.shape()) +
               " and batch_indices of shape " + shape_str(batch_indices.shape()) +
               " do not make RoiAligns");
    const int64_t channels = xs[1], height = xs[2], width = xs[3];
    const int64_t out_h = c.attr_int("output_height", 1), out_w = c.attr_int("output_width", 1);
    const int64_t ratio = c.attr_int("sampling_ratio", 0);
    if (out_h < 1 || out_w < 1 || ratio < 0)
        c.fail("output_height and output_width must be positive and sampling_ratio not negative");
    const auto *scale_attr = c.attr("spatial_scale");
    const double scale = scale_attr ? double(scale_attr->f()) : 1.0;
    const auto *mode_attr = c.attr("mode");
    const bool max_mode = mode_attr && mode_attr->s() == "max";
    const auto *ctm = c.attr("coordinate_transformation_mode");
    // half_pixel (the default since opset 16) shifts by half a pixel and lets a roi be smaller
    // than one; output_half_pixel (opset 10's behaviour) does neither.
    const bool half_pixel = c.opset >= 16 && !(ctm && ctm->s() == "output_half_pixel");
    const double offset = half_pixel ? 0.5 : 0.0;
    HostTensor out(x.dtype(), {count, channels, out_h, out_w});
    for (int64_t r = 0; r < count; r++) {
        const int64_t b = batch_indices.get_i64(r);
        if (b < 0 || b >= xs[0])
            c.fail("batch index " + std::to_string(b) + " is outside the batch of " +
                   std::to_string(xs[0]));
        const double x0 = rois.get_f64(r * 4) * scale - offset,
                     y0 = rois.get_f64(r * 4 + 1) * scale - offset;
        double roi_w = rois.get_f64(r * 4 + 2) * scale - offset - x0,
               roi_h = rois.get_f64(r * 4 + 3) * scale - offset - y0;
        if (!half_pixel) {
            roi_w = std::max(roi_w, 1.0);
            roi_h = std::max(roi_h, 1.0);
        }
        const double bin_h = roi_h / double(out_h), bin_w = roi_w / double(out_w);
        const int64_t grid_h = ratio > 0 ? ratio : int64_t(std::ceil(roi_h / double(out_h)));
        const int64_t grid_w = ratio > 0 ? ratio : int64_t(std::ceil(roi_w / double(out_w)));
        const double samples = double(std::max<int64_t>(grid_h * grid_w, 1));
        for (int64_t ch = 0; ch < channels; ch++) {
            const int64_t plane = (b * channels + ch) * height * width;
            for (int64_t ph = 0; ph < out_h; ph++)
                for (int64_t pw = 0; pw < out_w; pw++) {
                    double sum = 0, best = 0;
                    bool first = true;
                    for (int64_t iy = 0; iy < grid_h; iy++)
                        for (int64_t ix = 0; ix < grid_w; ix++) {
                            const double y = y0 + double(ph) * bin_h +
                                             (double(iy) + 0.5) * bin_h / double(grid_h);
                            const double xx = x0 + double(pw) * bin_w +
                                              (double(ix) + 0.5) * bin_w / double(grid_w);
                            const std::array<double, 4> v =
                                bilinear(x, plane, height, width, y, xx);
                            sum += v[0] + v[1] + v[2] + v[3];
                            // ONNX Runtime's max mode: the largest weighted corner.
                            const double m = std::max({v[0], v[1], v[2], v[3]});
                            best = first ? m : std::max(best, m);
                            first = false;
                        }
                    out.set_f64(((r * channels + ch) * out_h + ph) * out_w + pw,
                                max_mode ? best : sum / samples);
                }
        }
    }
    return std::vector<HostTensor>{std::move(out)};
}

} // namespace nhc::folding
