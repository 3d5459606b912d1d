#include "graph/CancelTransposes.h"

#include <set>

namespace nhc {

namespace {

/** A Transpose's permutation, the default (reversed axes) and negative axes resolved. */
std::vector<int64_t> permutation(const Graph &g, const Node &t) {
    std::vector<int64_t> perm = t.attr_ints("perm");
    int64_t rank = static_cast<int64_t>(g.value(t.inputs[0]).shape.size());
    if (perm.empty())
        for (int64_t d = rank - 1; d >= 0; d--)
            perm.push_back(d);
    for (int64_t &d : perm)
        d = d < 0 ? d + rank : d;
    return perm;
}

bool is_plain(const Node &n, const char *op) {
    return n.domain.empty() && n.op_type == op;
}

} // namespace

int cancel_transpose_pairs(Graph &g) {
    std::map<std::string, int> producer, readers;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        for (const std::string &out : g.nodes[i].outputs)
            producer[out] = static_cast<int>(i);
        for (const std::string &in : g.nodes[i].inputs)
            readers[in]++;
    }
    std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
    auto private_value = [&](const std::string &v) { return readers[v] == 1 && !outputs.count(v); };
    std::set<int> removed;
    int cancelled = 0;
    for (Node &second : g.nodes) {
        if (!is_plain(second, "Transpose") || second.inputs.size() != 1)
            continue;
        // Back through the views to the first Transpose; every value on the way read only here.
        std::vector<int> chain;
        std::string v = second.inputs[0];
        while (producer.count(v) && private_value(v) && !removed.count(producer[v]) &&
               is_plain(g.nodes[static_cast<size_t>(producer[v])], "Reshape")) {
            chain.push_back(producer[v]);
            v = g.nodes[static_cast<size_t>(producer[v])].inputs[0];
        }
        if (!producer.count(v) || !private_value(v) || removed.count(producer[v]))
            continue;
        const Node &first = g.nodes[static_cast<size_t>(producer[v])];
        if (!is_plain(first, "Transpose") || g.value(v).shape != g.value(second.inputs[0]).shape)
            continue;
        std::vector<int64_t> p1 = permutation(g, first), p2 = permutation(g, second);
        bool identity = p1.size() == p2.size();
        for (size_t i = 0; identity && i < p2.size(); i++)
            identity = p1[static_cast<size_t>(p2[i])] == static_cast<int64_t>(i);
        if (!identity)
            continue;
        removed.insert(producer[v]);
        removed.insert(chain.begin(), chain.end());
        second.op_type = "Identity";
        second.attrs.clear();
        second.inputs = {first.inputs[0]};
        cancelled++;
    }
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); i++)
        if (!removed.count(static_cast<int>(i)))
            kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
    return cancelled;
}

} // namespace nhc
