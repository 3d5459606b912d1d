#include "graph/LowerLosses.h"

#include "graph/GraphRewriter.h"
#include "support/Error.h"

namespace nhc {

namespace {

/** Builds the decomposition of one node: fresh values, constants and nodes. */
class Picker {
public:
    Picker(Graph &g, const Node &n, std::vector<Node> &out)
        : g_(g), n_(n), b_(g, n, "__pick", out) {}

    [[noreturn]] void refuse(const std::string &what) const {
        user_error("NHC_EALG001", n_.describe(), ": ", what);
    }
    std::string op(const char *type, std::vector<std::string> in, DType t, const Shape &shape,
                   const std::string &out_name = "") {
        return b_.compute(type, std::move(in), t, shape, out_name);
    }
    /** `v` with a 1 inserted at `axis` (a view). */
    std::string unsqueezed(const std::string &v, size_t axis) {
        Shape s = g_.value(v).shape;
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(axis), 1);
        return b_.reshape(v, s);
    }
    std::string cast(const std::string &v, DType t, const Shape &shape,
                     const std::string &out_name = "") {
        std::string out = out_name.empty() ? b_.value(t, shape) : out_name;
        b_.add("Cast", {v}, {out}).attrs["to"] = static_cast<int64_t>(dtype_to_onnx(t));
        return out;
    }
    /** Where `indices` (a [.., K, 1, ..] view) equals the position along `axis`, as `t` (1 or
     *  0); a negative index counts from the end. */
    std::string one_hot(const std::string &indices, size_t axis, int64_t count, DType t,
                        const Shape &shape, const std::string &out_name = "") {
        return cast(b_.index_hits(indices, axis, count, shape), t, shape, out_name);
    }
    std::string sum(const std::string &v, const std::vector<int64_t> &axes, const Shape &shape,
                    const std::string &out_name = "") {
        return b_.reduce("ReduceSum", v, axes, false, shape, out_name);
    }
    GraphRewriter &rewriter() { return b_; }

private:
    Graph &g_;
    const Node &n_;
    GraphRewriter b_;
};

// The one-hot form's intermediate has an element per index and position along the axis; past
// this many (4 MiB of fp32) the gather is an indirect DMA of single elements instead, whose
// work grows with the indices alone (BERT-size GatherElements: 4096 x 256 indices into rows of
// 512 made a 2 GiB one-hot).
constexpr int64_t kOneHotElements = int64_t(1) << 20;

/** GatherElements as a Gather of rows of one element: data viewed [numel, 1], indexed by each
 *  element's flat position (its coordinates off the axis, from constant iotas, plus the index,
 *  made non-negative, times the axis' stride), which the code generator lowers to indirect DMAs
 *  (algorithms/Gather.cpp). */
void gather_elements_indirect(Graph &g, const Node &n, size_t axis, std::vector<Node> &out) {
    GraphRewriter b(g, n, "__gather_elements", out);
    const Value &data = g.value(n.inputs[0]), &idx = g.value(n.inputs[1]);
    size_t rank = data.shape.size();
    DType it = idx.dtype;
    std::vector<int64_t> stride(rank, 1);
    for (size_t d = rank - 1; d > 0; d--)
        stride[d - 1] = stride[d] * data.shape[d];
    auto constant = [&](const Shape &shape, const std::vector<double> &v) {
        return b.constant_of(it, shape, v);
    };
    // index + extent where negative, times the axis' stride
    std::string negative =
        b.compute("Less", {n.inputs[1], constant({1}, {0.0})}, DType::Bool, idx.shape);
    std::string wrapped =
        b.compute("Add", {n.inputs[1], constant({1}, {double(data.shape[axis])})}, it, idx.shape);
    std::string flat =
        b.compute("Mul",
                  {b.compute("Where", {negative, wrapped, n.inputs[1]}, it, idx.shape),
                   constant({1}, {double(stride[axis])})},
                  it, idx.shape);
    for (size_t d = 0; d < rank; d++) { // + each coordinate off the axis times its stride
        if (d == axis || idx.shape[d] == 1)
            continue;
        Shape along(rank, 1);
        along[d] = idx.shape[d];
        std::vector<double> offsets;
        for (int64_t i = 0; i < idx.shape[d]; i++)
            offsets.push_back(double(i * stride[d]));
        flat = b.compute("Add", {flat, constant(along, offsets)}, it, idx.shape);
    }
    Shape gathered = idx.shape;
    gathered.push_back(1);
    std::string rows =
        b.compute("Gather", {b.reshape(n.inputs[0], {shape_numel(data.shape), 1}), flat},
                  data.dtype, gathered);
    b.reshape(rows, idx.shape, n.outputs[0]);
}

void gather_elements(Graph &g, const Node &n, std::vector<Node> &out) {
    Picker p(g, n, out);
    const Value &data = g.value(n.inputs[0]), &idx = g.value(n.inputs[1]);
    size_t rank = data.shape.size();
    int64_t axis = n.attr_int("axis", 0);
    axis = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
    if (idx.shape.size() != rank || axis < 0 || axis >= static_cast<int64_t>(rank))
        p.refuse("expected indices of the data's rank and an axis within it");
    for (size_t d = 0; d < rank; d++)
        if (d != static_cast<size_t>(axis) && idx.shape[d] != data.shape[d])
            p.refuse("indices narrower than the data off the axis are not supported yet");
    size_t a = static_cast<size_t>(axis);
    if (shape_numel(idx.shape) * data.shape[a] > kOneHotElements &&
        shape_numel(data.shape) < (int64_t(1) << 31)) {
        gather_elements_indirect(g, n, a, out);
        return;
    }
    Shape wide = idx.shape;
    wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(a) + 1, data.shape[a]);
    std::string hot =
        p.one_hot(p.unsqueezed(n.inputs[1], a + 1), a + 1, data.shape[a], data.dtype, wide);
    std::string prod = p.op("Mul", {p.unsqueezed(n.inputs[0], a), hot}, data.dtype, wide);
    p.sum(prod, {static_cast<int64_t>(a) + 1}, idx.shape, n.outputs[0]);
}

/** Gather from a 1-D table (a class weight per target): the one-hot sum along a new last axis.
 *  Gathers from wider tables are left to the matmul form (algorithms/Matmul.cpp). */
void gather_from_vector(Graph &g, const Node &n, std::vector<Node> &out) {
    Picker p(g, n, out);
    const Value &data = g.value(n.inputs[0]), &idx = g.value(n.inputs[1]);
    size_t rank = idx.shape.size() + 1;
    Shape wide = idx.shape, table(rank, 1);
    wide.push_back(data.shape[0]);
    table.back() = data.shape[0];
    std::string hot =
        p.one_hot(p.unsqueezed(n.inputs[1], rank - 1), rank - 1, data.shape[0], data.dtype, wide);
    std::string prod =
        p.op("Mul", {p.rewriter().reshape(n.inputs[0], table), hot}, data.dtype, wide);
    p.sum(prod, {static_cast<int64_t>(rank) - 1}, idx.shape, n.outputs[0]);
}

/** Hardmax: 1 at the first maximum along the axis, as the one-hot of ArgMax. */
void hardmax(Graph &g, const Node &n, std::vector<Node> &out) {
    Picker p(g, n, out);
    const Value &x = g.value(n.inputs[0]);
    int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = n.attr_int("axis", g.opset >= 13 ? -1 : 1);
    axis = axis < 0 ? axis + rank : axis;
    if (g.opset < 13 && axis != rank - 1)
        p.refuse("the opset-11 form (rows flattened from `axis` on) is supported for the last "
                 "axis only");
    if (axis < 0 || axis >= rank)
        p.refuse("axis out of range");
    Shape kept = x.shape;
    kept[static_cast<size_t>(axis)] = 1;
    std::string am = p.rewriter().value(DType::Int32, kept);
    Node &arg = p.rewriter().add("ArgMax", {n.inputs[0]}, {am});
    arg.attrs["axis"] = axis;
    arg.attrs["keepdims"] = int64_t(1);
    p.one_hot(am, static_cast<size_t>(axis), x.shape[static_cast<size_t>(axis)], x.dtype, x.shape,
              n.outputs[0]);
}

/** The loss of `log_prob` [N, C, D...] (ONNX NegativeLogLikelihoodLoss) into `loss_name`. */
void nll(Graph &g, Picker &p, const Node &n, const std::string &log_prob, const std::string &target,
         const std::string &weight, const std::string &loss_name) {
    const Value &x = g.value(log_prob);
    DType t = x.dtype;
    size_t rank = x.shape.size();
    int64_t classes = x.shape[1];
    Shape per_class = x.shape, per_item = x.shape;
    per_item.erase(per_item.begin() + 1);
    // ONNX 1.12's inference lets other shapes through (a scalar target overran the unsqueeze
    // below: the front-end fuzz target's finding 8).
    if (g.value(target).shape != per_item)
        p.refuse("expected a target of the input's shape without its class axis, " +
                 shape_str(per_item) + "; found " + shape_str(g.value(target).shape));
    if (!weight.empty() && g.value(weight).shape != Shape{classes})
        p.refuse("expected a weight of one value per class, " + shape_str({classes}) + "; found " +
                 shape_str(g.value(weight).shape));
    std::string tu = p.unsqueezed(target, 1);
    Shape target_u = per_class;
    target_u[1] = 1;
    std::string hot = p.one_hot(tu, 1, classes, t, per_class);
    if (n.has_attr("ignore_index")) {
        std::string ii_name = p.rewriter().constant_of(
            DType::Int32, {1}, {static_cast<double>(n.attr_int("ignore_index", 0))});
        std::string kept = p.cast(p.op("Not", {p.op("Equal", {tu, ii_name}, DType::Bool, target_u)},
                                       DType::Bool, target_u),
                                  t, target_u);
        hot = p.op("Mul", {hot, kept}, t, per_class);
    }
    if (!weight.empty()) {
        Shape w_shape(rank, 1);
        w_shape[1] = classes;
        hot = p.op("Mul", {hot, p.rewriter().reshape(weight, w_shape)}, t, per_class);
    }
    std::string picked = p.sum(p.op("Mul", {log_prob, hot}, t, per_class), {1}, per_item);
    std::string reduction = n.attr_string("reduction", "mean");
    if (reduction == "none") {
        p.op("Neg", {picked}, t, per_item, loss_name);
        return;
    }
    if (reduction != "sum" && reduction != "mean")
        p.refuse("reduction '" + reduction + "' is not none, sum or mean");
    std::string loss = p.op("Neg", {picked}, t, per_item);
    if (reduction == "sum") {
        p.sum(loss, {}, {}, loss_name);
        return;
    }
    std::string weights = p.sum(p.sum(hot, {1}, per_item), {}, {});
    p.op("Div", {p.sum(loss, {}, {}), weights}, t, {}, loss_name);
}

void nll_loss(Graph &g, const Node &n, std::vector<Node> &out) {
    Picker p(g, n, out);
    if (g.value(n.inputs[0]).shape.size() < 2)
        p.refuse("expected an input of rank 2 or more ([N, C, ...])");
    nll(g, p, n, n.inputs[0], n.inputs[1], n.inputs.size() > 2 ? n.inputs[2] : "", n.outputs[0]);
}

void softmax_cross_entropy(Graph &g, const Node &n, std::vector<Node> &out) {
    Picker p(g, n, out);
    const Value &scores = g.value(n.inputs[0]);
    if (scores.shape.size() < 2)
        p.refuse("expected scores of rank 2 or more ([N, C, ...])");
    std::string lp = n.outputs.size() > 1 && !n.outputs[1].empty()
                         ? n.outputs[1]
                         : p.rewriter().value(scores.dtype, scores.shape);
    Node &ls = p.rewriter().add("LogSoftmax", {n.inputs[0]}, {lp});
    ls.attrs["axis"] = int64_t(1);
    nll(g, p, n, lp, n.inputs[1], n.inputs.size() > 2 ? n.inputs[2] : "", n.outputs[0]);
}

/** ScatterND with indices [..., 1] (whole slices along axis 0: torch's `y[rows] = values`):
 *  with data viewed [R, W] and the updates [n, W], the one-hot [R, n] of the indices (a negative
 *  one from the end) times the updates on the PE, exact in fp32 (one nonzero term per element,
 *  the matmul kept fp32 under auto-cast); reduction none takes it where a row was hit (Where),
 *  add adds it to the data (repeated indices accumulate). */
void scatter_nd(Graph &g, const Node &n, std::vector<Node> &out) {
    Picker p(g, n, out);
    const Value &data = g.value(n.inputs[0]), &idx = g.value(n.inputs[1]);
    std::string reduction = n.attr_string("reduction", "none");
    if (idx.shape.empty() || idx.shape.back() != 1 || data.shape.empty())
        p.refuse("indices whose last axis is not 1 (elements or slices of inner axes) are not "
                 "supported yet; found indices of shape " +
                 shape_str(idx.shape));
    if (data.dtype != DType::Float32)
        p.refuse(std::string("data of type ") + dtype_name(data.dtype) +
                 " is not supported yet (float32 only)");
    if (reduction != "none" && reduction != "add")
        p.refuse("reduction '" + reduction + "' is not supported yet (none, add)");
    GraphRewriter &b = p.rewriter();
    int64_t rows = data.shape[0], width = shape_numel(data.shape) / rows,
            count = shape_numel(idx.shape);
    Shape wide = {rows, count}, row = {rows, width};
    std::string hot = p.one_hot(b.reshape(n.inputs[1], {1, count}), 0, rows, DType::Float32, wide);
    std::string updates = b.reshape(n.inputs[2], {count, width});
    std::string scattered = b.value(DType::Float32, row);
    b.add("MatMul", {hot, updates}, {scattered}).keep_precision = true;
    std::string data_rows = b.reshape(n.inputs[0], row), y;
    if (reduction == "add") {
        y = p.op("Add", {data_rows, scattered}, DType::Float32, row);
    } else {
        std::string hit = b.reduce("ReduceMax", hot, {1}, true, {rows, 1});
        std::string replaced =
            p.op("Greater", {hit, b.constant_f32({1}, {0.5})}, DType::Bool, {rows, 1});
        y = p.op("Where", {replaced, scattered, data_rows}, DType::Float32, row);
    }
    b.reshape(y, data.shape, n.outputs[0]);
}

} // namespace

int decompose_index_picks(Graph &g) {
    // Gather from a runtime 1-D table, with runtime indices of rank 1 or more.
    std::vector<Node> kept;
    int vectors = 0;
    for (const Node &n : g.nodes) {
        bool vector_table = n.op_type == "Gather" && n.domain.empty() && n.inputs.size() == 2 &&
                            g.value(n.inputs[0]).shape.size() == 1 &&
                            !g.value(n.inputs[1]).is_constant() &&
                            !g.value(n.inputs[1]).shape.empty();
        if (vector_table) {
            gather_from_vector(g, n, kept);
            vectors++;
        } else {
            kept.push_back(n);
        }
    }
    g.nodes = std::move(kept);
    return vectors + rewrite_each(g, "GatherElements", gather_elements) +
           rewrite_each(g, "NegativeLogLikelihoodLoss", nll_loss) +
           rewrite_each(g, "SoftmaxCrossEntropyLoss", softmax_cross_entropy) +
           rewrite_each(g, "Hardmax", hardmax) + rewrite_each(g, "ScatterND", scatter_nd);
}

} // namespace nhc
