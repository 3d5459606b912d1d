#ifndef NHC_GRAPH_GRAPHREWRITER_H
#define NHC_GRAPH_GRAPHREWRITER_H

/** \file
 * Builds the nodes that replace one node in a graph pass (ReduceLastAxis, ConvIm2Col): fresh
 * values and nodes named after the replaced node, views (Reshape), Transposes and constants.
 * Nodes are appended to the pass's output list; a reference returned by add() is valid until
 * the next node is added.
 */

#include "graph/Graph.h"

#include <algorithm>
#include <memory>

namespace nhc {

/** Builds the nodes that replace one node, with fresh value names derived from it. */
class GraphRewriter {
public:
    GraphRewriter(Graph &g, const Node &n, const std::string &suffix, std::vector<Node> &out)
        : g_(g), base_(n.name + suffix), out_(out) {}

    std::string value(DType t, const Shape &shape) {
        std::string name = base_ + std::to_string(count_++);
        g_.values[name] = Value{name, t, shape, nullptr};
        return name;
    }
    /** A fresh constant value holding `t`. */
    std::string constant(std::shared_ptr<const HostTensor> t) {
        std::string name = value(t->dtype(), t->shape());
        g_.values[name].constant = std::move(t);
        return name;
    }
    /** A constant of type `t` and `shape` holding `data` (row-major). */
    std::string constant_of(DType t, const Shape &shape, const std::vector<double> &data) {
        auto c = std::make_shared<HostTensor>(t, shape);
        for (size_t i = 0; i < data.size(); i++)
            c->set_f64(static_cast<int64_t>(i), data[i]);
        return constant(std::move(c));
    }
    std::string constant_f32(const Shape &shape, const std::vector<double> &data) {
        return constant_of(DType::Float32, shape, data);
    }
    std::string constant_i64(const std::vector<int64_t> &v) {
        std::string name = base_ + std::to_string(count_++);
        auto t = std::make_shared<HostTensor>(HostTensor::from_i64(v));
        g_.values[name] = Value{name, DType::Int64, t->shape(), t};
        return name;
    }
    /** `in` viewed with `shape`; written into `out_name` if given. */
    std::string reshape(const std::string &in, const Shape &shape, std::string out_name = "") {
        if (out_name.empty())
            out_name = value(g_.value(in).dtype, shape);
        add("Reshape", {in, constant_i64(shape)}, {out_name});
        return out_name;
    }
    std::string transpose(const std::string &in, const std::vector<int64_t> &perm,
                          std::string out_name = "") {
        const Value &v = g_.value(in);
        Shape shape;
        for (int64_t p : perm)
            shape.push_back(v.shape[static_cast<size_t>(p)]);
        if (out_name.empty())
            out_name = value(v.dtype, shape);
        Node &t = add("Transpose", {in}, {out_name});
        t.attrs["perm"] = perm;
        return out_name;
    }
    /** A node `op` of `inputs` writing a fresh value of `t` and `shape` (or `out_name`). */
    std::string compute(const char *op, std::vector<std::string> inputs, DType t,
                        const Shape &shape, const std::string &out_name = "") {
        std::string out = out_name.empty() ? value(t, shape) : out_name;
        add(op, std::move(inputs), {out});
        return out;
    }
    /** A Reduce* node over `axes` (an input from opset 13 for ReduceSum, an attribute
     *  otherwise; none: every axis). */
    std::string reduce(const char *op, const std::string &in, const std::vector<int64_t> &axes,
                       bool keepdims, const Shape &shape, const std::string &out_name = "") {
        std::string out = out_name.empty() ? value(g_.value(in).dtype, shape) : out_name;
        bool axes_input = std::string(op) == "ReduceSum" && g_.opset >= 13;
        std::vector<std::string> inputs = {in};
        if (!axes.empty() && axes_input)
            inputs.push_back(constant_i64(axes));
        Node &r = add(op, inputs, {out});
        r.attrs["keepdims"] = int64_t(keepdims ? 1 : 0);
        if (!axes.empty() && !axes_input)
            r.attrs["axes"] = axes;
        return out;
    }
    /** [begin, end) of `in` along `axis` with `step`, as a Slice with constant bounds. For a
     *  negative step, an end below 0 means past the first element (ONNX clamps it to -1). */
    std::string slice(const std::string &in, int64_t axis, int64_t begin, int64_t end,
                      int64_t step = 1) {
        Shape s = g_.value(in).shape;
        s[static_cast<size_t>(axis)] = step > 0 ? end - begin : begin - std::max<int64_t>(end, -1);
        std::string out = value(g_.value(in).dtype, s);
        std::vector<std::string> inputs = {in, constant_i64({begin}), constant_i64({end}),
                                           constant_i64({axis})};
        if (step != 1)
            inputs.push_back(constant_i64({step}));
        add("Slice", std::move(inputs), {out});
        return out;
    }
    /** `parts` concatenated along `axis` (into `out_name` if given). */
    std::string concat(const std::vector<std::string> &parts, int64_t axis,
                       const std::string &out_name = "") {
        Shape s = g_.value(parts[0]).shape;
        s[static_cast<size_t>(axis)] = 0;
        for (const std::string &p : parts)
            s[static_cast<size_t>(axis)] += g_.value(p).shape[static_cast<size_t>(axis)];
        std::string out = out_name.empty() ? value(g_.value(parts[0]).dtype, s) : out_name;
        add("Concat", parts, {out}).attrs["axis"] = axis;
        return out;
    }
    /** Bool of `shape`: where `indices` (1 along `axis`) equals the position along `axis`
     *  (0 .. count-1), a negative index counting from the end (as ONNX's one-hot operators). */
    std::string index_hits(const std::string &indices, size_t axis, int64_t count,
                           const Shape &shape) {
        Shape along(shape.size(), 1);
        along[axis] = count;
        std::vector<double> pos, neg;
        for (int64_t i = 0; i < count; i++) {
            pos.push_back(static_cast<double>(i));
            neg.push_back(static_cast<double>(i - count));
        }
        std::string hit_pos =
            compute("Equal", {indices, constant_of(DType::Int32, along, pos)}, DType::Bool, shape);
        std::string hit_neg =
            compute("Equal", {indices, constant_of(DType::Int32, along, neg)}, DType::Bool, shape);
        return compute("Or", {hit_pos, hit_neg}, DType::Bool, shape);
    }
    Node &add(const std::string &op, std::vector<std::string> inputs,
              std::vector<std::string> outputs) {
        Node n;
        n.name = base_ + std::to_string(count_++);
        n.op_type = op;
        n.inputs = std::move(inputs);
        n.outputs = std::move(outputs);
        out_.push_back(std::move(n));
        return out_.back();
    }
    /** A constant or runtime value of `v`'s elements in `shape` (same number of elements). */
    std::string flattened(const std::string &v, const Shape &shape) {
        const Value &val = g_.value(v);
        if (!val.is_constant())
            return reshape(v, shape);
        std::string name = value(val.dtype, shape);
        auto t = std::make_shared<HostTensor>(val.dtype, shape);
        t->mutable_bytes() = val.constant->bytes().to_vector();
        g_.values[name].constant = t;
        return name;
    }

private:
    Graph &g_;
    std::string base_;
    std::vector<Node> &out_;
    int count_ = 0;
};

/** Replaces every node for which `match(g, node)` holds by the nodes `lower(g, node, out)`
 *  appends to `out` (the other nodes stay, in order); returns how many were replaced. */
template <typename Match, typename Lower>
int rewrite_matching(Graph &g, Match match, Lower lower) {
    std::vector<Node> out;
    int count = 0;
    for (const Node &n : g.nodes) {
        if (match(g, n)) {
            lower(g, n, out);
            count++;
        } else {
            out.push_back(n);
        }
    }
    g.nodes = std::move(out);
    return count;
}

/** rewrite_matching of every default-domain node of `op_type`. */
template <typename Lower>
int rewrite_each(Graph &g, const char *op_type, Lower lower) {
    return rewrite_matching(
        g,
        [op_type](const Graph &, const Node &n) {
            return n.op_type == op_type && n.domain.empty();
        },
        lower);
}

} // namespace nhc

#endif
