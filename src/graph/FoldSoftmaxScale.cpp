#include "graph/FoldSoftmaxScale.h"

#include "graph/CausalMask.h"
#include "graph/PatternMatch.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace nhc {

namespace {

bool power_of_two(double s) {
    int exponent = 0;
    return s > 0 && std::frexp(s, &exponent) == 0.5;
}

/** v = x * s, by a Mul or Div of fp32 x by a positive scalar constant. */
struct Scaled {
    std::string x;
    double s = 1;
    const Node *node = nullptr;
};

/** How `v` is scaled, when x * s is exactly v for every x (a Mul, or a Div by a power of two)
 *  and v is read only once; or nullopt. */
std::optional<Scaled> scaled_input(const Graph &g, const PatternMatcher &m, const std::string &v) {
    if (!m.private_value(v, 1))
        return std::nullopt;
    std::optional<Scaled> found;
    if (const Node *mul = m.producer(v, "Mul"); mul && mul->inputs.size() == 2)
        for (int c = 0; c < 2 && !found; c++)
            if (std::optional<double> s = m.scalar(mul->inputs[size_t(c)]); s && *s > 0)
                found = Scaled{mul->inputs[size_t(1 - c)], *s, mul};
    if (const Node *div = m.producer(v, "Div"); div && div->inputs.size() == 2)
        if (std::optional<double> c = m.scalar(div->inputs[1]); c && power_of_two(*c))
            found = Scaled{div->inputs[0], 1.0 / *c, div}; // 1/c exact: x / c == x * (1/c)
    // No broadcast and no cast: the scaled value is x's shape and fp32.
    if (found && (g.value(found->x).shape != g.value(v).shape ||
                  g.value(found->x).dtype != DType::Float32 || g.value(v).dtype != DType::Float32))
        return std::nullopt;
    return found;
}

} // namespace

int fold_softmax_scales(Graph &g) {
    PatternMatcher m(g);
    std::set<int> removed;
    std::map<int, Node> replacement;
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        const Node &n = g.nodes[i];
        if (n.op_type != "Softmax" || !n.domain.empty() || n.inputs.size() != 1 ||
            n.has_attr(kSoftmaxInputScale))
            continue;
        Node folded = n;
        std::optional<Scaled> scaled = scaled_input(g, m, n.inputs[0]);
        const Node *mask = m.producer(n.inputs[0], "TriangularWhere", "nhc");
        if (scaled) {
            folded.inputs[0] = scaled->x; // softmax(x * s)
        } else if (mask && m.private_value(n.inputs[0], 1)) {
            // softmax(where(j <= i + k, x * s, fill)) = softmax_s(where(j <= i + k, x, fill)).
            std::optional<Scaled> inner = scaled_input(g, m, mask->inputs[0]);
            if (inner && masked_terms_vanish(*mask, inner->s)) {
                scaled = inner;
                Node where = *mask;
                where.inputs[0] = scaled->x;
                replacement.emplace(m.index(mask), std::move(where));
            }
        } else if (const Node *mm = m.producer(n.inputs[0], "MatMul");
                   mm && m.private_value(n.inputs[0], 1) && mm->inputs.size() == 2 &&
                   mm->input_perm.empty() && !replacement.count(m.index(mm))) {
            // softmax((q * s) · k) = softmax((q · k) * s): for s a power of two every product
            // and partial sum is scaled exactly (so are their roundings to bf16 under auto-cast).
            for (int j = 0; j < 2 && !scaled; j++)
                if ((scaled = scaled_input(g, m, mm->inputs[size_t(j)])) &&
                    power_of_two(scaled->s)) {
                    Node product = *mm;
                    product.inputs[size_t(j)] = scaled->x;
                    replacement.emplace(m.index(mm), std::move(product));
                } else {
                    scaled.reset();
                }
        }
        if (!scaled)
            continue;
        removed.insert(m.index(scaled->node));
        folded.attrs[kSoftmaxInputScale] = scaled->s;
        replacement.emplace(static_cast<int>(i), std::move(folded));
        count++;
    }
    replace_nodes(g, removed, replacement);
    return count;
}

} // namespace nhc
