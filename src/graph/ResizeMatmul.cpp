#include "graph/ResizeMatmul.h"

#include "graph/GraphRewriter.h"
#include "support/Error.h"

#include <cmath>

namespace nhc {

bool ResizeAxis::is_identity() const {
    if (in != out)
        return false;
    for (int64_t i = 0; i < out; i++)
        for (int64_t j = 0; j < in; j++)
            if (weights[static_cast<size_t>(i * in + j)] != (i == j ? 1.0 : 0.0))
                return false;
    return true;
}

namespace {

struct ResizeMode {
    std::string mode, coordinates, nearest;
    double cubic_a = -0.75;
    bool exclude_outside = false;
};

// The input coordinate of output `x` (onnx resize.py interpolate_1d_with_x).
double original_coordinate(const ResizeMode &m, double x, double scale, int64_t in) {
    double out_width = scale * static_cast<double>(in);
    const std::string &c = m.coordinates;
    if (c == "align_corners")
        return out_width == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out_width - 1);
    if (c == "asymmetric")
        return x / scale;
    if (c == "pytorch_half_pixel")
        return out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    if (c == "tf_half_pixel_for_nn")
        return (x + 0.5) / scale;
    return (x + 0.5) / scale - 0.5; // half_pixel
}

// The weights of the neighbours of a coordinate whose fraction past its left neighbour is
// `ratio` (in (0, 1]; 1 for an integer coordinate), for the mode's number of neighbours.
std::vector<double> coefficients(const ResizeMode &m, double ratio) {
    if (m.mode == "linear")
        return {1 - ratio, ratio};
    if (m.mode == "cubic") {
        double a = m.cubic_a, r = ratio + 1, s = 1 - ratio, t = 2 - ratio;
        return {((a * r - 5 * a) * r + 8 * a) * r - 4 * a,
                ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
                ((a + 2) * s - (a + 3)) * s * s + 1, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a};
    }
    bool upper;
    if (ratio == 1)
        upper = true;
    else if (m.nearest == "round_prefer_ceil")
        upper = ratio >= 0.5;
    else if (m.nearest == "floor")
        upper = false;
    else if (m.nearest == "ceil")
        upper = true;
    else // round_prefer_floor
        upper = ratio > 0.5;
    return {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
}

ResizeAxis axis_matrix(const ResizeMode &m, int64_t in, int64_t out, double scale) {
    ResizeAxis a;
    a.in = in;
    a.out = out;
    a.weights.assign(static_cast<size_t>(in * out), 0.0);
    for (int64_t i = 0; i < out; i++) {
        double x = original_coordinate(m, static_cast<double>(i), scale, in);
        double left = std::floor(x), ratio = x - left;
        if (ratio == 0) { // prefer the neighbours below x: x is the right one of the pair
            left -= 1;
            ratio = 1;
        }
        std::vector<double> c = coefficients(m, ratio);
        int64_t n = static_cast<int64_t>(c.size());
        int64_t first = static_cast<int64_t>(left) - (n / 2 - 1);
        if (m.exclude_outside) {
            double sum = 0;
            for (int64_t t = 0; t < n; t++) {
                int64_t j = first + t;
                if (j < 0 || j >= in)
                    c[static_cast<size_t>(t)] = 0;
                sum += c[static_cast<size_t>(t)];
            }
            for (double &w : c)
                w /= sum;
        }
        for (int64_t t = 0; t < n; t++) { // edge padding: outside neighbours read the edge
            int64_t j = std::min(std::max(first + t, int64_t(0)), in - 1);
            a.weights[static_cast<size_t>(i * in + j)] += c[static_cast<size_t>(t)];
        }
    }
    return a;
}

} // namespace

std::vector<ResizeAxis> resize_axes(const Node &n, const Shape &x, const Shape &out,
                                    const HostTensor *scales) {
    auto refuse = [&](const std::string &what) {
        user_error("NHC_EALG001", n.describe(), ": ", what);
    };
    ResizeMode m;
    m.mode = n.attr_string("mode", "nearest");
    m.coordinates = n.attr_string("coordinate_transformation_mode", "half_pixel");
    m.nearest = n.attr_string("nearest_mode", "round_prefer_floor");
    m.cubic_a = n.attr_float("cubic_coeff_a", -0.75);
    m.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
    if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
        refuse("mode '" + m.mode + "' is not nearest, linear or cubic");
    if (m.coordinates == "tf_crop_and_resize")
        refuse("coordinate_transformation_mode tf_crop_and_resize (a region of interest with "
               "extrapolation) is not supported yet");
    if (x.size() != out.size())
        refuse("expected an output of the input's rank " + std::to_string(x.size()) + ", found " +
               shape_str(out));
    if (scales != nullptr && scales->numel() != 0 &&
        scales->numel() != static_cast<int64_t>(x.size()))
        refuse("expected " + std::to_string(x.size()) + " scales, found " +
               std::to_string(scales->numel()));
    std::vector<ResizeAxis> axes;
    for (size_t a = 0; a < x.size(); a++) {
        if (x[a] == 0 || out[a] == 0)
            refuse("an empty axis " + std::to_string(a) + " cannot be resized");
        bool from_scales = scales != nullptr && scales->numel() != 0;
        double scale = from_scales ? scales->get_f64(static_cast<int64_t>(a))
                                   : static_cast<double>(out[a]) / static_cast<double>(x[a]);
        axes.push_back(axis_matrix(m, x[a], out[a], scale));
    }
    return axes;
}

namespace {

std::vector<double> transposed(const ResizeAxis &a) {
    std::vector<double> t(a.weights.size());
    for (int64_t i = 0; i < a.out; i++)
        for (int64_t j = 0; j < a.in; j++)
            t[static_cast<size_t>(j * a.out + i)] = a.weights[static_cast<size_t>(i * a.in + j)];
    return t;
}

/** I_k (x) W: k copies of the [out, in] matrix on the diagonal of a [k * out, k * in] one. */
std::vector<double> block_diagonal(const ResizeAxis &a, int64_t k) {
    std::vector<double> b(static_cast<size_t>(k * a.out * k * a.in), 0.0);
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < a.out; i++)
            for (int64_t h = 0; h < a.in; h++)
                b[static_cast<size_t>((j * a.out + i) * k * a.in + j * a.in + h)] =
                    a.weights[static_cast<size_t>(i * a.in + h)];
    return b;
}

/** The factor by which `a` repeats each input element (output i reads input i / factor: nearest
 *  upsampling by an integer, whatever the coordinate transform that gives it), or 0. */
int64_t replication_factor(const ResizeAxis &a) {
    if (a.out % a.in != 0)
        return 0;
    int64_t factor = a.out / a.in;
    for (int64_t i = 0; i < a.out; i++)
        for (int64_t j = 0; j < a.in; j++)
            if (a.weights[static_cast<size_t>(i * a.in + j)] != (j == i / factor ? 1.0 : 0.0))
                return 0;
    return factor;
}

/** Nearest upsampling by integers of the last two axes of [.., H, W] (the UNet decoder's 2x):
 *  x viewed [outer, H, 1, W, 1], expanded to [outer, H, sh, W, sw] and viewed as the output.
 *  The Expand copies each element where it goes (its schedule puts `outer` on partitions: one
 *  load, one broadcast copy and one store of whole rows per tile), where the interpolation
 *  matmuls move rows of W and 2W elements (64 and 128 bytes for sd_unet_64's 16-element rows)
 *  through the PE twice. Returns false, adding nothing, for any other resize. */
bool replicate_last_axes(Graph &g, const Node &n, const std::vector<ResizeAxis> &axes,
                         std::vector<Node> &out) {
    size_t rank = axes.size();
    if (rank < 3)
        return false;
    for (size_t a = 0; a + 2 < rank; a++)
        if (!axes[a].is_identity())
            return false;
    const ResizeAxis &h = axes[rank - 2], &w = axes[rank - 1];
    int64_t sh = replication_factor(h), sw = replication_factor(w);
    if (sh == 0 || sw == 0 || sh * sw == 1)
        return false;
    int64_t outer = shape_numel(g.value(n.inputs[0]).shape) / (h.in * w.in);
    GraphRewriter b(g, n, "__replicate", out);
    std::string viewed = b.reshape(n.inputs[0], {outer, h.in, 1, w.in, 1});
    std::string copies = b.compute("Expand", {viewed, b.constant_i64({outer, h.in, sh, w.in, sw})},
                                   DType::Float32, {outer, h.in, sh, w.in, sw});
    b.reshape(copies, g.value(n.outputs[0]).shape, n.outputs[0]);
    return true;
}

void lower_resize(Graph &g, const Node &n, int64_t pack_partitions, std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]);
    const Value &y = g.value(n.outputs[0]);
    // Sizes are the output shape's (given at run time, the inferred shape: a static compile is
    // specialised to it); scales are needed as values (frontend/ConstantOperands).
    const HostTensor *scales = nullptr;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        const Value &v = g.value(n.inputs[2]);
        nhc_assert(v.is_constant(), n.describe() << ": runtime scales (frontend check)");
        scales = v.constant.get();
    }
    std::vector<ResizeAxis> axes = resize_axes(n, x.shape, y.shape, scales);
    if (x.dtype != DType::Float32)
        user_error("NHC_EALG001", n.describe(), ": expected a float32 input, found ",
                   dtype_name(x.dtype));
    if (replicate_last_axes(g, n, axes, out))
        return;
    GraphRewriter b(g, n, "__resize", out);
    std::string cur = n.inputs[0];
    Shape shape = x.shape;
    int first_changed = -1; // its matmul, the last one, writes the node's output
    for (size_t a = axes.size(); a-- > 0;)
        if (!axes[a].is_identity())
            first_changed = static_cast<int>(a);
    // Innermost axis first: its matmul reads the input as stored (a linear layer).
    for (int a = static_cast<int>(axes.size()) - 1; a >= 0; a--) {
        const ResizeAxis &ax = axes[static_cast<size_t>(a)];
        if (ax.is_identity())
            continue;
        int64_t outer = 1, inner = 1;
        for (int i = 0; i < a; i++)
            outer *= shape[static_cast<size_t>(i)];
        for (size_t i = static_cast<size_t>(a) + 1; i < shape.size(); i++)
            inner *= shape[i];
        Shape next = shape;
        next[static_cast<size_t>(a)] = ax.out;
        std::string product;
        Node *mm;
        if (inner == 1) {
            product = b.value(DType::Float32, {outer, ax.out});
            mm = &b.add(
                "MatMul",
                {b.reshape(cur, {outer, ax.in}), b.constant_f32({ax.in, ax.out}, transposed(ax))},
                {product});
        } else { // [outer / k, k * out, inner]: the bytes of [outer, out, inner]
            int64_t k = resize_items_per_matmul(outer, ax, pack_partitions);
            product = b.value(DType::Float32, {outer / k, k * ax.out, inner});
            mm = &b.add("MatMul",
                        {b.constant_f32({k * ax.out, k * ax.in}, block_diagonal(ax, k)),
                         b.reshape(cur, {outer / k, k * ax.in, inner})},
                        {product});
        }
        mm->keep_precision = true;
        cur =
            a == first_changed ? b.reshape(product, next, n.outputs[0]) : b.reshape(product, next);
        shape = next;
    }
    if (first_changed < 0) // every axis kept: a copy
        b.add("Identity", {n.inputs[0]}, {n.outputs[0]});
}

} // namespace

int64_t resize_items_per_matmul(int64_t outer, const ResizeAxis &axis, int64_t pack_partitions) {
    for (int64_t k = outer; k > 1; k--)
        if (outer % k == 0 && k * axis.in <= pack_partitions && k * axis.out <= pack_partitions)
            return k;
    return 1;
}

int lower_resizes_to_matmuls(Graph &g, int64_t pack_partitions) {
    return rewrite_each(g, "Resize", [&](Graph &graph, const Node &n, std::vector<Node> &out) {
        lower_resize(graph, n, pack_partitions, out);
    });
}

} // namespace nhc
