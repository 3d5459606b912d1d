#ifndef NHC_TESTS_GRAPHTEXT_H
#define NHC_TESTS_GRAPHTEXT_H

// Graphs for the graph-pass tests: a model in ONNX's textual syntax through the front end, and
// the operators a pass left.

#include "TestModels.h"
#include "frontend/Frontend.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace nhc::test {

/** The front end's graph of a model written in ONNX's textual syntax. */
inline Graph load_graph(const std::string &text) {
    TempDir dir;
    return run_frontend(write_model(parse_model(text), dir.file("m.onnx")), {});
}

/** The first node of operator `op`; fails the test when there is none. */
inline const Node &node_of(const Graph &g, const std::string &op) {
    for (const Node &n : g.nodes)
        if (n.op_type == op)
            return n;
    FAIL("no " << op);
    throw;
}

/** The graph's operators, in node order. */
inline std::vector<std::string> op_types(const Graph &g) {
    std::vector<std::string> v;
    for (const Node &n : g.nodes)
        v.push_back(n.op_type);
    return v;
}

} // namespace nhc::test

#endif
