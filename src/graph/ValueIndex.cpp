#include "graph/ValueIndex.h"

namespace nhc {

const std::vector<const Node *> &ValueIndex::consumers_of(const std::string &v) const {
    static const std::vector<const Node *> none;
    auto it = consumers.find(v);
    return it == consumers.end() ? none : it->second;
}

ValueIndex index_values(const Graph &g) {
    ValueIndex x;
    for (const Node &n : g.nodes) {
        for (const std::string &o : n.outputs)
            x.producer[o] = &n;
        for (const std::string &in : std::set<std::string>(n.inputs.begin(), n.inputs.end())) {
            if (in.empty())
                continue; // an omitted optional input
            x.readers[in]++;
            x.consumers[in].push_back(&n);
        }
    }
    for (const std::string &out : g.outputs)
        x.readers[out]++;
    x.graph_outputs.insert(g.outputs.begin(), g.outputs.end());
    return x;
}

} // namespace nhc
