#include "graph/SkipMaskedKeys.h"

#include "graph/CausalMask.h"
#include "graph/FlattenElementwise.h"
#include "graph/FoldSoftmaxScale.h"
#include "graph/PatternMatch.h"

namespace nhc {

namespace {

/** Whether Softmax `n` normalises the last axis alone (opset 13's axis, or an older opset's
 *  "all axes from" the last one). */
bool normalises_last_axis(const Graph &g, const Node &n) {
    int64_t rank = static_cast<int64_t>(g.value(n.inputs[0]).shape.size());
    int64_t axis = n.attr_int("axis", g.opset >= 13 ? -1 : 1);
    return rank >= 2 && (axis == -1 || axis == rank - 1);
}

/** The MatMul that reads `p` as its first operand, when it alone reads p; else nullptr. */
const Node *context_product(const ValueIndex &x, const PatternMatcher &m, const std::string &p) {
    auto readers = x.consumers.find(p);
    if (!m.private_value(p, 1) || readers == x.consumers.end() || readers->second.size() != 1)
        return nullptr;
    const Node &n = *readers->second.front();
    bool product = n.op_type == "MatMul" && n.domain.empty() && n.inputs.size() == 2 &&
                   n.inputs[0] == p && !n.input_perm.count(0);
    return product ? &n : nullptr;
}

} // namespace

int skip_masked_keys(Graph &g) {
    PatternMatcher m(g);
    ValueIndex x = index_values(g);
    std::map<int, Node> replacement;
    for (const Node &n : g.nodes) {
        if (n.op_type != "Softmax" || !n.domain.empty() || n.inputs.size() != 1 ||
            n.outputs.size() != 1 || n.has_attr(kKeysUpToDiagonal) || !normalises_last_axis(g, n))
            continue;
        const Node *mask = m.producer(n.inputs[0], "TriangularWhere", "nhc");
        double scale = n.attr_float(kSoftmaxInputScale, 1.0);
        if (!mask || !m.private_value(n.inputs[0], 1) || !masked_terms_vanish(*mask, scale))
            continue;
        const Node *pv = context_product(x, m, n.outputs[0]);
        if (!pv)
            continue;
        int64_t diagonal = mask->attr_int("diagonal", -1);
        Node softmax = n, product = *pv;
        softmax.attrs[kKeysUpToDiagonal] = diagonal;
        product.attrs[kKeysUpToDiagonal] = diagonal;
        replacement.emplace(m.index(&n), std::move(softmax));
        replacement.emplace(m.index(pv), std::move(product));
    }
    replace_nodes(g, {}, replacement);
    return static_cast<int>(replacement.size() / 2);
}

} // namespace nhc
