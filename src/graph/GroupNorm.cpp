#include "graph/GroupNorm.h"

#include "graph/GraphRewriter.h"
#include "graph/PatternMatch.h"

#include <map>
#include <optional>
#include <set>

namespace nhc {

namespace {

/** A recognised normalisation: x [N, C, S...] normalised in `groups` groups, then
 *  y = normalised * scale[g] + bias[g] (the InstanceNormalization's), then * gamma[c] + beta[c]. */
struct GroupNormMatch {
    std::string x, y;
    int64_t groups = 0;
    double epsilon = 1e-5;
    std::vector<double> scale, bias; ///< per group
    std::vector<double> gamma, beta; ///< per channel (ones and zeros when absent)
    int last = -1;                   ///< the pattern's last node, replaced by the rewrite
    std::vector<int> nodes;          ///< the other pattern nodes, removed
};

class GroupNormMatcher {
public:
    explicit GroupNormMatcher(const Graph &g) : g_(g), m_(g) {
        for (size_t i = 0; i < g.nodes.size(); i++)
            for (const std::string &in : g.nodes[i].inputs)
                readers_[in].push_back(static_cast<int>(i));
    }

    std::optional<GroupNormMatch> match(const Node &in) {
        if (in.op_type != "InstanceNormalization" || !in.domain.empty() || in.inputs.size() != 3)
            return std::nullopt;
        GroupNormMatch r;
        r.epsilon = in.attr_float("epsilon", 1e-5);
        r.last = m_.index(&in);
        r.y = in.outputs[0];
        const Shape &normalised = g_.value(in.inputs[0]).shape;
        if (normalised.size() < 3)
            return std::nullopt;
        r.groups = normalised[1];
        const Node *split = m_.producer(in.inputs[0], "Reshape");
        if (split && normalised.size() == 3 && m_.private_value(in.inputs[0], 1) &&
            m_.private_value(in.outputs[0], 1) &&
            grouping(g_.value(split->inputs[0]).shape, normalised)) {
            r.x = split->inputs[0];
            r.nodes.push_back(m_.index(split));
        } else {
            r.x = in.inputs[0];
        }
        const Shape &x = g_.value(r.x).shape;
        std::optional<std::vector<double>> scale = values(in.inputs[1], r.groups),
                                           bias = values(in.inputs[2], r.groups);
        if (!scale || !bias || g_.value(r.x).dtype != DType::Float32)
            return std::nullopt;
        r.scale = *scale;
        r.bias = *bias;
        r.gamma.assign(static_cast<size_t>(x[1]), 1.0);
        r.beta.assign(static_cast<size_t>(x[1]), 0.0);
        if (r.x != in.inputs[0])
            match_affine(r);
        return r;
    }

private:
    // [N, C, S...] viewed as [N, G, C / G * prod(S)].
    static bool grouping(const Shape &x, const Shape &grouped) {
        return x.size() >= 3 && grouped[0] == x[0] && grouped[1] > 0 && x[1] % grouped[1] == 0 &&
               shape_numel(x) == shape_numel(grouped);
    }

    std::optional<std::vector<double>> values(const std::string &v, int64_t count) const {
        const Value *c = v.empty() ? nullptr : m_.constant(v);
        if (!c || (c->constant->numel() != count && c->constant->numel() != 1))
            return std::nullopt;
        std::vector<double> out;
        for (int64_t i = 0; i < count; i++)
            out.push_back(c->constant->get_f64(c->constant->numel() == 1 ? 0 : i));
        return out;
    }

    /** A per-channel constant for x: [C, 1, ...], [1, C, 1, ...] or a scalar. */
    std::optional<std::vector<double>> per_channel(const std::string &v, const Shape &x) const {
        if (v.empty() || !m_.constant(v))
            return std::nullopt;
        Shape s = g_.value(v).shape;
        if (s.size() > x.size())
            return std::nullopt;
        s.insert(s.begin(), x.size() - s.size(), 1);
        for (size_t i = 0; i < s.size(); i++)
            if (s[i] != 1 && !(i == 1 && s[i] == x[1]))
                return std::nullopt;
        return values(v, x[1]);
    }

    /** The only reader of `v` if it is `op` and `v` is private to the pattern. */
    const Node *only_reader(const std::string &v, const char *op) const {
        auto it = readers_.find(v);
        if (!m_.private_value(v, 1) || it == readers_.end() || it->second.size() != 1)
            return nullptr;
        const Node &n = g_.nodes[static_cast<size_t>(it->second[0])];
        return n.op_type == op && n.domain.empty() ? &n : nullptr;
    }

    /** Extends the match by the Reshape back to x's shape, the Mul by gamma and the Add of
     *  beta, as far as they are there. */
    void match_affine(GroupNormMatch &r) const {
        const Shape &x = g_.value(r.x).shape;
        auto extend = [&](const Node *n) {
            r.nodes.push_back(r.last);
            r.last = m_.index(n);
            r.y = n->outputs[0];
        };
        const Node *back = only_reader(r.y, "Reshape");
        if (!back || g_.value(back->outputs[0]).shape != x)
            return;
        extend(back);
        // gamma, then beta: a Mul, then an Add, by per-channel constants.
        for (auto [op, values] : {std::pair{"Mul", &r.gamma}, std::pair{"Add", &r.beta}}) {
            const Node *affine = only_reader(r.y, op);
            std::optional<std::vector<double>> c;
            if (!affine || !(c = per_channel(PatternMatcher::other(*affine, r.y), x)) ||
                g_.value(affine->outputs[0]).shape != x)
                return;
            extend(affine);
            *values = *c;
        }
    }

    const Graph &g_;
    PatternMatcher m_;
    std::map<std::string, std::vector<int>> readers_;
};

/** The rows of x: each in one channel, as many as fit the partitions; when the channels alone
 *  exceed the partitions, or rows that fill them are still wider than `max_width` elements (an
 *  InstanceNorm of 64 channels over 256 x 256 pixels), as few as keep a row within it. */
int64_t chunks_per_channel(int64_t channel_rows, int64_t spatial, int64_t partitions,
                           int64_t max_width) {
    int64_t k = 1;
    for (int64_t c = 1; c <= spatial && channel_rows * c <= partitions; c++)
        if (spatial % c == 0)
            k = c;
    while (spatial / k > max_width || spatial % k != 0)
        k++;
    return k;
}

/** The rewrite's shapes: x as rows of one channel each, in groups of consecutive rows. */
struct RowLayout {
    int64_t k = 1, rows = 0, width = 0, groups = 0, rows_per_group = 0;
    double group_elems = 0;
};

/** Per row, the InstanceNormalization's scale and bias folded with gamma and beta. */
void row_affine(const GroupNormMatch &r, const RowLayout &l, int64_t channels,
                std::vector<double> &scale_row, std::vector<double> &bias_row) {
    int64_t per_group = channels / r.groups;
    for (int64_t i = 0; i < l.rows; i++) {
        size_t ch = static_cast<size_t>((i / l.k) % channels),
               grp = ch / static_cast<size_t>(per_group);
        scale_row.push_back(r.scale[grp] * r.gamma[ch]);
        bias_row.push_back(r.bias[grp] * r.gamma[ch] + r.beta[ch]);
    }
}

/** The block-diagonal matrix of 1 / (elements per group) that, multiplied with the row sums,
 *  gives each row its group's mean. */
std::string mixing_matrix(GraphRewriter &b, const RowLayout &l) {
    int64_t rows = l.rows;
    std::vector<double> m(static_cast<size_t>(rows * rows), 0.0);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < rows; j++)
            if (i / l.rows_per_group == j / l.rows_per_group)
                m[static_cast<size_t>(i * rows + j)] = 1.0 / l.group_elems;
    return b.constant_f32({rows, rows}, m);
}

/** The per-row mean over each row's group of `sums` [rows, 1] (row sums): by a matmul with
 *  `mix` (mixing_matrix) when given; otherwise (rows beyond the partitions, where that matrix
 *  would grow with their square) the sums viewed [groups, rows per group], summed per group and
 *  broadcast back over the group's rows. */
std::string group_mean(GraphRewriter &b, const RowLayout &l, const std::string &sums,
                       const std::string &mix) {
    if (!mix.empty()) {
        std::string v = b.value(DType::Float32, {l.rows, 1});
        b.add("MatMul", {mix, sums}, {v}).keep_precision = true;
        return v;
    }
    Shape grouped = {l.groups, l.rows_per_group}, per_group = {l.groups, 1};
    std::string total = b.reduce("ReduceSum", b.reshape(sums, grouped), {1}, true, per_group);
    std::string mean = b.compute("Mul", {total, b.constant_f32({1}, {1.0 / l.group_elems})},
                                 DType::Float32, per_group);
    std::string spread = b.value(DType::Float32, grouped);
    b.add("Expand", {mean, b.constant_i64(grouped)}, {spread});
    return b.reshape(spread, {l.rows, 1});
}

/** The one-group form's rows (lower_one_group): x cut into rows of W = spatial / k elements,
 *  each in one channel, and tiles of T rows that each hold whole groups (g_t of them, dividing
 *  the N * G groups), T as large as the partitions allow; ties go to the widest rows. Empty
 *  (rows == 0) when no k keeps a group's rows within the partitions and a row within
 *  `max_width`. */
struct GroupTiles {
    RowLayout rows;
    int64_t tile_rows = 0;
};

GroupTiles group_tiles(int64_t n, int64_t c, int64_t spatial, int64_t groups, int64_t partitions,
                       int64_t max_width) {
    GroupTiles best;
    int64_t per_group = c / groups, all_groups = n * groups;
    for (int64_t k = 1; k <= spatial; k++) {
        int64_t rows_per_group = per_group * k;
        if (spatial % k || spatial / k > max_width || rows_per_group > partitions)
            continue;
        int64_t g_t = 1;
        for (int64_t d = 1; d <= all_groups && d * rows_per_group <= partitions; d++)
            if (all_groups % d == 0)
                g_t = d;
        if (g_t * rows_per_group > best.tile_rows) {
            best.tile_rows = g_t * rows_per_group;
            best.rows.k = k;
            best.rows.rows_per_group = rows_per_group;
        }
    }
    RowLayout &l = best.rows;
    if (best.tile_rows > 0) {
        l.rows = n * c * l.k;
        l.width = spatial / l.k;
        l.groups = all_groups;
        l.group_elems = static_cast<double>(per_group * spatial);
    }
    return best;
}

/** The normalisation as one node, nhc.GroupNormRows (algorithms/Normalization.cpp), of x viewed
 *  [tiles, T, W]: each tile's rows hold whole groups, so one [T, T] mixing matrix serves every
 *  tile, and the statistics never leave the chip. Returns false, having added nothing, when
 *  group_tiles finds no such rows. */
bool lower_one_group(Graph &g, const GroupNormMatch &r, int64_t partitions, int64_t max_width,
                     std::vector<Node> &out) {
    const Shape x = g.value(r.x).shape;
    int64_t n = x[0], c = x[1], spatial = shape_numel(x) / (n * c);
    GroupTiles gt = group_tiles(n, c, spatial, r.groups, partitions, max_width);
    if (gt.tile_rows == 0)
        return false;
    const RowLayout &l = gt.rows;
    int64_t t = gt.tile_rows, tiles = l.rows / t;
    std::vector<double> scale_row, bias_row;
    row_affine(r, l, c, scale_row, bias_row);
    GraphRewriter b(g, g.nodes[static_cast<size_t>(r.last)], "__group_norm", out);
    RowLayout tile = l;
    tile.rows = t;
    std::string xr = b.reshape(r.x, {tiles, t, l.width});
    std::string y = b.value(DType::Float32, {tiles, t, l.width});
    Node &norm = b.add("GroupNormRows",
                       {xr, mixing_matrix(b, tile), b.constant_f32({tiles, t, 1}, scale_row),
                        b.constant_f32({tiles, t, 1}, bias_row)},
                       {y});
    norm.domain = "nhc";
    norm.attrs["epsilon"] = r.epsilon;
    b.reshape(y, g.value(r.y).shape, r.y);
    return true;
}

void lower(Graph &g, const GroupNormMatch &r, int64_t partitions, int64_t max_width,
           std::vector<Node> &out) {
    const Node &last = g.nodes[static_cast<size_t>(r.last)];
    const Shape x = g.value(r.x).shape;
    int64_t n = x[0], c = x[1], spatial = shape_numel(x) / (n * c);
    RowLayout l;
    l.k = chunks_per_channel(n * c, spatial, partitions, max_width);
    l.rows = n * c * l.k;
    l.width = spatial / l.k;
    l.groups = n * r.groups;
    l.rows_per_group = l.rows / l.groups;
    l.group_elems = static_cast<double>(c / r.groups * spatial);
    std::vector<double> scale_row, bias_row;
    row_affine(r, l, c, scale_row, bias_row);
    GraphRewriter b(g, last, "__group_norm", out);
    int64_t rows = l.rows, width = l.width;
    auto op = [&](const char *type, std::vector<std::string> in, const Shape &shape) {
        return b.compute(type, std::move(in), DType::Float32, shape);
    };
    auto row_sums = [&](const char *type, const std::string &v) {
        return b.reduce(type, v, {1}, true, {rows, 1});
    };
    std::string mix = rows <= partitions ? mixing_matrix(b, l) : "";
    std::string xr = b.reshape(r.x, {rows, width});
    std::string mean = group_mean(b, l, row_sums("ReduceSum", xr), mix);
    std::string d = op("Sub", {xr, mean}, {rows, width});
    std::string var = group_mean(b, l, row_sums("ReduceSumSquare", d), mix);
    std::string eps = b.constant_f32({1}, {r.epsilon});
    std::string rstd =
        op("Reciprocal", {op("Sqrt", {op("Add", {var, eps}, {rows, 1})}, {rows, 1})}, {rows, 1});
    std::string s = op("Mul", {rstd, b.constant_f32({rows, 1}, scale_row)}, {rows, 1});
    std::string y =
        op("Add", {op("Mul", {d, s}, {rows, width}), b.constant_f32({rows, 1}, bias_row)},
           {rows, width});
    b.reshape(y, g.value(r.y).shape, r.y);
}

} // namespace

int lower_group_norms(Graph &g, int64_t partitions, int64_t max_width, int64_t one_group_width) {
    std::vector<GroupNormMatch> matches;
    {
        GroupNormMatcher matcher(g);
        for (const Node &n : g.nodes)
            if (std::optional<GroupNormMatch> m = matcher.match(n))
                matches.push_back(*m);
    }
    if (matches.empty())
        return 0;
    std::map<int, const GroupNormMatch *> at_last;
    std::set<int> removed;
    for (const GroupNormMatch &m : matches) {
        at_last[m.last] = &m;
        removed.insert(m.nodes.begin(), m.nodes.end());
    }
    std::vector<Node> out;
    for (int i = 0; i < static_cast<int>(g.nodes.size()); i++) {
        if (at_last.count(i)) {
            if (one_group_width == 0 ||
                !lower_one_group(g, *at_last[i], partitions, one_group_width, out))
                lower(g, *at_last[i], partitions, max_width, out);
        } else if (!removed.count(i))
            out.push_back(g.nodes[static_cast<size_t>(i)]);
    }
    g.nodes = std::move(out);
    return static_cast<int>(matches.size());
}

} // namespace nhc
