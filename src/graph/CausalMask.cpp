#include "graph/CausalMask.h"

#include "graph/PatternMatch.h"

#include <algorithm>
#include <optional>

namespace nhc {

namespace {

/** The diagonal k of `mask` when every row of its last two axes keeps exactly the columns
 *  j <= i + k, the same along every leading axis, and some row keeps part of its columns; else
 *  nullopt. */
std::optional<int64_t> lower_triangle_diagonal(const HostTensor &mask) {
    const Shape &s = mask.shape();
    if (s.size() < 2)
        return std::nullopt;
    int64_t rows = s[s.size() - 2], cols = s.back(), matrices = mask.numel() / (rows * cols);
    if (rows == 0 || cols == 0)
        return std::nullopt;
    // k from the first row that keeps some columns but not all (a kept prefix of k + i + 1).
    std::optional<int64_t> k;
    for (int64_t i = 0; i < rows && !k; i++) {
        int64_t kept = 0;
        while (kept < cols && mask.get_f64(i * cols + kept) != 0)
            kept++;
        if (kept > 0 && kept < cols)
            k = kept - 1 - i;
    }
    if (!k)
        return std::nullopt;
    for (int64_t m = 0; m < matrices; m++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                if ((mask.get_f64((m * rows + i) * cols + j) != 0) != (j <= i + *k))
                    return std::nullopt;
    return k;
}

} // namespace

int lower_triangular_masks(Graph &g) {
    PatternMatcher m(g);
    std::map<int, Node> replacement;
    for (const Node &n : g.nodes) {
        if (n.op_type != "Where" || !n.domain.empty() || n.inputs.size() != 3)
            continue;
        const Value *cond = m.constant(n.inputs[0]);
        std::optional<double> fill = m.scalar(n.inputs[2]);
        const Value &x = g.value(n.inputs[1]), &out = g.value(n.outputs[0]);
        if (!cond || !fill || x.is_constant() || x.dtype != DType::Float32 ||
            x.shape != out.shape || cond->shape.size() > out.shape.size())
            continue;
        // The mask's last two axes are the output's; its leading ones broadcast.
        const Shape &cs = cond->shape;
        size_t lead = out.shape.size() - cs.size();
        if (cs.size() < 2 || !std::equal(cs.end() - 2, cs.end(), out.shape.end() - 2))
            continue;
        bool broadcasts = true;
        for (size_t a = 0; a + 2 < cs.size(); a++)
            broadcasts = broadcasts && (cs[a] == 1 || cs[a] == out.shape[lead + a]);
        std::optional<int64_t> k =
            broadcasts ? lower_triangle_diagonal(*cond->constant) : std::nullopt;
        if (!k)
            continue;
        Node t;
        t.name = n.name + "__triangular";
        t.op_type = "TriangularWhere"; // is_triangular_where
        t.domain = "nhc";
        t.inputs = {n.inputs[1]};
        t.outputs = n.outputs;
        t.attrs["diagonal"] = *k;
        t.attrs["fill"] = *fill;
        replacement[m.index(&n)] = t;
    }
    replace_nodes(g, {}, replacement);
    return static_cast<int>(replacement.size());
}

bool masked_terms_vanish(const Node &triangular_where, double s) {
    constexpr double kUnderflows = -128;
    double fill = triangular_where.attr_float("fill", 0);
    return triangular_where.attr_int("diagonal", -1) >= 0 &&
           fill * std::min(s, 1.0) / 2 <= kUnderflows;
}

} // namespace nhc
