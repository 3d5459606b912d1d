#include "frontend/Subgraphs.h"

namespace nhc {

namespace {

/** Adds the names `g` (and the subgraphs within) reads to `used` and those it defines to
 *  `defined`. */
void collect(const onnx::GraphProto &g, std::set<std::string> &used,
             std::set<std::string> &defined) {
    for (const auto &vi : g.input())
        defined.insert(vi.name());
    for (const auto &t : g.initializer())
        defined.insert(t.name());
    for (const auto &n : g.node()) {
        for (const auto &in : n.input())
            if (!in.empty())
                used.insert(in);
        defined.insert(n.output().begin(), n.output().end());
        for (const auto &a : n.attribute()) {
            if (a.has_g())
                collect(a.g(), used, defined);
            for (const auto &sub : a.graphs())
                collect(sub, used, defined);
        }
    }
    for (const auto &vi : g.output()) // an output may be a captured value, passed through
        used.insert(vi.name());
}

} // namespace

std::set<std::string> captured_names(const onnx::NodeProto &node) {
    std::set<std::string> used, defined, captured;
    for (const auto &a : node.attribute()) {
        if (a.has_g())
            collect(a.g(), used, defined);
        for (const auto &sub : a.graphs())
            collect(sub, used, defined);
    }
    for (const std::string &name : used)
        if (!defined.count(name))
            captured.insert(name);
    return captured;
}

bool has_subgraph(const onnx::NodeProto &node) {
    for (const auto &a : node.attribute())
        if (a.has_g() || a.graphs_size() > 0)
            return true;
    return false;
}

} // namespace nhc
