#include "graph/FuseSwish.h"

#include "graph/PatternMatch.h"

#include <map>
#include <set>

namespace nhc {

int fuse_swish_patterns(Graph &g) {
    PatternMatcher m(g);
    std::set<int> removed;
    std::map<int, Node> replacement; // at the Mul's position
    for (const Node &n : g.nodes) {
        if (n.op_type != "Mul" || !n.domain.empty() || n.inputs.size() != 2)
            continue;
        for (int i = 0; i < 2; i++) {
            const std::string &s = n.inputs[static_cast<size_t>(i)],
                              &x = n.inputs[static_cast<size_t>(1 - i)];
            const Node *sigmoid = m.producer(s, "Sigmoid");
            if (!sigmoid || sigmoid->inputs.size() != 1 || sigmoid->inputs[0] != x ||
                !m.private_value(s, 1) || removed.count(m.index(sigmoid)))
                continue;
            const Value &xv = g.value(x);
            if (xv.is_constant() || xv.dtype != DType::Float32 ||
                xv.shape != g.value(n.outputs[0]).shape)
                continue;
            Node swish;
            swish.name = n.name + "__swish";
            swish.op_type = "Swish";
            swish.inputs = {x};
            swish.outputs = n.outputs;
            swish.attrs["alpha"] = 1.0;
            removed.insert(m.index(sigmoid));
            replacement[m.index(&n)] = swish;
            break;
        }
    }
    replace_nodes(g, removed, replacement);
    return static_cast<int>(replacement.size());
}

} // namespace nhc
