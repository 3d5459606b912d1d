#include "graph/FoldSoftmaxScale.h"

#include "graph/PatternMatch.h"

#include <cmath>
#include <optional>

namespace nhc {

namespace {

/** s such that the value `v` is x * s (its producer is a Mul or Div of x by a positive scalar
 *  constant, with x * s exactly that value for every x), and x; or nullopt. */
std::optional<std::pair<std::string, double>> scaled_input(const PatternMatcher &m,
                                                           const std::string &v) {
    if (!m.private_value(v, 1))
        return std::nullopt;
    if (const Node *mul = m.producer(v, "Mul"); mul && mul->inputs.size() == 2)
        for (int c = 0; c < 2; c++)
            if (std::optional<double> s = m.scalar(mul->inputs[size_t(c)]); s && *s > 0)
                return std::make_pair(mul->inputs[size_t(1 - c)], *s);
    if (const Node *div = m.producer(v, "Div"); div && div->inputs.size() == 2) {
        std::optional<double> c = m.scalar(div->inputs[1]);
        int exponent = 0;
        // A power of two: 1/c is exact, so x / c == x * (1/c).
        if (c && *c > 0 && std::frexp(*c, &exponent) == 0.5)
            return std::make_pair(div->inputs[0], 1.0 / *c);
    }
    return std::nullopt;
}

} // namespace

int fold_softmax_scales(Graph &g) {
    PatternMatcher m(g);
    std::set<int> removed;
    std::map<int, Node> replacement;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        const Node &n = g.nodes[i];
        if (n.op_type != "Softmax" || !n.domain.empty() || n.inputs.size() != 1 ||
            n.has_attr(kSoftmaxInputScale))
            continue;
        const Value &in = g.value(n.inputs[0]);
        std::optional<std::pair<std::string, double>> scaled = scaled_input(m, n.inputs[0]);
        // The scaled value must have the shape and type of its input (no broadcast, no cast).
        if (!scaled || g.value(scaled->first).shape != in.shape ||
            g.value(scaled->first).dtype != in.dtype || in.dtype != DType::Float32)
            continue;
        const Node *scale = m.producer(n.inputs[0], "Mul");
        if (!scale)
            scale = m.producer(n.inputs[0], "Div");
        removed.insert(m.index(scale));
        Node folded = n;
        folded.inputs[0] = scaled->first;
        folded.attrs[kSoftmaxInputScale] = scaled->second;
        replacement.emplace(static_cast<int>(i), std::move(folded));
    }
    replace_nodes(g, removed, replacement);
    return static_cast<int>(replacement.size());
}

} // namespace nhc
