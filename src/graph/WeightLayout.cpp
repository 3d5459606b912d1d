#include "graph/WeightLayout.h"

#include <algorithm>

namespace nhc {

namespace {

// The transposed copy of a 2-D constant, shared by every node that reads it.
std::string transposed_constant(Graph &g, const std::string &name) {
    std::string t_name = name + "__T";
    if (g.has_value(t_name))
        return t_name;
    const Value &v = g.value(name);
    int64_t rows = v.shape[0], cols = v.shape[1];
    auto t = std::make_shared<HostTensor>(v.dtype, Shape{cols, rows});
    int64_t es = dtype_size(v.dtype);
    const uint8_t *src = v.constant->bytes().data();
    uint8_t *dst = t->mutable_bytes().data();
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            std::copy_n(src + (r * cols + c) * es, es, dst + (c * rows + r) * es);
    g.values[t_name] = Value{t_name, v.dtype, t->shape(), t};
    return t_name;
}

bool is_2d_constant(const Graph &g, const std::string &name) {
    const Value &v = g.value(name);
    return v.is_constant() && v.shape.size() == 2;
}

} // namespace

int layout_matmul_weights(Graph &g) {
    int count = 0;
    for (Node &n : g.nodes) {
        if (!n.domain.empty() || n.op_type != "Gemm" || n.inputs.size() < 2)
            continue;
        if (n.attr_int("transB", 0) != 0 && is_2d_constant(g, n.inputs[1])) {
            n.inputs[1] = transposed_constant(g, n.inputs[1]);
            n.attrs["transB"] = int64_t(0);
            count++;
        }
        if (n.attr_int("transA", 0) == 0 && is_2d_constant(g, n.inputs[0])) {
            n.inputs[0] = transposed_constant(g, n.inputs[0]);
            n.attrs["transA"] = int64_t(1);
            count++;
        }
    }
    return count;
}

} // namespace nhc
