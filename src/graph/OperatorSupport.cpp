#include "graph/OperatorSupport.h"

#include "support/Error.h"

#include <map>

namespace nhc {

static std::map<std::string, OperatorInfo> &registry() {
    static std::map<std::string, OperatorInfo> ops;
    return ops;
}

void register_operator(const OperatorInfo &info) {
    registry()[info.op_type] = info;
}

std::vector<OperatorInfo> supported_operators() {
    std::vector<OperatorInfo> out;
    for (const auto &[name, info] : registry())
        out.push_back(info);
    return out;
}

bool is_supported_operator(const std::string &domain, const std::string &op_type) {
    return domain.empty() && registry().count(op_type) != 0;
}

void check_operator_support(const Graph &g) {
    std::map<std::string, std::vector<std::string>> missing; // op -> node names
    for (const Node &node : g.nodes)
        if (!is_supported_operator(node.domain, node.op_type))
            missing[(node.domain.empty() ? "" : node.domain + ".") + node.op_type].push_back(
                node.name);
    if (!missing.empty())
        refuse_operators(g.name, missing, "that this compiler does not support yet");
}

void refuse_operators(const std::string &graph,
                      const std::map<std::string, std::vector<std::string>> &nodes_by_op,
                      const std::string &why) {
    std::string list;
    size_t nodes = 0;
    for (const auto &[op, names] : nodes_by_op) {
        list += "\n  " + op + " (" + std::to_string(names.size()) + "):";
        for (size_t i = 0; i < names.size() && i < 8; i++)
            list += " '" + names[i] + "'";
        if (names.size() > 8)
            list += " and " + std::to_string(names.size() - 8) + " more";
        nodes += names.size();
    }
    user_error("NHC_EUOC002", "graph '", graph, "' has ", nodes, " node(s) of ", nodes_by_op.size(),
               " operator type(s) ", why, " (see `neuron-halide-cc list-operators`):", list);
}

} // namespace nhc
