#include "graph/FoldTranspose.h"

#include <algorithm>
#include <set>

namespace nhc {

int fold_transposes_into_matmuls(Graph &g) {
    std::map<std::string, int> producer, readers;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        for (const std::string &out : g.nodes[i].outputs)
            producer[out] = static_cast<int>(i);
        for (const std::string &in : g.nodes[i].inputs)
            readers[in]++;
    }
    std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
    std::set<int> removed;
    for (Node &n : g.nodes) {
        if (!n.domain.empty() || n.op_type != "MatMul")
            continue;
        for (int i = 0; i < 2 && i < static_cast<int>(n.inputs.size()); i++) {
            auto p = producer.find(n.inputs[i]);
            if (p == producer.end())
                continue;
            const Node &t = g.nodes[p->second];
            if (t.op_type != "Transpose" || !t.domain.empty() || readers[n.inputs[i]] != 1 ||
                outputs.count(n.inputs[i]) || n.input_perm.count(i))
                continue;
            std::vector<int64_t> perm = t.attr_ints("perm");
            int rank = static_cast<int>(g.value(t.inputs[0]).shape.size());
            if (perm.empty())
                for (int d = rank - 1; d >= 0; d--)
                    perm.push_back(d);
            for (int64_t &d : perm)
                d = d < 0 ? d + rank : d;
            n.input_perm[i] = perm;
            n.inputs[i] = t.inputs[0];
            removed.insert(p->second);
        }
    }
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); i++)
        if (!removed.count(static_cast<int>(i)))
            kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
    return static_cast<int>(removed.size());
}

} // namespace nhc
