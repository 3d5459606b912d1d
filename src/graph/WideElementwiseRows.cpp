#include "graph/WideElementwiseRows.h"

#include "graph/GroupNorm.h"

#include "graph/FlattenElementwise.h"
#include "graph/GraphRewriter.h"
#include "support/Log.h"

#include <algorithm>
#include <map>
#include <set>

namespace nhc {

namespace {

/** The view [rows, cols] of `shape`'s elements (see the file comment), or {} when none fits or
 *  its rows would be no longer than the shape's own (a [1, 128, 768] sum stays in the group of
 *  the LayerNorm it feeds; an attention mask of [1, 1, 1, 128] stays). */
Shape wide_view(const Shape &shape, int64_t partitions, int64_t max_row_elems) {
    const int64_t elems = shape_numel(shape);
    for (int64_t rows = partitions; rows <= elems; rows += partitions)
        if (elems % rows == 0 && elems / rows <= max_row_elems)
            return elems / rows > shape.back() || shape.size() == 1 ? Shape{rows, elems / rows}
                                                                    : Shape{};
    // A 1-D value whose length the partitions do not divide: as many rows as divide it.
    for (int64_t rows = partitions; shape.size() == 1 && rows > 1; rows--)
        if (elems % rows == 0 && elems / rows <= max_row_elems)
            return Shape{rows, elems / rows};
    return {};
}

/** Whether `n` is pure elementwise over an N-D output (N >= 3, or a 1-D one longer than the
 *  partitions): every operand the output's shape (at least one a runtime value) or a
 *  one-element constant. */
bool pure_elementwise(const Graph &g, const Node &n, int64_t partitions) {
    if (!n.domain.empty() || n.outputs.size() != 1 || !is_elementwise_op(n.op_type))
        return false;
    const Shape &out = g.value(n.outputs[0]).shape;
    // Rank 1 past the partitions has no other schedule (a detector's [N] scores).
    if (out.size() == 2 || out.empty() || (out.size() == 1 && out[0] <= partitions))
        return false;
    bool runtime = false;
    for (const std::string &in : n.inputs) {
        if (in.empty())
            return false;
        const Value &v = g.value(in);
        if (v.is_constant() ? shape_numel(v.shape) != 1 : v.shape != out)
            return false;
        runtime = runtime || !v.is_constant();
    }
    return runtime;
}

/** Whether `v` is a matmul's output, seen through views that keep its layout (not a Transpose,
 *  whose output is written in a layout of its own): attention's scores, which keep their shape
 *  for its fusion, or a matmul's epilogue (graph/FlattenElementwise's). */
bool from_matmul(const Graph &g, const ValueIndex &x, std::string v) {
    for (auto p = x.producer.find(v); p != x.producer.end(); p = x.producer.find(v)) {
        const Node &n = *p->second;
        if (!n.domain.empty())
            return false;
        if (n.op_type == "MatMul" || n.op_type == "Gemm")
            return true;
        if (!is_view_op(n.op_type) || n.op_type == "Transpose")
            return false;
        v = n.inputs.at(0);
    }
    return false;
}

/** Whether a MatMul or Gemm reads `v`, through views and Transposes: a node making a matmul's
 *  operand (ViT's query scaled before its heads' scores) keeps its shape for the attention
 *  fusion. */
bool feeds_matmul(const ValueIndex &x, const std::string &v) {
    auto it = x.consumers.find(v);
    if (it == x.consumers.end())
        return false;
    for (const Node *n : it->second) {
        if (!n->domain.empty())
            continue;
        if (n->op_type == "MatMul" || n->op_type == "Gemm")
            return true;
        if (is_view_op(n->op_type) && feeds_matmul(x, n->outputs.at(0)))
            return true;
    }
    return false;
}

/** The value `v` views, when it is computed rows: a 2-D value whose rows are a multiple of the
 *  partitions no longer than `max_row_elems`, or a GroupNormRows's [tiles, T, W] (tiles of rows
 *  its group computes whole); else nullptr. */
const std::string *row_source(const Graph &g, const ValueIndex &x, const std::string &v,
                              int64_t partitions, int64_t max_row_elems) {
    auto p = x.producer.find(v);
    if (p == x.producer.end() || !is_view_op(p->second->op_type) || p->second->inputs.empty())
        return nullptr;
    const std::string &src = p->second->inputs[0];
    const Value &s = g.value(src);
    auto computed = x.producer.find(src);
    if (s.is_constant() || computed == x.producer.end())
        return nullptr;
    const Node &by = *computed->second;
    bool tiled_rows = is_group_norm_rows(by);
    bool rows = s.shape.size() == 2 && s.shape[0] % partitions == 0 && s.shape[1] <= max_row_elems;
    return tiled_rows || rows ? &src : nullptr;
}

} // namespace

int widen_elementwise_rows(Graph &g, int64_t partitions, int64_t max_row_elems,
                           const ConvLimits &conv_limits) {
    std::map<std::string, std::string> wide; // N-D value -> its wide view, for the chain
    std::set<std::string> made_views;        // back-views this pass made
    // Values whose wide form is the rows of a computed 2-D value they view (row_source), and
    // the chains' values computed on those rows.
    std::set<std::string> row_chain;
    std::vector<Node> out;
    int count = 0;
    const ValueIndex index = index_values(g);
    for (const Node &n : g.nodes) {
        Shape view;
        if (pure_elementwise(g, n, partitions))
            view = wide_view(g.value(n.outputs[0]).shape, partitions, max_row_elems);
        // A runtime operand from a convolution the node would join or a matmul's output, or an
        // output a matmul reads, keeps the node's shape.
        if (!view.empty() &&
            (feeds_matmul(index, n.outputs[0]) ||
             std::any_of(n.inputs.begin(), n.inputs.end(), [&](const std::string &in) {
                 return !g.value(in).is_constant() &&
                        (joins_conv_group(g, index, in, conv_limits) || from_matmul(g, index, in));
             })))
            view.clear();
        if (view.empty()) {
            out.push_back(n);
            continue;
        }
        // A runtime operand that views a computed 2-D value of rows filling the partitions (a
        // GroupNorm's [N * C * k, H * W / k] result): the chain takes those rows and reads the
        // value itself, so that it can join the group that computes it (norm + activation).
        bool on_rows = false;
        for (const std::string &in : n.inputs) {
            if (g.value(in).is_constant())
                continue;
            if (const std::string *rows = row_source(g, index, in, partitions, max_row_elems);
                rows && !wide.count(in)) {
                wide[in] = *rows;
                row_chain.insert(in);
            }
            if (row_chain.count(in)) {
                view = g.value(wide.at(in)).shape;
                on_rows = true;
                break;
            }
        }
        const Value y = g.value(n.outputs[0]);
        log_debug("wide rows: ", n.name, " ", shape_str(y.shape), " as ", shape_str(view));
        GraphRewriter b(g, n, "__wide", out);
        Node w = n;
        for (std::string &in : w.inputs) {
            const Value &v = g.value(in);
            if (v.is_constant()) { // its one element, as a [1, 1] operand of the 2-D node
                auto t = std::make_shared<HostTensor>(v.dtype, Shape{1, 1});
                t->mutable_bytes() = v.constant->bytes().to_vector();
                in = b.constant(std::move(t));
                continue;
            }
            auto it = wide.find(in);
            in = it != wide.end() && g.value(it->second).shape == view ? it->second
                                                                       : b.reshape(in, view);
        }
        w.outputs = {b.value(y.dtype, view)};
        out.push_back(w);
        wide[y.name] = w.outputs[0];
        if (on_rows)
            row_chain.insert(y.name);
        b.reshape(w.outputs[0], y.shape, y.name); // for readers outside the chain
        made_views.insert(y.name);
        count++;
    }
    // Back-views that nothing reads (the chain reads the wide form) go, and so do views of 2-D
    // values the chains now read directly.
    std::set<std::string> read(g.outputs.begin(), g.outputs.end());
    for (const Node &n : out)
        read.insert(n.inputs.begin(), n.inputs.end());
    g.nodes.clear();
    for (Node &n : out)
        if (!(n.op_type == "Reshape" &&
              (made_views.count(n.outputs[0]) || row_chain.count(n.outputs[0])) &&
              !read.count(n.outputs[0])))
            g.nodes.push_back(std::move(n));
    return count;
}

} // namespace nhc
