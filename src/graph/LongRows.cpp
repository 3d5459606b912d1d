#include "graph/LongRows.h"

#include "graph/GraphRewriter.h"

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

void decompose(Graph &g, const Node &n, int64_t width, std::vector<Node> &out) {
    const Value &x = g.value(n.inputs[0]);
    int64_t rows = shape_numel(x.shape) / width;
    Shape row = {rows, width}, per_row = {rows, 1};
    GraphRewriter b(g, n, "__long_rows", out);
    auto op = [&](const char *type, std::vector<std::string> in, const Shape &shape) {
        return b.compute(type, std::move(in), DType::Float32, shape);
    };
    auto reduce = [&](const char *type, const std::string &v) {
        return b.reduce(type, v, {1}, true, per_row);
    };
    std::string xr = b.reshape(n.inputs[0], row), y;
    if (n.op_type == "LayerNormalization") {
        std::string d = op("Sub", {xr, reduce("ReduceMean", xr)}, row);
        std::string var = op(
            "Mul",
            {reduce("ReduceSumSquare", d), b.constant_f32({1}, {1.0 / static_cast<double>(width)})},
            per_row);
        std::string eps = b.constant_f32({1}, {n.attr_float("epsilon", 1e-5)});
        std::string rstd =
            op("Reciprocal", {op("Sqrt", {op("Add", {var, eps}, per_row)}, per_row)}, per_row);
        y = op("Mul", {d, rstd}, row);
        if (n.inputs.size() > 1 && !n.inputs[1].empty())
            y = op("Mul", {y, b.reshape(n.inputs[1], {width})}, row);
        if (n.inputs.size() > 2 && !n.inputs[2].empty())
            y = op("Add", {y, b.reshape(n.inputs[2], {width})}, row);
    } else {
        std::string m = reduce("ReduceMax", xr);
        std::string d = op("Sub", {xr, m}, row);
        std::string l = reduce("ReduceLogSumExp", d);
        y = n.op_type == "LogSoftmax"
                ? op("Sub", {d, l}, row)
                : op("Exp", {op("Sub", {xr, op("Add", {m, l}, per_row)}, row)}, row);
    }
    b.reshape(y, g.value(n.outputs[0]).shape, n.outputs[0]);
}

} // namespace

int decompose_long_rows(Graph &g, int64_t max_row) {
    return rewrite_matching(
        g, [&](const Graph &graph, const Node &n) { return row_length(graph, n) > max_row; },
        [](Graph &graph, const Node &n, std::vector<Node> &out) {
            decompose(graph, n, row_length(graph, n), out);
        });
}

} // namespace nhc
