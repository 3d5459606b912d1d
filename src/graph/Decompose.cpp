#include "graph/Decompose.h"

#include "graph/GraphRewriter.h"
#include "support/Error.h"

#include <functional>

namespace nhc {

namespace {

[[noreturn]] void refuse(const Node &n, const std::string &what) {
    user_error("NHC_EALG001", n.describe(), ": ", what);
}

/** The values of constant input `i` of `n` (empty when the optional input is absent). */
std::vector<double> constant_values(const Graph &g, const Node &n, size_t i) {
    if (i >= n.inputs.size() || n.inputs[i].empty())
        return {};
    const Value &v = g.value(n.inputs[i]);
    nhc_assert(v.is_constant(), n.describe()
                                    << ": input " << i << " should be constant (frontend check)");
    std::vector<double> out;
    for (int64_t e = 0; e < v.constant->numel(); e++)
        out.push_back(v.constant->get_f64(e));
    return out;
}

int64_t rank_of(const Graph &g, const std::string &v) {
    return static_cast<int64_t>(g.value(v).shape.size());
}

/** `in` (1 along `axis`) repeated `count` times along it. */
std::string expand(GraphRewriter &b, Graph &g, const std::string &in, int64_t axis, int64_t count,
                   const Shape &like) {
    Shape s = like;
    s[static_cast<size_t>(axis)] = count;
    return b.compute("Expand", {in, b.constant_i64(s)}, g.value(in).dtype, s);
}

/** Where(mask, x, 0); the mask keeps j - i >= k (upper) or <= k (lower). A constant k makes the
 *  mask a constant; a runtime k is compared with the constant j - i. */
void trilu(Graph &g, const Node &n, std::vector<Node> &out) {
    GraphRewriter b(g, n, "__trilu", out);
    const Value &x = g.value(n.inputs[0]);
    if (x.shape.size() < 2)
        refuse(n, "expected an input of rank 2 or more");
    bool upper = n.attr_int("upper", 1) != 0;
    int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
    bool k_given = n.inputs.size() > 1 && !n.inputs[1].empty();
    bool k_runtime = k_given && !g.value(n.inputs[1]).is_constant();
    int64_t k = k_given && !k_runtime ? static_cast<int64_t>(constant_values(g, n, 1)[0]) : 0;
    std::vector<double> diagonal_offset, mask;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            diagonal_offset.push_back(static_cast<double>(j - i));
            mask.push_back(upper ? j - i >= k : j - i <= k);
        }
    std::string m;
    if (k_runtime) {
        std::string offset = b.constant_of(DType::Int32, {rows, cols}, diagonal_offset);
        m = b.compute(upper ? "GreaterOrEqual" : "LessOrEqual", {offset, n.inputs[1]}, DType::Bool,
                      {rows, cols});
    } else {
        m = b.constant_of(DType::Bool, {rows, cols}, mask);
    }
    std::string zero = b.constant_of(x.dtype, {1}, {0.0});
    b.compute("Where", {m, n.inputs[0], zero}, x.dtype, x.shape, n.outputs[0]);
}

void tile(Graph &g, const Node &n, std::vector<Node> &out) {
    GraphRewriter b(g, n, "__tile", out);
    const Shape &in = g.value(n.inputs[0]).shape, &result = g.value(n.outputs[0]).shape;
    // The output's shape is all that says how many copies (the repeats may be a runtime input
    // whose shape inference cannot read): an output of no copies along an axis made a Concat of
    // nothing (the front-end fuzz target's finding 12).
    auto whole_multiple = [&](size_t d) {
        return in[d] > 0 && result[d] >= in[d] && result[d] % in[d] == 0;
    };
    if (result.size() != in.size())
        refuse(n, "expected an output of the input's rank " + std::to_string(in.size()) +
                      "; found " + shape_str(result));
    std::string cur = n.inputs[0];
    std::vector<int64_t> axes;
    for (size_t d = 0; d < in.size(); d++) {
        if (in[d] == result[d])
            continue;
        if (!whole_multiple(d))
            refuse(n, "the output shape " + shape_str(result) +
                          " is not a whole, nonzero multiple of the input's " + shape_str(in));
        axes.push_back(static_cast<int64_t>(d));
    }
    if (axes.empty() || in.empty()) {
        b.add("Identity", {cur}, {n.outputs[0]});
        return;
    }
    for (int64_t d : axes) {
        size_t a = static_cast<size_t>(d);
        std::vector<std::string> copies(static_cast<size_t>(result[a] / in[a]), cur);
        cur = b.concat(copies, d, d == axes.back() ? n.outputs[0] : "");
    }
}

/** The fill of `count` elements before (`front`) or after the data along `axis`. */
std::string pad_fill(GraphRewriter &b, Graph &g, const Node &n, const std::string &cur,
                     int64_t axis, int64_t count, bool front, double value) {
    const std::string mode = n.attr_string("mode", "constant");
    const Value &v = g.value(cur);
    int64_t len = v.shape[static_cast<size_t>(axis)];
    if (mode == "constant") {
        std::string c = b.constant_of(v.dtype, Shape(v.shape.size(), 1), {value});
        return expand(b, g, c, axis, count, v.shape);
    }
    if (len == 0)
        refuse(n, "edge and reflect padding of an empty axis");
    if (mode == "edge") {
        std::string edge = front ? b.slice(cur, axis, 0, 1) : b.slice(cur, axis, len - 1, len);
        return expand(b, g, edge, axis, count, v.shape);
    }
    if (mode == "reflect") {
        if (count >= len)
            refuse(n, "reflect padding as wide as the axis (" + std::to_string(len) + ")");
        // Reversed slices: x[count], ..., x[1] before; x[len-2], ..., x[len-1-count] after.
        // An end of -(len + 1) means "past the first element" for a negative step.
        int64_t end = front ? 0 : len - 2 - count;
        return b.slice(cur, axis, front ? count : len - 2, end < 0 ? -(len + 1) : end, -1);
    }
    refuse(n, "mode '" + mode + "' (expected constant, edge or reflect)");
}

void pad(Graph &g, const Node &n, std::vector<Node> &out) {
    GraphRewriter b(g, n, "__pad", out);
    int64_t rank = rank_of(g, n.inputs[0]);
    std::vector<double> pads = constant_values(g, n, 1); // before opset 11: attributes
    if (n.inputs.size() <= 1)
        for (int64_t p : n.attr_ints("pads"))
            pads.push_back(static_cast<double>(p));
    std::vector<double> value = constant_values(g, n, 2);
    double fill = value.empty() ? n.attr_float("value", 0.0) : value[0];
    std::vector<double> axes_v = constant_values(g, n, 3);
    std::vector<int64_t> axes;
    for (double a : axes_v)
        axes.push_back(a < 0 ? static_cast<int64_t>(a) + rank : static_cast<int64_t>(a));
    if (axes.empty())
        for (int64_t d = 0; d < rank; d++)
            axes.push_back(d);
    if (pads.size() != 2 * axes.size())
        refuse(n, "expected " + std::to_string(2 * axes.size()) + " pads, found " +
                      std::to_string(pads.size()));
    std::string cur = n.inputs[0];
    size_t count = axes.size();
    for (size_t i = 0; i < count; i++) {
        int64_t d = axes[i];
        auto before = static_cast<int64_t>(pads[i]), after = static_cast<int64_t>(pads[i + count]);
        int64_t len = g.value(cur).shape[static_cast<size_t>(d)];
        if (before < 0 || after < 0) // negative pads crop
            cur =
                b.slice(cur, d, std::max<int64_t>(-before, 0), len - std::max<int64_t>(-after, 0));
        std::vector<std::string> parts;
        if (before > 0)
            parts.push_back(pad_fill(b, g, n, cur, d, before, true, fill));
        parts.push_back(cur);
        if (after > 0)
            parts.push_back(pad_fill(b, g, n, cur, d, after, false, fill));
        if (parts.size() > 1)
            cur = b.concat(parts, d);
    }
    b.add("Identity", {cur}, {n.outputs[0]});
}

void one_hot(Graph &g, const Node &n, std::vector<Node> &out) {
    GraphRewriter b(g, n, "__onehot", out);
    const Value &indices = g.value(n.inputs[0]), &result = g.value(n.outputs[0]);
    int64_t rank = static_cast<int64_t>(result.shape.size());
    int64_t axis = n.attr_int("axis", -1);
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank || g.value(n.inputs[2]).shape != Shape{2})
        refuse(n, "expected an axis within the output's rank and two values");
    size_t a = static_cast<size_t>(axis);
    int64_t depth = result.shape[a];
    std::string idx = n.inputs[0];
    if (dtype_is_float(indices.dtype)) { // ONNX's reference takes float indices as integers
        idx = b.value(DType::Int32, indices.shape);
        b.add("Cast", {n.inputs[0]}, {idx}).attrs["to"] =
            static_cast<int64_t>(dtype_to_onnx(DType::Int32));
    }
    Shape narrow = result.shape;
    narrow[a] = 1;
    std::string hit = b.index_hits(b.reshape(idx, narrow), a, depth, result.shape);
    std::string off = b.slice(n.inputs[2], 0, 0, 1), on = b.slice(n.inputs[2], 0, 1, 2);
    b.compute("Where", {hit, on, off}, result.dtype, result.shape, n.outputs[0]);
}

void compress(Graph &g, const Node &n, std::vector<Node> &out) {
    GraphRewriter b(g, n, "__compress", out);
    std::vector<double> cond = constant_values(g, n, 1);
    std::string cur = n.inputs[0];
    int64_t axis = 0;
    if (n.has_attr("axis")) {
        axis = n.attr_int("axis", 0);
        axis = axis < 0 ? axis + rank_of(g, cur) : axis;
    } else {
        cur = b.reshape(cur, {shape_numel(g.value(cur).shape)});
    }
    std::vector<std::string> runs;
    for (size_t i = 0; i < cond.size();) {
        if (cond[i] == 0) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < cond.size() && cond[j] != 0)
            j++;
        runs.push_back(b.slice(cur, axis, static_cast<int64_t>(i), static_cast<int64_t>(j)));
        i = j;
    }
    if (runs.empty())
        refuse(n, "a condition that selects nothing (an empty output)");
    if (runs.size() == 1)
        b.add("Identity", {runs[0]}, {n.outputs[0]});
    else
        b.concat(runs, axis, n.outputs[0]);
}

/** EyeLike's output becomes a constant; no node replaces it. */
void eye_like(Graph &g, const Node &n, std::vector<Node> &) {
    Value &result = g.values.at(n.outputs[0]);
    if (result.shape.size() != 2)
        refuse(n, "expected a 2-D input");
    int64_t k = n.attr_int("k", 0), rows = result.shape[0], cols = result.shape[1];
    auto t = std::make_shared<HostTensor>(result.dtype, result.shape);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            t->set_f64(i * cols + j, j - i == k ? 1.0 : 0.0);
    result.constant = std::move(t);
}

/** MeanVarianceNormalization as ONNX's function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) +
 *  1e-9), the means over `axes` (default 0, 2, 3) kept as broadcast dims. */
void mean_variance_normalization(Graph &g, const Node &n, std::vector<Node> &out) {
    GraphRewriter b(g, n, "__mvn", out);
    const Value &x = g.value(n.inputs[0]);
    std::vector<int64_t> axes = n.attr_ints("axes");
    if (axes.empty())
        axes = {0, 2, 3};
    Shape kept = x.shape;
    for (int64_t &a : axes) {
        a = a < 0 ? a + static_cast<int64_t>(x.shape.size()) : a;
        if (a < 0 || a >= static_cast<int64_t>(x.shape.size()))
            refuse(n, "an axis outside the input's rank");
        kept[static_cast<size_t>(a)] = 1;
    }
    DType t = x.dtype;
    std::string mean = b.reduce("ReduceMean", n.inputs[0], axes, true, kept);
    std::string square = b.compute("Mul", {n.inputs[0], n.inputs[0]}, t, x.shape);
    std::string mean_of_square = b.reduce("ReduceMean", square, axes, true, kept);
    std::string square_of_mean = b.compute("Mul", {mean, mean}, t, kept);
    std::string variance = b.compute("Sub", {mean_of_square, square_of_mean}, t, kept);
    std::string std_dev = b.compute("Sqrt", {variance}, t, kept);
    std::string denominator = b.compute("Add", {std_dev, b.constant_of(t, {1}, {1e-9})}, t, kept);
    std::string centred = b.compute("Sub", {n.inputs[0], mean}, t, x.shape);
    b.compute("Div", {centred, denominator}, t, x.shape, n.outputs[0]);
}

/** LRN: x / (bias + alpha / size * s)^beta, s the sum of squares over the channels
 *  [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]: the squares zero-padded along the
 *  channel axis, then `size` shifted slices added. */
void local_response_normalization(Graph &g, const Node &n, std::vector<Node> &out) {
    GraphRewriter b(g, n, "__lrn", out);
    const Value &x = g.value(n.inputs[0]);
    int64_t size = n.attr_int("size", 0);
    if (x.shape.size() < 3 || size < 1)
        refuse(n, "expected an [N, C, ...] input and a positive size");
    DType t = x.dtype;
    int64_t channels = x.shape[1], before = (size - 1) / 2, after = size - 1 - before;
    std::string square = b.compute("Mul", {n.inputs[0], n.inputs[0]}, t, x.shape);
    std::vector<std::string> parts;
    std::string zero = b.constant_of(t, Shape(x.shape.size(), 1), {0.0});
    if (before > 0)
        parts.push_back(expand(b, g, zero, 1, before, x.shape));
    parts.push_back(square);
    if (after > 0)
        parts.push_back(expand(b, g, zero, 1, after, x.shape));
    std::string padded = parts.size() > 1 ? b.concat(parts, 1) : square;
    std::string sum = b.slice(padded, 1, 0, channels);
    for (int64_t shift = 1; shift < size; shift++)
        sum = b.compute("Add", {sum, b.slice(padded, 1, shift, shift + channels)}, t, x.shape);
    double alpha = n.attr_float("alpha", 1e-4), beta = n.attr_float("beta", 0.75),
           bias = n.attr_float("bias", 1.0);
    std::string scaled =
        b.compute("Mul", {sum, b.constant_of(t, {1}, {alpha / double(size)})}, t, x.shape);
    std::string base = b.compute("Add", {scaled, b.constant_of(t, {1}, {bias})}, t, x.shape);
    std::string denominator = b.compute("Pow", {base, b.constant_of(t, {1}, {beta})}, t, x.shape);
    b.compute("Div", {n.inputs[0], denominator}, t, x.shape, n.outputs[0]);
}

/** ConstantOfShape given its shape at run time: the inferred output shape filled with `value`. */
void constant_of_shape(Graph &g, const Node &n, std::vector<Node> &) {
    Value &result = g.values.at(n.outputs[0]);
    double fill = 0;
    if (auto it = n.attrs.find("value"); it != n.attrs.end()) {
        const auto *t = std::get_if<HostTensor>(&it->second);
        if (!t || t->numel() != 1)
            refuse(n, "attribute 'value' must be a one-element tensor");
        fill = t->get_f64(0);
    }
    auto t = std::make_shared<HostTensor>(result.dtype, result.shape);
    for (int64_t i = 0; i < t->numel(); i++)
        t->set_f64(i, fill);
    result.constant = std::move(t);
}

} // namespace

int decompose_operators(Graph &g) {
    using Lower = std::function<void(Graph &, const Node &, std::vector<Node> &)>;
    const std::vector<std::pair<const char *, Lower>> lowerings = {
        {"Compress", compress},
        {"ConstantOfShape", constant_of_shape},
        {"EyeLike", eye_like},
        {"LRN", local_response_normalization},
        {"MeanVarianceNormalization", mean_variance_normalization},
        {"OneHot", one_hot},
        {"Pad", pad},
        {"Tile", tile},
        {"Trilu", trilu}};
    int count = 0;
    for (const auto &[op, lower] : lowerings)
        count += rewrite_each(g, op, lower);
    return count;
}

} // namespace nhc
