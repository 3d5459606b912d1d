#ifndef NHC_GRAPH_PATTERNMATCH_H
#define NHC_GRAPH_PATTERNMATCH_H

/** \file
 * What the pattern-recognising graph passes (FuseLayerNorm, FuseGelu) ask of a graph while they
 * walk up from a pattern's last node: the producer of a value, whether a value is private to the
 * pattern (read by exactly the expected number of nodes and not a graph output), and scalar
 * constants. Built once per pass; the graph must not change while it is in use.
 */

#include "graph/Graph.h"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace nhc {

class PatternMatcher {
public:
    explicit PatternMatcher(const Graph &g) : g_(g) {
        for (size_t i = 0; i < g.nodes.size(); i++) {
            for (const std::string &o : g.nodes[i].outputs)
                producer_[o] = static_cast<int>(i);
            for (const std::string &in : g.nodes[i].inputs)
                readers_[in]++;
        }
        outputs_.insert(g.outputs.begin(), g.outputs.end());
    }

    /** The node producing `v` if it is `op` of `domain` (default: ONNX's), else nullptr. */
    const Node *producer(const std::string &v, const char *op, const char *domain = "") const {
        auto it = producer_.find(v);
        if (it == producer_.end())
            return nullptr;
        const Node &n = g_.nodes[it->second];
        return n.op_type == op && n.domain == domain ? &n : nullptr;
    }
    int index(const Node *n) const { return static_cast<int>(n - g_.nodes.data()); }
    bool private_value(const std::string &v, int readers) const {
        auto it = readers_.find(v);
        return !outputs_.count(v) && it != readers_.end() && it->second == readers;
    }
    const Value *constant(const std::string &v) const {
        const Value &val = g_.value(v);
        return val.is_constant() ? &val : nullptr;
    }
    /** The value of a one-element constant, or nullopt. */
    std::optional<double> scalar(const std::string &v) const {
        const Value *c = v.empty() ? nullptr : constant(v);
        if (!c || c->constant->numel() != 1)
            return std::nullopt;
        return c->constant->get_f64(0);
    }
    /** The operand of a two-input node that is not `known`, or "". */
    static std::string other(const Node &n, const std::string &known) {
        if (n.inputs.size() != 2)
            return "";
        return n.inputs[0] == known ? n.inputs[1] : n.inputs[1] == known ? n.inputs[0] : "";
    }
    static bool last_axis_mean(const Node &n, int rank) {
        std::vector<int64_t> axes = n.attr_ints("axes");
        return n.inputs.size() == 1 && axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1) &&
               n.attr_int("keepdims", 1) == 1;
    }

private:
    const Graph &g_;
    std::map<std::string, int> producer_, readers_;
    std::set<std::string> outputs_;
};

/** Rewrites g.nodes in order: the node at each index of `replacement` becomes its replacement,
 *  the nodes at the indices in `removed` go, the others stay. */
inline void replace_nodes(Graph &g, const std::set<int> &removed,
                          const std::map<int, Node> &replacement) {
    std::vector<Node> nodes;
    for (int i = 0; i < static_cast<int>(g.nodes.size()); i++) {
        if (replacement.count(i))
            nodes.push_back(replacement.at(i));
        else if (!removed.count(i))
            nodes.push_back(std::move(g.nodes[static_cast<size_t>(i)]));
    }
    g.nodes = std::move(nodes);
}

} // namespace nhc

#endif
