#ifndef NHC_GRAPH_OPERATORSUPPORT_H
#define NHC_GRAPH_OPERATORSUPPORT_H

/** \file
 * Which ONNX operators the compiler can take to a NEFF, and the check that reports every
 * unsupported node of a graph at once (NHC_EUOC002, like neuronx-cc's NCC_EUOC002), grouped by
 * operator type with the node names. An operator becomes supported when an algorithm, a default
 * schedule and code generation exist for it; each operator family registers itself here.
 */

#include "graph/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace nhc {

struct OperatorInfo {
    std::string op_type; ///< default-domain ONNX name
    std::string family;  ///< the algorithm family that implements it (file in src/algorithms)
};

/** Registers an operator (called by the algorithm families at start-up). */
void register_operator(const OperatorInfo &info);

/** Sorted by op_type. */
std::vector<OperatorInfo> supported_operators();
bool is_supported_operator(const std::string &domain, const std::string &op_type);

/** Throws NHC_EUOC002 listing every unsupported node, grouped by op type. */
void check_operator_support(const Graph &g);

/** Throws NHC_EUOC002: graph `graph` has these nodes (names by operator type), which `why`
 *  ("that this compiler does not support yet") says it cannot compile. */
[[noreturn]] void
refuse_operators(const std::string &graph,
                 const std::map<std::string, std::vector<std::string>> &nodes_by_op,
                 const std::string &why);

} // namespace nhc

#endif
