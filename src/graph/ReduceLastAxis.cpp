#include "graph/ReduceLastAxis.h"

#include "graph/GraphRewriter.h"
#include "support/Error.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <set>

namespace nhc {

namespace {

int64_t product(const Shape &s, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; i++)
        p *= s[i];
    return p;
}

int64_t normalized_axis(int64_t a, int64_t rank) {
    return a < 0 ? a + rank : a;
}

bool rewrite_layer_norm(Graph &g, const Node &n, std::vector<Node> &out) {
    const Shape x = g.value(n.inputs[0]).shape;
    int64_t rank = static_cast<int64_t>(x.size()),
            a = normalized_axis(n.attr_int("axis", -1), rank);
    if (a < 0 || a >= rank - 1)
        return false;
    Shape normalized(x.begin() + a, x.end());
    for (size_t i = 1; i < n.inputs.size(); i++)
        if (!n.inputs[i].empty() && g.value(n.inputs[i]).shape != normalized)
            return false; // a scale or bias that broadcasts
    int64_t rows = product(x, 0, static_cast<size_t>(a)), cols = product(x, a, x.size());
    GraphRewriter r(g, n, "__last_axis", out);
    Node ln = n;
    ln.inputs[0] = r.reshape(n.inputs[0], {rows, cols});
    for (size_t i = 1; i < n.inputs.size(); i++)
        if (!n.inputs[i].empty())
            ln.inputs[i] = r.flattened(n.inputs[i], {cols});
    ln.attrs["axis"] = int64_t(-1);
    std::vector<std::pair<std::string, std::string>> views; // 2-D result -> original output
    for (size_t o = 0; o < n.outputs.size(); o++) {
        if (n.outputs[o].empty())
            continue;
        const Value &v = g.value(n.outputs[o]);
        ln.outputs[o] = r.value(v.dtype, {rows, o == 0 ? cols : 1});
        views.emplace_back(ln.outputs[o], n.outputs[o]);
    }
    out.push_back(ln);
    for (const auto &[flat, original] : views)
        r.reshape(flat, g.value(original).shape, original);
    return true;
}

/** A one-filled (or zero-filled) fp32 constant of `n` elements. */
std::string filled(Graph &g, GraphRewriter &r, int64_t n, float value) {
    std::string name = r.value(DType::Float32, {n});
    auto t = std::make_shared<HostTensor>(DType::Float32, Shape{n});
    for (int64_t i = 0; i < n; i++)
        t->set_f64(i, value);
    g.values[name].constant = t;
    return name;
}

// InstanceNormalization normalises each (n, c) over the spatial axes: a LayerNormalization of
// the [N * C, spatial] view (scale 1, bias 0), then the per-channel scale and bias as [C, 1...]
// views broadcast by Mul and Add.
bool rewrite_instance_norm(Graph &g, const Node &n, std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]);
    if (x.shape.size() < 3 || n.inputs.size() != 3 || x.dtype != DType::Float32)
        return false;
    int64_t c = x.shape[1], rows = x.shape[0] * c, cols = product(x.shape, 2, x.shape.size());
    GraphRewriter r(g, n, "__last_axis", out);
    Node ln;
    ln.name = n.name + "__layer_norm";
    ln.op_type = "LayerNormalization";
    ln.inputs = {r.reshape(n.inputs[0], {rows, cols}), filled(g, r, cols, 1.0f),
                 filled(g, r, cols, 0.0f)};
    ln.outputs = {r.value(x.dtype, {rows, cols})};
    ln.attrs["axis"] = int64_t(-1);
    ln.attrs["epsilon"] = n.attr_float("epsilon", 1e-5);
    out.push_back(ln);
    std::string normalised = r.reshape(ln.outputs[0], x.shape);
    Shape per_channel(x.shape.size() - 1, 1);
    per_channel[0] = c;
    std::string scaled = r.value(x.dtype, x.shape);
    r.add("Mul", {normalised, r.flattened(n.inputs[1], per_channel)}, {scaled});
    r.add("Add", {scaled, r.flattened(n.inputs[2], per_channel)}, {n.outputs[0]});
    return true;
}

bool rewrite_softmax(Graph &g, const Node &n, std::vector<Node> &out) {
    int64_t rank = static_cast<int64_t>(g.value(n.inputs[0]).shape.size());
    int64_t a = normalized_axis(n.attr_int("axis", -1), rank);
    if (a < 0 || a >= rank - 1)
        return false;
    std::vector<int64_t> perm, inverse(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; i++)
        if (i != a)
            perm.push_back(i);
    perm.push_back(a);
    for (int64_t i = 0; i < rank; i++)
        inverse[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
    GraphRewriter r(g, n, "__last_axis", out);
    std::string moved = r.transpose(n.inputs[0], perm);
    Node sm = n;
    sm.inputs = {moved};
    sm.outputs = {r.value(g.value(n.outputs[0]).dtype, g.value(moved).shape)};
    sm.attrs["axis"] = int64_t(-1);
    out.push_back(sm);
    r.transpose(sm.outputs[0], inverse, n.outputs[0]);
    return true;
}

bool rewrite_reduce(Graph &g, const Node &n, int opset, std::vector<Node> &out) {
    const Shape x = g.value(n.inputs[0]).shape;
    int64_t rank = static_cast<int64_t>(x.size());
    bool arg = n.op_type == "ArgMax" || n.op_type == "ArgMin";
    bool global = n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool";
    std::vector<int64_t> axes = n.attr_ints("axes");
    if (arg)
        axes = {n.attr_int("axis", 0)};
    if (global)
        for (int64_t a = 2; a < rank; a++)
            axes.push_back(a);
    bool axes_input = n.op_type == "ReduceSum" && opset >= 13;
    if (axes_input) {
        axes.clear();
        if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
            const Value &v = g.value(n.inputs[1]);
            if (!v.is_constant())
                return false; // runtime axes: refused later with a coded error
            axes = v.constant->to_i64_vector();
        }
    }
    if (axes.empty() && n.attr_int("noop_with_empty_axes", 0) != 0)
        return false;
    std::set<int64_t> reduced;
    for (int64_t ax : axes) {
        // ONNX 1.12's shape inference lets an axis past the rank through (found by tests/fuzz).
        if (ax < -rank || ax >= rank)
            user_error("NHC_EONX008", n.describe(), " reduces over axis ", ax,
                       "; its input has rank ", rank, ", so the axis must be in [", -rank, ", ",
                       rank - 1, "]");
        reduced.insert(normalized_axis(ax, rank));
    }
    if (axes.empty())
        for (int64_t i = 0; i < rank; i++)
            reduced.insert(i);
    if (rank == 0 || (reduced == std::set<int64_t>{rank - 1} && n.attr_int("keepdims", 1) != 0))
        return false; // already the last axis, and the result keeps the input's rank
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < rank; i++)
        if (!reduced.count(i))
            perm.push_back(i);
    perm.insert(perm.end(), reduced.begin(), reduced.end());
    int64_t rows = 1, cols = 1;
    for (int64_t i = 0; i < rank; i++)
        (reduced.count(i) ? cols : rows) *= x[static_cast<size_t>(i)];
    GraphRewriter r(g, n, "__last_axis", out);
    std::vector<int64_t> identity(static_cast<size_t>(rank));
    std::iota(identity.begin(), identity.end(), 0);
    std::string moved = perm == identity ? n.inputs[0] : r.transpose(n.inputs[0], perm);
    Node red;
    red.name = n.name;
    red.op_type = n.op_type == "GlobalAveragePool" ? "ReduceMean"
                  : n.op_type == "GlobalMaxPool"   ? "ReduceMax"
                                                   : n.op_type;
    red.inputs = {r.reshape(moved, {rows, cols})};
    if (axes_input)
        red.inputs.push_back(r.constant_i64({-1}));
    else if (arg)
        red.attrs["axis"] = int64_t(-1);
    else
        red.attrs["axes"] = std::vector<int64_t>{-1};
    if (arg)
        red.attrs["select_last_index"] = n.attr_int("select_last_index", 0);
    red.attrs["keepdims"] = int64_t(1);
    const Value &result = g.value(n.outputs[0]);
    red.outputs = {r.value(result.dtype, {rows, 1})};
    out.push_back(red);
    r.reshape(red.outputs[0], result.shape, n.outputs[0]);
    return true;
}

} // namespace

int move_reductions_to_last_axis(Graph &g) {
    std::vector<Node> out;
    int count = 0;
    for (const Node &n : g.nodes) {
        bool done = false;
        if (n.domain.empty() && !n.inputs.empty() && !n.inputs[0].empty()) {
            if (n.op_type == "LayerNormalization")
                done = rewrite_layer_norm(g, n, out);
            else if (n.op_type == "InstanceNormalization")
                done = rewrite_instance_norm(g, n, out);
            else if ((n.op_type == "Softmax" || n.op_type == "LogSoftmax") && g.opset >= 13)
                done = rewrite_softmax(g, n, out);
            else if (n.op_type.rfind("Reduce", 0) == 0 || n.op_type == "ArgMax" ||
                     n.op_type == "ArgMin" || n.op_type == "GlobalAveragePool" ||
                     n.op_type == "GlobalMaxPool")
                done = rewrite_reduce(g, n, g.opset, out);
        }
        if (done)
            count++;
        else
            out.push_back(n);
    }
    g.nodes = std::move(out);
    return count;
}

} // namespace nhc
