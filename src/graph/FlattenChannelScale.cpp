#include "graph/FlattenChannelScale.h"

#include "graph/FlattenElementwise.h"
#include "graph/GraphRewriter.h"

namespace nhc {

namespace {

/** The number of leading axes of `out` that `in` keeps whole when the others are 1 (`in` of
 *  out's rank), or -1 when `in` is not of that form. */
int leading_axes_kept(const Shape &in, const Shape &out) {
    if (in.size() != out.size())
        return -1;
    size_t kept = 0;
    while (kept < in.size() && in[kept] == out[kept])
        kept++;
    for (size_t i = kept; i < in.size(); i++)
        if (in[i] != 1)
            return -1;
    return static_cast<int>(kept);
}

/** The leading axes that every broadcast operand keeps, if `n` is a channel scale: operands of
 *  the output's shape or runtime values [d0, ..., dk-1, 1, ..., 1] with one k in [1, rank - 1],
 *  at least one of each. Returns 0 when `n` does not qualify. */
int channel_scale_axes(const Graph &g, const Node &n) {
    if (!n.domain.empty() || n.outputs.size() != 1 || !is_elementwise_op(n.op_type))
        return 0;
    const Shape &out = g.value(n.outputs[0]).shape;
    if (out.size() < 3)
        return 0;
    int axes = 0;
    bool full = false;
    for (const std::string &in : n.inputs) {
        if (in.empty())
            return 0;
        const Value &v = g.value(in);
        if (v.shape == out) {
            full = true;
            continue;
        }
        int k = leading_axes_kept(v.shape, out);
        if (v.is_constant() || k < 1 || k >= static_cast<int>(out.size()) || (axes && k != axes))
            return 0;
        axes = k;
    }
    return full ? axes : 0;
}

} // namespace

int flatten_channel_scales(Graph &g) {
    std::vector<Node> out;
    int count = 0;
    for (const Node &n : g.nodes) {
        int k = channel_scale_axes(g, n);
        if (!k) {
            out.push_back(n);
            continue;
        }
        const Value &y = g.value(n.outputs[0]);
        int64_t rows = shape_numel(Shape(y.shape.begin(), y.shape.begin() + k));
        int64_t cols = shape_numel(y.shape) / rows;
        GraphRewriter b(g, n, "__channel_rows", out);
        Node flat = n;
        for (std::string &in : flat.inputs)
            in = b.reshape(in, g.value(in).shape == y.shape ? Shape{rows, cols} : Shape{rows, 1});
        flat.outputs = {b.value(y.dtype, {rows, cols})};
        out.push_back(flat);
        b.reshape(flat.outputs[0], y.shape, n.outputs[0]);
        count++;
    }
    g.nodes = std::move(out);
    return count;
}

} // namespace nhc
