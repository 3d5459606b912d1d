#include "graph/FlattenElementwise.h"

#include "graph/CausalMask.h"
#include "graph/GraphLimits.h"
#include "graph/GroupNorm.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace nhc {

const std::set<std::string> &elementwise_op_types() {
    static const std::set<std::string> ops = {"Abs",         "Add",       "Cast",
                                              "Ceil",        "Celu",      "Clip",
                                              "Div",         "Elu",       "Erf",
                                              "Exp",         "Floor",     "Gelu",
                                              "HardSigmoid", "HardSwish", "LeakyRelu",
                                              "Log",         "Max",       "Mean",
                                              "Min",         "Mod",       "Mul",
                                              "Neg",         "Pow",       "PRelu",
                                              "Reciprocal",  "Relu",      "Round",
                                              "Selu",        "Shrink",    "Sigmoid",
                                              "Sign",        "Softplus",  "Softsign",
                                              "Sqrt",        "Sub",       "Sum",
                                              "Swish",       "Tanh",      "ThresholdedRelu",
                                              "Where",       "Sin",       "Cos",
                                              "Tan",         "Atan",      "Asin",
                                              "Acos",        "Sinh",      "Cosh",
                                              "Asinh",       "Acosh",     "Atanh"};
    return ops;
}

bool is_elementwise_op(const std::string &op) {
    return elementwise_op_types().count(op) != 0;
}

namespace {

bool is_flattening_view(const Graph &g, const Node &n) {
    if (n.op_type != "Reshape" || !n.domain.empty() || n.inputs.empty() || n.outputs.size() != 1)
        return false;
    const Shape &in = g.value(n.inputs[0]).shape, &out = g.value(n.outputs[0]).shape;
    return in.size() == 2 && out.size() > 2 && out.back() == in.back() &&
           shape_numel(out) == shape_numel(in);
}

/** A Reshape, Squeeze, Unsqueeze or Identity (views in element order) to a shape of rank 3 or
 *  more with its input's last axis. */
bool keeps_rows(const Graph &g, const Node &n) {
    static const std::set<std::string> in_order = {"Reshape", "Squeeze", "Unsqueeze", "Identity"};
    if (!n.domain.empty() || !in_order.count(n.op_type) || n.outputs.size() != 1)
        return false;
    const Shape &in = g.value(n.inputs[0]).shape, &out = g.value(n.outputs[0]).shape;
    return !in.empty() && out.size() > 2 && out.back() == in.back() &&
           shape_numel(out) == shape_numel(in);
}

/** A constant that broadcasts along the last axis only: [], [N] or [1, ..., 1, N]. Returns its
 *  2-D form's name (a [N] copy for the last case), or "" when it does not qualify. */
std::string last_axis_constant(Graph &g, const Value &v, int64_t n) {
    if (!v.is_constant())
        return "";
    if (v.shape.empty() || v.shape == Shape{n} || v.shape == Shape{1})
        return v.name;
    for (size_t i = 0; i + 1 < v.shape.size(); i++)
        if (v.shape[i] != 1)
            return "";
    if (v.shape.back() != n)
        return "";
    std::string name = v.name + "__row";
    if (!g.has_value(name)) {
        auto t = std::make_shared<HostTensor>(v.dtype, Shape{n});
        t->mutable_bytes() = v.constant->bytes().to_vector();
        g.values[name] = Value{name, v.dtype, {n}, t};
    }
    return name;
}

/** A node that computes row by row along the last axis: elementwise, or LayerNormalization /
 *  Softmax over the last axis with one output. */
bool is_row_wise(const Graph &g, const Node &n) {
    if (!n.domain.empty() || n.outputs.size() != 1 || n.inputs.empty())
        return false;
    if (is_elementwise_op(n.op_type))
        return true;
    if (n.op_type != "LayerNormalization" && n.op_type != "Softmax")
        return false;
    int64_t rank = static_cast<int64_t>(g.value(n.inputs[0]).shape.size());
    int64_t axis = n.attr_int("axis", -1);
    return axis == -1 || axis == rank - 1;
}

/** The name of a flattening view of `v` ([..., N] -> [rows, N]), made as a new Reshape node. */
std::string flat_view_of(Graph &g, const Value &v, std::vector<Node> &made) {
    std::string name = v.name + "__2d_view";
    if (g.has_value(name))
        return name;
    int64_t cols = v.shape.back(), rows = shape_numel(v.shape) / cols;
    std::string shape = shape_constant(g, name + "__shape", {rows, cols});
    g.values[name] = Value{name, v.dtype, {rows, cols}, nullptr};
    Node view;
    view.name = name;
    view.op_type = "Reshape";
    view.inputs = {v.name, shape};
    view.outputs = {name};
    made.push_back(view);
    return name;
}

} // namespace

bool joins_conv_group(const Graph &g, const ValueIndex &x, std::string v,
                      const ConvLimits &conv_limits) {
    // A group holds the ConvTaps and at most kMaxFusedNodes - 1 nodes after it, the node reading
    // v among them: past kMaxFusedNodes - 2 elementwise nodes back it cannot join.
    size_t crossed = 0;
    for (auto p = x.producer.find(v); p != x.producer.end(); p = x.producer.find(v)) {
        const Node &n = *p->second;
        auto r = x.readers.find(v);
        if (r == x.readers.end() || r->second != 1)
            return false;
        if (n.domain == "nhc" && n.op_type == "ConvTaps")
            return conv_epilogue_joins(g.value(n.outputs[0]).shape.at(1), conv_limits);
        if (!n.domain.empty() || !is_elementwise_op(n.op_type))
            return false;
        auto same = std::find_if(n.inputs.begin(), n.inputs.end(), [&](const std::string &i) {
            return !i.empty() && !g.value(i).is_constant() &&
                   g.value(i).shape == g.value(n.outputs[0]).shape;
        });
        if (same == n.inputs.end() || ++crossed > kMaxFusedNodes - 2)
            return false;
        v = *same;
    }
    return false;
}

bool is_view_op(const std::string &op_type) {
    static const std::set<std::string> views = {"Reshape", "Transpose", "Flatten",
                                                "Squeeze", "Unsqueeze", "Identity"};
    return views.count(op_type) != 0;
}

bool computed_away_from_matmuls(const Graph &g, const ValueIndex &x, std::string v) {
    // Past a group's length of row-wise nodes a value is in no matmul's group: away from it.
    size_t crossed = 0;
    for (auto p = x.producer.find(v); p != x.producer.end(); p = x.producer.find(v)) {
        if (++crossed > kMaxFusedNodes)
            return true;
        const Node &n = *p->second;
        // A causal mask is row-wise too, though never flattened itself (graph/CausalMask.h).
        bool through = (n.domain.empty() && (is_view_op(n.op_type) || is_row_wise(g, n))) ||
                       is_triangular_where(n);
        if (!through)
            return !(n.domain.empty() && (n.op_type == "MatMul" || n.op_type == "Gemm"));
        auto runtime = std::find_if(n.inputs.begin(), n.inputs.end(), [&](const std::string &i) {
            return !i.empty() && !g.value(i).is_constant();
        });
        if (runtime == n.inputs.end())
            return false;
        v = *runtime;
    }
    return false;
}

int flatten_elementwise_after_views(Graph &g, const ConvLimits &conv_limits) {
    std::map<std::string, std::string> flat; // N-D value -> its 2-D form
    std::set<std::string> rewritten_nd;      // N-D values no node produces any more
    int count = 0;
    std::map<size_t, std::vector<Node>> views_before; // new views of runtime operands, by node
    const ValueIndex before = index_values(g);        // as the graph was before the pass
    for (size_t index = 0; index < g.nodes.size(); index++) {
        Node &n = g.nodes[index];
        if (is_flattening_view(g, n)) {
            flat[n.outputs[0]] = n.inputs[0];
            continue;
        }
        // A view of such a view that keeps the element order and the last axis (ViT's
        // [197, 768] -> [197, 1, 768] -> [1, 197, 768], the second a unit-axis Transpose made a
        // Reshape): the same 2-D form, so that the residual Add after the attention's output
        // Gemm joins its epilogue.
        if (auto f = n.inputs.empty() ? flat.end() : flat.find(n.inputs[0]);
            f != flat.end() && keeps_rows(g, n)) {
            flat[n.outputs[0]] = f->second;
            continue;
        }
        if (!is_row_wise(g, n))
            continue;
        // A chain joining a convolution's group, or reading a GroupNormRows's tiles of rows
        // (graph/GroupNorm: it joins that group), keeps its producer's shape.
        if (is_elementwise_op(n.op_type) &&
            std::any_of(n.inputs.begin(), n.inputs.end(), [&](const std::string &in) {
                auto p = before.producer.find(in);
                bool tiled_rows = p != before.producer.end() && is_group_norm_rows(*p->second);
                return !in.empty() && (tiled_rows || joins_conv_group(g, before, in, conv_limits));
            }))
            continue;
        const Value &out = g.value(n.outputs[0]);
        if (out.shape.size() < 3)
            continue;
        int64_t cols = out.shape.back(), rows = shape_numel(out.shape) / cols;
        std::vector<std::string> inputs;
        // An input already flat, or (away from matmuls, whose groups keep their N-D shapes for
        // the attention fusion) a runtime input of the output's shape: a convolution's or
        // resize's [N, C, H, W] output computed as [N*C*H, W] rows instead of H rows per tile.
        bool flat_input = false, seed = false, fits = true;
        for (const std::string &in : n.inputs) {
            if (in.empty()) {
                inputs.push_back(in);
                continue;
            }
            auto f = flat.find(in);
            if (f != flat.end() && g.value(in).shape == out.shape) {
                inputs.push_back(f->second);
                flat_input = true;
                continue;
            }
            const Value &v = g.value(in);
            // A runtime operand of the output's shape (a residual) will be read through a view,
            // made below once the node is known to qualify.
            bool same_shape_runtime = !v.is_constant() && v.shape == out.shape;
            seed = seed || (same_shape_runtime && computed_away_from_matmuls(g, before, in));
            std::string c = same_shape_runtime ? in : last_axis_constant(g, v, cols);
            if (c.empty()) {
                fits = false;
                break;
            }
            inputs.push_back(c);
        }
        if (!fits || !(flat_input || seed) || inputs.size() != n.inputs.size())
            continue;
        for (std::string &in : inputs)
            if (!in.empty() && g.value(in).shape == out.shape)
                in = flat_view_of(g, g.value(in), views_before[index]);
        std::string out2d = out.name + "__2d";
        g.values[out2d] = Value{out2d, out.dtype, {rows, cols}, nullptr};
        flat[out.name] = out2d;
        rewritten_nd.insert(out.name);
        n.inputs = inputs;
        n.outputs = {out2d};
        count++;
    }
    // Re-insert the view where an N-D value that lost its producer is still read.
    std::set<std::string> read(g.outputs.begin(), g.outputs.end());
    for (const Node &n : g.nodes)
        read.insert(n.inputs.begin(), n.inputs.end());
    std::vector<Node> nodes;
    for (size_t index = 0; index < g.nodes.size(); index++) {
        Node &n = g.nodes[index];
        if (auto v = views_before.find(index); v != views_before.end())
            nodes.insert(nodes.end(), v->second.begin(), v->second.end());
        nodes.push_back(n);
        if (n.outputs.size() != 1)
            continue;
        for (const std::string &nd : rewritten_nd) {
            if (flat.at(nd) != n.outputs[0] || !read.count(nd))
                continue;
            std::string shape = shape_constant(g, nd + "__shape", g.value(nd).shape);
            Node view;
            view.name = nd + "__unflatten";
            view.op_type = "Reshape";
            view.inputs = {n.outputs[0], shape};
            view.outputs = {nd};
            nodes.push_back(view);
        }
    }
    // Views that nothing reads any more (the original unflatten of a rewritten chain) go.
    std::set<std::string> still_read(g.outputs.begin(), g.outputs.end());
    for (const Node &n : nodes)
        still_read.insert(n.inputs.begin(), n.inputs.end());
    g.nodes.clear();
    for (Node &n : nodes)
        if (!(n.op_type == "Reshape" && n.outputs.size() == 1 && !still_read.count(n.outputs[0])))
            g.nodes.push_back(std::move(n));
    return count;
}

} // namespace nhc
