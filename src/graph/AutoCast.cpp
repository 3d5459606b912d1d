#include "graph/AutoCast.h"

#include "support/Error.h"

namespace nhc {

namespace {

// The converted copy of a constant, shared by every node that reads it.
std::string cast_constant(Graph &g, const std::string &name, DType t) {
    std::string cast_name = name + "__" + dtype_name(t);
    if (g.has_value(cast_name))
        return cast_name;
    const Value &v = g.value(name);
    auto c = std::make_shared<HostTensor>(t, v.shape);
    for (int64_t i = 0; i < c->numel(); i++)
        c->set_f64(i, v.constant->get_f64(i)); // float -> bf16/fp16 rounds to nearest even
    g.values[cast_name] = Value{cast_name, t, v.shape, c};
    return cast_name;
}

} // namespace

int auto_cast_matmuls(Graph &g, DType cast_type) {
    nhc_assert(cast_type == DType::BFloat16 || cast_type == DType::Float16,
               "auto-cast to " << dtype_name(cast_type));
    int count = 0;
    for (Node &n : g.nodes) {
        if (!n.domain.empty() || (n.op_type != "MatMul" && n.op_type != "Gemm"))
            continue;
        n.operand_cast = cast_type;
        for (size_t i = 0; i < 2 && i < n.inputs.size(); i++) {
            const Value &v = g.value(n.inputs[i]);
            if (v.is_constant() && v.dtype == DType::Float32)
                n.inputs[i] = cast_constant(g, n.inputs[i], cast_type);
        }
        count++;
    }
    return count;
}

} // namespace nhc
