#include "graph/FoldTranspose.h"

#include "graph/PatternMatch.h"

namespace nhc {

int fold_transposes_into_matmuls(Graph &g) {
    PatternMatcher m(g);
    std::set<int> removed;
    for (Node &n : g.nodes) {
        if (!n.domain.empty() || n.op_type != "MatMul")
            continue;
        for (int i = 0; i < 2 && i < static_cast<int>(n.inputs.size()); i++) {
            const Node *t = m.producer(n.inputs[i], "Transpose");
            if (!t || !m.private_value(n.inputs[i], 1) || n.input_perm.count(i))
                continue;
            n.input_perm[i] =
                t->transpose_perm(static_cast<int64_t>(g.value(t->inputs[0]).shape.size()));
            n.inputs[i] = t->inputs[0];
            removed.insert(m.index(t));
        }
    }
    replace_nodes(g, removed, {});
    return static_cast<int>(removed.size());
}

} // namespace nhc
