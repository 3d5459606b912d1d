#include "graph/CancelTransposes.h"

#include "graph/PatternMatch.h"

namespace nhc {

int cancel_transpose_pairs(Graph &g) {
    PatternMatcher m(g);
    std::set<int> removed;
    auto transpose = [&](const Node &n) {
        return n.transpose_perm(static_cast<int64_t>(g.value(n.inputs[0]).shape.size()));
    };
    int cancelled = 0;
    for (Node &second : g.nodes) {
        if (!second.domain.empty() || second.op_type != "Transpose" || second.inputs.size() != 1)
            continue;
        // Back through the views to the first Transpose; every value on the way read only here.
        std::vector<int> chain;
        std::string v = second.inputs[0];
        const Node *view = nullptr;
        while (m.private_value(v, 1) && (view = m.producer(v, "Reshape")) &&
               !removed.count(m.index(view))) {
            chain.push_back(m.index(view));
            v = view->inputs[0];
        }
        const Node *first = m.private_value(v, 1) ? m.producer(v, "Transpose") : nullptr;
        if (!first || removed.count(m.index(first)) ||
            g.value(v).shape != g.value(second.inputs[0]).shape)
            continue;
        std::vector<int64_t> p1 = transpose(*first), p2 = transpose(second);
        bool identity = p1.size() == p2.size();
        for (size_t i = 0; identity && i < p2.size(); i++)
            identity = p1[static_cast<size_t>(p2[i])] == static_cast<int64_t>(i);
        if (!identity)
            continue;
        removed.insert(m.index(first));
        removed.insert(chain.begin(), chain.end());
        second.op_type = "Identity";
        second.attrs.clear();
        second.inputs = {first->inputs[0]};
        cancelled++;
    }
    replace_nodes(g, removed, {});
    return cancelled;
}

} // namespace nhc
