#include "graph/SplitLinear.h"

#include "graph/PatternMatch.h"

#include <cstring>
#include <optional>

namespace nhc {

namespace {

/** Columns [begin, end) of the layer's output that become `value`. */
struct Piece {
    int64_t begin = 0, end = 0;
    std::string value;
};

/** One element of a constant, or nullopt. */
std::optional<int64_t> constant_int(const Graph &g, const Node &n, size_t input) {
    if (input >= n.inputs.size() || n.inputs[input].empty())
        return std::nullopt;
    const Value &v = g.value(n.inputs[input]);
    if (!v.is_constant() || v.constant->numel() != 1)
        return std::nullopt;
    return v.constant->get_i64(0);
}

/** The piece a Slice of the last axis of a [.., n] value reads (opset 10+ form), or nullopt. */
std::optional<Piece> slice_piece(const Graph &g, const Node &s, int rank, int64_t n) {
    if (s.inputs.size() < 3 || s.outputs.size() != 1)
        return std::nullopt;
    std::optional<int64_t> start = constant_int(g, s, 1), end = constant_int(g, s, 2);
    std::optional<int64_t> axis = s.inputs.size() > 3 ? constant_int(g, s, 3) : int64_t(0);
    std::optional<int64_t> step = s.inputs.size() > 4 ? constant_int(g, s, 4) : int64_t(1);
    if (!start || !end || !axis || !step || *step != 1 || (*axis != -1 && *axis != rank - 1))
        return std::nullopt;
    auto clamp = [n](int64_t i) { return std::max<int64_t>(0, std::min(n, i < 0 ? i + n : i)); };
    Piece p{clamp(*start), clamp(*end), s.outputs[0]};
    if (p.end <= p.begin)
        return std::nullopt;
    return p;
}

/** The pieces a Split of the last axis of a [.., n] value makes (sizes from its second input,
 *  opset 13+, or its `split` attribute, else equal parts), or none when it is not such a Split. */
std::vector<Piece> split_pieces(const Graph &g, const Node &s, int rank, int64_t n) {
    int64_t axis = s.attr_int("axis", 0);
    if (axis != -1 && axis != rank - 1)
        return {};
    std::vector<int64_t> sizes;
    if (s.inputs.size() > 1 && !s.inputs[1].empty()) {
        const Value &v = g.value(s.inputs[1]);
        if (!v.is_constant())
            return {};
        for (int64_t i = 0; i < v.constant->numel(); i++)
            sizes.push_back(v.constant->get_i64(i));
    } else if (s.has_attr("split")) {
        sizes = s.attr_ints("split");
    } else if (!s.outputs.empty() && n % static_cast<int64_t>(s.outputs.size()) == 0) {
        sizes.assign(s.outputs.size(), n / static_cast<int64_t>(s.outputs.size()));
    }
    std::vector<Piece> pieces;
    int64_t at = 0;
    for (size_t i = 0; i < sizes.size() && sizes.size() == s.outputs.size(); i++) {
        if (sizes[i] <= 0 || s.outputs[i].empty())
            return {};
        pieces.push_back({at, at + sizes[i], s.outputs[i]});
        at += sizes[i];
    }
    return at == n ? pieces : std::vector<Piece>();
}

/** Rows [begin, end) of a constant 2-D [rows, cols] (rows: true), or its columns [begin, end)
 *  (rows: false; a 1-D constant is one row), as a new constant `name`. */
std::string cut_constant(Graph &g, const Value &c, bool rows, int64_t begin, int64_t end,
                         const std::string &name) {
    const HostTensor &from = *c.constant;
    int64_t cols = from.shape().back(), n_rows = from.numel() / cols, width = end - begin;
    Shape shape = from.shape();
    shape[rows ? 0 : shape.size() - 1] = width;
    auto t = std::make_shared<HostTensor>(from.dtype(), shape);
    size_t elem = from.bytes().size() / static_cast<size_t>(from.numel());
    if (rows)
        std::memcpy(t->mutable_bytes().data(), from.bytes().data() + size_t(begin * cols) * elem,
                    size_t(width * cols) * elem);
    else
        for (int64_t r = 0; r < n_rows; r++)
            std::memcpy(t->mutable_bytes().data() + size_t(r * width) * elem,
                        from.bytes().data() + size_t(r * cols + begin) * elem,
                        size_t(width) * elem);
    g.values[name] = Value{name, from.dtype(), shape, t};
    return name;
}

/** A linear layer and the nodes that carry its result to the cuts. */
struct Layer {
    int linear = -1;       ///< MatMul(x, W[K, N]) or Gemm(x, B, C) (alpha = beta = 1, no transA)
    int add = -1;          ///< MatMul's bias Add(·, b[N]), or -1
    int reshape = -1;      ///< a Reshape keeping the last axis ([M, N] -> [1, M, N]), or -1
    std::vector<int> cuts; ///< the Slice (or Split) nodes
    std::vector<Piece> pieces;
};

/** The weight's N, when node `n` is a linear layer this pass can cut, else 0. */
int64_t linear_columns(const Graph &g, const Node &n) {
    if (!n.domain.empty() || !n.input_perm.empty() || n.inputs.size() < 2 ||
        (n.op_type != "MatMul" && n.op_type != "Gemm") || n.inputs[0].empty() ||
        n.inputs[1].empty())
        return 0;
    const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
    if (!w.is_constant() || w.shape.size() != 2 || x.shape.size() < 2)
        return 0;
    if (n.op_type == "MatMul" && n.inputs.size() == 2)
        return w.shape[1];
    if (n.op_type != "Gemm" || n.attr_float("alpha", 1) != 1 || n.attr_float("beta", 1) != 1 ||
        n.attr_int("transA", 0) != 0)
        return 0;
    int64_t cols = w.shape[n.attr_int("transB", 0) != 0 ? 0 : 1];
    if (n.inputs.size() > 2 && !n.inputs[2].empty() &&
        (!g.value(n.inputs[2]).is_constant() || g.value(n.inputs[2]).shape != Shape{cols}))
        return 0;
    return cols;
}

/** The layer whose linear node is node `i`, if its result is only cut into pieces. */
std::optional<Layer> match(const Graph &g, const PatternMatcher &m,
                           const std::map<std::string, std::vector<int>> &readers, int i,
                           bool cut_splits) {
    const Node &lin = g.nodes[static_cast<size_t>(i)];
    int64_t n = linear_columns(g, lin);
    if (n == 0)
        return std::nullopt;
    Layer layer;
    layer.linear = i;
    std::string result = lin.outputs[0];
    auto only = [&](const std::string &v) -> const std::vector<int> * {
        auto it = readers.find(v);
        return it == readers.end() || !m.private_value(v, static_cast<int>(it->second.size()))
                   ? nullptr
                   : &it->second;
    };
    const std::vector<int> *r = only(result);
    if (r && r->size() == 1 && lin.op_type == "MatMul" &&
        g.nodes[size_t(r->front())].op_type == "Add") {
        const Node &add = g.nodes[size_t(r->front())];
        std::string b = PatternMatcher::other(add, result);
        if (!add.domain.empty() || b.empty() || !g.value(b).is_constant() ||
            g.value(b).shape != Shape{n} || g.value(add.outputs[0]).shape != g.value(result).shape)
            return std::nullopt;
        layer.add = r->front();
        result = add.outputs[0];
        r = only(result);
    }
    if (r && r->size() == 1 && g.nodes[size_t(r->front())].op_type == "Reshape") {
        const Node &view = g.nodes[size_t(r->front())];
        if (!view.domain.empty() || g.value(view.outputs[0]).shape.back() != n)
            return std::nullopt;
        layer.reshape = r->front();
        result = view.outputs[0];
        r = only(result);
    }
    if (!r)
        return std::nullopt;
    int rank = static_cast<int>(g.value(result).shape.size());
    for (int reader : *r) {
        const Node &cut = g.nodes[size_t(reader)];
        if (!cut.domain.empty() || cut.inputs.empty() || cut.inputs[0] != result)
            return std::nullopt;
        if (cut.op_type == "Split" && cut_splits) {
            std::vector<Piece> pieces = split_pieces(g, cut, rank, n);
            if (pieces.empty())
                return std::nullopt;
            layer.pieces.insert(layer.pieces.end(), pieces.begin(), pieces.end());
            layer.cuts.push_back(reader);
            continue;
        }
        std::optional<Piece> p =
            cut.op_type == "Slice" ? slice_piece(g, cut, rank, n) : std::nullopt;
        if (!p)
            return std::nullopt;
        layer.pieces.push_back(*p);
        layer.cuts.push_back(reader);
    }
    return layer;
}

/** A new value of `like`'s type and shape, its last axis `width`. */
std::string narrowed_value(Graph &g, const Value &like, int64_t width, const std::string &name) {
    Shape shape = like.shape;
    shape.back() = width;
    g.values[name] = Value{name, like.dtype, shape, nullptr};
    return name;
}

/** The nodes of one piece: its linear node, then its bias Add and its Reshape when the layer
 *  has them, the last computing the piece's value. */
std::vector<Node> piece_nodes(Graph &g, const Layer &layer, const Piece &p) {
    std::string tag = "__cols" + std::to_string(p.begin) + "_" + std::to_string(p.end);
    int64_t width = p.end - p.begin;
    std::vector<Node> nodes = {g.nodes[static_cast<size_t>(layer.linear)]};
    Node &lin = nodes[0];
    std::string base = lin.name + tag;
    lin.name = base;
    bool rows = lin.op_type == "Gemm" && lin.attr_int("transB", 0) != 0;
    lin.inputs[1] = cut_constant(g, g.value(lin.inputs[1]), rows, p.begin, p.end, base + "_w");
    if (lin.inputs.size() > 2 && !lin.inputs[2].empty())
        lin.inputs[2] = cut_constant(g, g.value(lin.inputs[2]), false, p.begin, p.end, base + "_c");
    lin.outputs = {narrowed_value(g, g.value(lin.outputs[0]), width, base + "_y")};
    for (int follower : {layer.add, layer.reshape}) {
        if (follower < 0)
            continue;
        Node next = g.nodes[static_cast<size_t>(follower)];
        std::string in = nodes.back().outputs[0];
        next.name += tag;
        if (next.op_type == "Add") {
            std::string b = PatternMatcher::other(next, g.nodes[size_t(layer.linear)].outputs[0]);
            next.inputs = {in, cut_constant(g, g.value(b), false, p.begin, p.end, base + "_b")};
        } else { // Reshape: the same leading axes, the piece's columns
            Shape shape = g.value(next.outputs[0]).shape;
            shape.back() = width;
            next.inputs = {in, shape_constant(g, base + "_shape", shape)};
        }
        next.outputs = {
            narrowed_value(g, g.value(next.outputs[0]), width, base + "_" + next.op_type)};
        nodes.push_back(std::move(next));
    }
    g.values.erase(nodes.back().outputs[0]); // the last node computes the piece's value itself
    nodes.back().outputs = {p.value};
    return nodes;
}

} // namespace

int split_sliced_linear_layers(Graph &g, bool cut_splits) {
    PatternMatcher m(g);
    std::map<std::string, std::vector<int>> readers;
    for (size_t i = 0; i < g.nodes.size(); i++)
        for (const std::string &in : g.nodes[i].inputs)
            readers[in].push_back(static_cast<int>(i));
    std::set<int> removed;
    std::map<int, std::vector<Node>> inserted; // at a layer's MatMul
    for (int i = 0; i < static_cast<int>(g.nodes.size()); i++) {
        std::optional<Layer> layer = match(g, m, readers, i, cut_splits);
        if (!layer)
            continue;
        std::vector<Node> nodes;
        for (const Piece &p : layer->pieces)
            for (Node &n : piece_nodes(g, *layer, p))
                nodes.push_back(std::move(n));
        inserted[i] = std::move(nodes);
        removed.insert(layer->cuts.begin(), layer->cuts.end());
        for (int follower : {layer->add, layer->reshape})
            if (follower >= 0)
                removed.insert(follower);
    }
    std::vector<Node> out;
    for (int i = 0; i < static_cast<int>(g.nodes.size()); i++) {
        if (auto it = inserted.find(i); it != inserted.end())
            out.insert(out.end(), it->second.begin(), it->second.end());
        else if (!removed.count(i))
            out.push_back(std::move(g.nodes[static_cast<size_t>(i)]));
    }
    g.nodes = std::move(out);
    return static_cast<int>(inserted.size());
}

} // namespace nhc
