#ifndef NHC_GRAPH_VALUEINDEX_H
#define NHC_GRAPH_VALUEINDEX_H

/** \file
 * Who computes and who reads each value of a graph, built once in one walk so that passes asking
 * it per value or per group take time linear in the graph (bench/graph_size.py). Pointers are to
 * the graph's nodes: an index is valid until the graph's node list changes. Maps are keyed by
 * value name, so iterating one is deterministic.
 */

#include "graph/Graph.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nhc {

struct ValueIndex {
    std::map<std::string, const Node *> producer;
    /** The nodes reading each value, in graph order, a node reading it twice listed once. */
    std::map<std::string, std::vector<const Node *>> consumers;
    /** How many nodes and graph outputs read each value. */
    std::map<std::string, int> readers;
    std::set<std::string> graph_outputs;

    /** The nodes reading `v` (none for a value nobody reads). */
    const std::vector<const Node *> &consumers_of(const std::string &v) const;
};

ValueIndex index_values(const Graph &g);

} // namespace nhc

#endif
