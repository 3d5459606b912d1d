#include "graph/SaturateInfinity.h"

#include <map>

namespace nhc {

namespace {

bool is_matmul(const Node &n) {
    return n.domain.empty() && (n.op_type == "MatMul" || n.op_type == "Gemm");
}

} // namespace

int saturate_matmul_operands(Graph &g) {
    std::map<std::pair<std::string, DType>, std::string> clipped; // (value, PE type) -> clip's
    std::vector<Node> nodes;
    for (Node &n : g.nodes) {
        if (is_matmul(n)) {
            for (size_t i = 0; i < 2 && i < n.inputs.size(); i++) {
                const Value &v = g.value(n.inputs[i]);
                if (v.is_constant() || !dtype_is_float(v.dtype))
                    continue;
                DType pe = n.operand_cast.value_or(v.dtype);
                auto [it, fresh] = clipped.emplace(std::make_pair(v.name, pe), "");
                if (fresh) {
                    Node clip;
                    clip.name = n.name + "__saturate" + std::to_string(i);
                    clip.op_type = "Clip";
                    clip.inputs = {v.name};
                    it->second = v.name + "__saturated_" + dtype_name(pe);
                    clip.outputs = {it->second};
                    clip.attrs["min"] = -dtype_largest_finite(pe);
                    clip.attrs["max"] = dtype_largest_finite(pe);
                    Value out = v;
                    out.name = it->second;
                    g.values[out.name] = out;
                    nodes.push_back(std::move(clip));
                }
                n.inputs[i] = it->second;
            }
        }
        nodes.push_back(std::move(n));
    }
    g.nodes = std::move(nodes);
    return static_cast<int>(clipped.size());
}

} // namespace nhc
