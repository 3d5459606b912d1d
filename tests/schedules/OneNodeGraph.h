#ifndef NHC_TESTS_SCHEDULES_ONENODEGRAPH_H
#define NHC_TESTS_SCHEDULES_ONENODEGRAPH_H

// A graph of one node with fp32 inputs in0, in1, ... and output out, for the tests that schedule
// or select instructions for a single operator by hand.

#include "graph/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace nhc::test {

inline Graph one_node_graph(const std::string &op, const std::vector<Shape> &in_shapes,
                            const Shape &out_shape, std::map<std::string, AttrValue> attrs = {}) {
    Graph g;
    g.opset = 17;
    Node n;
    n.name = "node";
    n.op_type = op;
    n.attrs = std::move(attrs);
    for (size_t i = 0; i < in_shapes.size(); i++) {
        std::string name = "in" + std::to_string(i);
        g.values[name] = Value{name, DType::Float32, in_shapes[i], nullptr};
        g.inputs.push_back(name);
        n.inputs.push_back(name);
    }
    g.values["out"] = Value{"out", DType::Float32, out_shape, nullptr};
    n.outputs = {"out"};
    g.outputs = {"out"};
    g.nodes.push_back(n);
    return g;
}

} // namespace nhc::test

#endif
