#include "graph/LongRows.h"

#include "graph/GraphRewriter.h"

#include <map>

namespace nhc {

namespace {

/** The elements of each normalised row of `n` (the axes from its axis on), or 0 when the node
 *  is not one this pass decomposes. */
int64_t row_length(const Graph &g, const Node &n) {
    bool softmax = n.op_type == "Softmax" || n.op_type == "LogSoftmax";
    if (!n.domain.empty() || (!softmax && n.op_type != "LayerNormalization"))
        return 0;
    const Value &x = g.value(n.inputs[0]);
    int rank = static_cast<int>(x.shape.size());
    if (rank == 0 || x.dtype != DType::Float32)
        return 0;
    int64_t axis = n.attr_int("axis", softmax && g.opset < 13 ? 1 : -1);
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis >= rank || (softmax && g.opset >= 13 && axis != rank - 1))
        return 0; // opset 13 Softmax over one inner axis: graph/ReduceLastAxis moves it last
    if (n.op_type == "LayerNormalization") {
        int64_t width = shape_numel(Shape(x.shape.begin() + axis, x.shape.end()));
        for (size_t o = 1; o < n.outputs.size(); o++)
            if (!n.outputs[o].empty())
                return 0;
        for (size_t i = 1; i < n.inputs.size(); i++)
            if (!n.inputs[i].empty() && shape_numel(g.value(n.inputs[i]).shape) != width)
                return 0;
        return width;
    }
    return shape_numel(Shape(x.shape.begin() + axis, x.shape.end()));
}

/** The [R, W] view of a long-row node spread over the partitions: each row cut into k pieces
 *  ([R * k, W / k]), k the largest divisor of W that keeps R * k within the partitions, when R
 *  alone fills less than half of them (one token's 50,257 logits would take one partition);
 *  else k = 1. Per-row statistics are reduced per piece, then over the k pieces of a row. */
struct RowView {
    int64_t rows = 0, width = 0, k = 1;

    Shape pieces() const { return {rows * k, width / k}; }
    Shape per_piece() const { return {rows * k, 1}; }
};

RowView row_view(int64_t rows, int64_t width, int64_t partitions) {
    RowView v{rows, width, 1};
    if (rows * 2 > partitions)
        return v;
    for (int64_t k = partitions / rows; k > 1; k--)
        if (width % k == 0) {
            v.k = k;
            break;
        }
    return v;
}

/** A per-piece statistic [R * k, 1] combined over each row's pieces by `op` and broadcast back
 *  to the pieces (identity when k = 1). */
std::string per_row(GraphRewriter &b, const RowView &v, const char *op, const std::string &stat) {
    if (v.k == 1)
        return stat;
    std::string row = b.reduce(op, b.reshape(stat, {v.rows, v.k}), {1}, true, {v.rows, 1});
    std::string spread = b.value(DType::Float32, {v.rows, v.k});
    b.add("Expand", {row, b.constant_i64({v.rows, v.k})}, {spread});
    return b.reshape(spread, v.per_piece());
}

void decompose(Graph &g, const Node &n, int64_t width, int64_t partitions, std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]);
    int64_t rows = shape_numel(x.shape) / width;
    GraphRewriter b(g, n, "__long_rows", out);
    auto op = [&](const char *type, std::vector<std::string> in, const Shape &shape) {
        return b.compute(type, std::move(in), DType::Float32, shape);
    };
    std::string y;
    if (n.op_type == "LayerNormalization") {
        // Whole rows of the view: gamma and beta run along W (spreading would need them tiled).
        Shape row = {rows, width}, per_row_shape = {rows, 1};
        auto reduce = [&](const char *type, const std::string &v) {
            return b.reduce(type, v, {1}, true, per_row_shape);
        };
        std::string xr = b.reshape(n.inputs[0], row);
        std::string d = op("Sub", {xr, reduce("ReduceMean", xr)}, row);
        std::string var = op(
            "Mul",
            {reduce("ReduceSumSquare", d), b.constant_f32({1}, {1.0 / static_cast<double>(width)})},
            per_row_shape);
        std::string eps = b.constant_f32({1}, {n.attr_float("epsilon", 1e-5)});
        std::string rstd =
            op("Reciprocal", {op("Sqrt", {op("Add", {var, eps}, per_row_shape)}, per_row_shape)},
               per_row_shape);
        y = op("Mul", {d, rstd}, row);
        if (n.inputs.size() > 1 && !n.inputs[1].empty())
            y = op("Mul", {y, b.reshape(n.inputs[1], {width})}, row);
        if (n.inputs.size() > 2 && !n.inputs[2].empty())
            y = op("Add", {y, b.reshape(n.inputs[2], {width})}, row);
    } else {
        RowView v = row_view(rows, width, partitions);
        auto reduce = [&](const char *type, const std::string &in) {
            return per_row(b, v, type, b.reduce(type, in, {1}, true, v.per_piece()));
        };
        std::string xr = b.reshape(n.inputs[0], v.pieces());
        std::string m = reduce("ReduceMax", xr);
        std::string d = op("Sub", {xr, m}, v.pieces());
        // log sum exp over the pieces of the per-piece log sum exps: the row's.
        std::string l = reduce("ReduceLogSumExp", d);
        y = n.op_type == "LogSoftmax"
                ? op("Sub", {d, l}, v.pieces())
                : op("Exp", {op("Sub", {xr, op("Add", {m, l}, v.per_piece())}, v.pieces())},
                     v.pieces());
    }
    b.reshape(y, g.value(n.outputs[0]).shape, n.outputs[0]);
}

/** For a Reduce* over the last axis with keepdims: the reduction of the per-piece results over
 *  a row's pieces (then `finish`, Sqrt for ReduceL2), or nullptr for other nodes. */
struct TwoStage {
    const char *piece, *row, *finish;
};
const TwoStage *two_stage(const Graph &g, const Node &n) {
    static const std::map<std::string, TwoStage> stages = {
        {"ReduceSum", {"ReduceSum", "ReduceSum", nullptr}},
        {"ReduceMean", {"ReduceMean", "ReduceMean", nullptr}},
        {"ReduceMax", {"ReduceMax", "ReduceMax", nullptr}},
        {"ReduceMin", {"ReduceMin", "ReduceMin", nullptr}},
        {"ReduceProd", {"ReduceProd", "ReduceProd", nullptr}},
        {"ReduceSumSquare", {"ReduceSumSquare", "ReduceSum", nullptr}},
        {"ReduceL1", {"ReduceL1", "ReduceSum", nullptr}},
        {"ReduceL2", {"ReduceSumSquare", "ReduceSum", "Sqrt"}},
        {"ReduceLogSum", {"ReduceSum", "ReduceLogSum", nullptr}},
        {"ReduceLogSumExp", {"ReduceLogSumExp", "ReduceLogSumExp", nullptr}}};
    auto it = stages.find(n.op_type);
    if (!n.domain.empty() || it == stages.end() || n.attr_int("keepdims", 1) == 0)
        return nullptr;
    const Value &x = g.value(n.inputs[0]);
    int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> axes = n.attr_ints("axes");
    if (n.op_type == "ReduceSum" && n.inputs.size() > 1 && !n.inputs[1].empty()) {
        const Value &a = g.value(n.inputs[1]);
        if (!a.is_constant())
            return nullptr;
        axes = a.constant->to_i64_vector();
    }
    if (rank < 1 || x.dtype != DType::Float32 || axes.size() != 1 ||
        (axes[0] != rank - 1 && axes[0] != -1))
        return nullptr;
    return &it->second;
}

/** A reduction over long rows that fill less than half the partitions, reduced per piece of
 *  the spread view, then over each row's pieces. */
void spread_reduction(Graph &g, const Node &n, const TwoStage &t, const RowView &v,
                      std::vector<Node> &out) {
    GraphRewriter b(g, n, "__long_rows", out);
    std::string pieces =
        b.reduce(t.piece, b.reshape(n.inputs[0], v.pieces()), {1}, true, v.per_piece());
    std::string y = b.reduce(t.row, b.reshape(pieces, {v.rows, v.k}), {1}, true, {v.rows, 1});
    if (t.finish)
        y = b.compute(t.finish, {y}, DType::Float32, {v.rows, 1});
    b.reshape(y, g.value(n.outputs[0]).shape, n.outputs[0]);
}

/** The spread view of a Reduce* node this pass rewrites (k > 1), or k = 1. */
RowView reduction_view(const Graph &g, const Node &n, int64_t max_row, int64_t partitions) {
    const Value &x = g.value(n.inputs[0]);
    if (!two_stage(g, n) || x.shape.back() <= max_row)
        return {};
    return row_view(shape_numel(x.shape) / x.shape.back(), x.shape.back(), partitions);
}

} // namespace

int decompose_long_rows(Graph &g, int64_t max_row, int64_t partitions) {
    int normalisations = rewrite_matching(
        g, [&](const Graph &graph, const Node &n) { return row_length(graph, n) > max_row; },
        [&](Graph &graph, const Node &n, std::vector<Node> &out) {
            decompose(graph, n, row_length(graph, n), partitions, out);
        });
    int reductions = rewrite_matching(
        g,
        [&](const Graph &graph, const Node &n) {
            return reduction_view(graph, n, max_row, partitions).k > 1;
        },
        [&](Graph &graph, const Node &n, std::vector<Node> &out) {
            spread_reduction(graph, n, *two_stage(graph, n),
                             reduction_view(graph, n, max_row, partitions), out);
        });
    return normalisations + reductions;
}

} // namespace nhc
