#include "graph/RemoveDeadNodes.h"

#include <set>

namespace nhc {

int remove_dead_nodes(Graph &g) {
    // Backwards through the topological order: a node is live when a live node or the graph
    // reads one of its outputs, and then so are its inputs.
    std::set<std::string> read(g.outputs.begin(), g.outputs.end());
    std::vector<bool> live(g.nodes.size(), false);
    for (size_t i = g.nodes.size(); i-- > 0;) {
        const Node &n = g.nodes[i];
        for (const std::string &out : n.outputs)
            live[i] = live[i] || (!out.empty() && read.count(out) != 0);
        if (live[i])
            read.insert(n.inputs.begin(), n.inputs.end());
    }
    std::vector<Node> kept;
    kept.reserve(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); i++)
        if (live[i])
            kept.push_back(std::move(g.nodes[i]));
    int removed = static_cast<int>(g.nodes.size() - kept.size());
    g.nodes = std::move(kept);
    return removed;
}

} // namespace nhc
