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
    if (missing.empty())
        return;
    std::string list;
    size_t nodes = 0;
    for (const auto &[op, names] : missing) {
        list += "\n  " + op + " (" + std::to_string(names.size()) + "):";
        for (size_t i = 0; i < names.size() && i < 8; i++)
            list += " '" + names[i] + "'";
        if (names.size() > 8)
            list += " and " + std::to_string(names.size() - 8) + " more";
        nodes += names.size();
    }
    user_error("NHC_EUOC002", "graph '", g.name, "' has ", nodes, " node(s) of ", missing.size(),
               " operator type(s) that this compiler does not support yet (see "
               "`neuron-halide-cc list-operators`):",
               list);
}

} // namespace nhc
