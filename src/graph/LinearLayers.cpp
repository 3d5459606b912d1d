#include "graph/LinearLayers.h"

#include <algorithm>
#include <map>
#include <set>

namespace nhc {

namespace {

Node reshape_node(const std::string &name, const std::string &in, const std::string &shape,
                  const std::string &out) {
    Node n;
    n.name = name;
    n.op_type = "Reshape";
    n.inputs = {in, shape};
    n.outputs = {out};
    return n;
}

/** Whether `t` is a Transpose that swaps the last two axes of a value whose other axes are all
 *  of extent 1: its output viewed 2-D is its input viewed 2-D, transposed. */
bool swaps_2d(const Graph &g, const Node &t) {
    if (t.op_type != "Transpose" || !t.domain.empty() || t.inputs.size() != 1)
        return false;
    const Shape &in = g.value(t.inputs[0]).shape;
    int64_t rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> perm = t.transpose_perm(rank);
    if (rank < 2 || perm[rank - 1] != rank - 2 || perm[rank - 2] != rank - 1)
        return false;
    for (int64_t d = 0; d < rank - 2; d++)
        if (perm[d] != d || in[d] != 1)
            return false;
    return true;
}

} // namespace

int canonicalize_linear_layers(Graph &g) {
    std::map<std::string, int> readers;
    for (const Node &n : g.nodes)
        for (const std::string &in : n.inputs)
            readers[in]++;
    std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
    std::map<std::string, const Node *> producer;
    for (const Node &n : g.nodes)
        for (const std::string &out : n.outputs)
            producer[out] = &n;
    std::set<std::string> dropped; // outputs of Transposes the Gemm reads through (transA)
    std::vector<Node> out_nodes;
    std::set<size_t> absorbed; // Adds folded into a Gemm
    int count = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (absorbed.count(i))
            continue;
        const Node &mm = g.nodes[i];
        const Value *x = mm.op_type == "MatMul" && mm.domain.empty() && mm.input_perm.empty()
                             ? &g.value(mm.inputs[0])
                             : nullptr;
        const Value *w = x ? &g.value(mm.inputs[1]) : nullptr;
        if (!x || x->shape.size() < 3 || w->shape.size() != 2) {
            out_nodes.push_back(mm);
            continue;
        }
        int64_t k = x->shape.back(), n = w->shape[1], m = shape_numel(x->shape) / k;
        const Value &y = g.value(mm.outputs[0]);
        // The bias Add, when it is the only reader of the MatMul's output.
        std::string bias, final_out = mm.outputs[0];
        if (readers[y.name] == 1 && !outputs.count(y.name) && i + 1 < g.nodes.size()) {
            const Node &add = g.nodes[i + 1];
            int other = add.inputs.size() == 2 && add.inputs[1] == y.name   ? 0
                        : add.inputs.size() == 2 && add.inputs[0] == y.name ? 1
                                                                            : -1;
            if (add.op_type == "Add" && add.domain.empty() && other >= 0) {
                const Value &b = g.value(add.inputs[other]);
                if (b.is_constant() && b.shape == Shape{n} &&
                    g.value(add.outputs[0]).shape == y.shape) {
                    bias = b.name;
                    final_out = add.outputs[0];
                    absorbed.insert(i + 1);
                }
            }
        }
        // x swapped from [1.., K, M], read by this layer alone: the Gemm reads that value as
        // [K, M] (transA), K outer as the PE takes it, where the Transpose would be an HBM copy
        // that moves the innermost axis, a descriptor row per element (sd_unet_64's attention
        // input, [1, 512, 256] -> [1, 256, 512]).
        auto t = producer.find(x->name);
        bool trans_a = t != producer.end() && readers[x->name] == 1 && !outputs.count(x->name) &&
                       swaps_2d(g, *t->second);
        const Value &a = trans_a ? g.value(t->second->inputs[0]) : *x;
        std::string x2 = mm.name + "__x2d", y2 = mm.name + "__y2d";
        Shape a2 = trans_a ? Shape{k, m} : Shape{m, k};
        g.values[x2] = Value{x2, x->dtype, a2, nullptr};
        g.values[y2] = Value{y2, y.dtype, {m, n}, nullptr};
        out_nodes.push_back(reshape_node(mm.name + "__flatten", a.name,
                                         shape_constant(g, mm.name + "__shape2d", a2), x2));
        Node gemm;
        gemm.name = mm.name;
        gemm.op_type = "Gemm";
        if (trans_a) {
            gemm.attrs["transA"] = int64_t(1);
            dropped.insert(x->name);
        }
        gemm.inputs = {x2, w->name};
        if (!bias.empty())
            gemm.inputs.push_back(bias);
        gemm.outputs = {y2};
        gemm.operand_cast = mm.operand_cast;
        gemm.keep_precision = mm.keep_precision;
        out_nodes.push_back(gemm);
        out_nodes.push_back(reshape_node(mm.name + "__unflatten", y2,
                                         shape_constant(g, mm.name + "__shape_nd", y.shape),
                                         final_out));
        count++;
    }
    out_nodes.erase(std::remove_if(out_nodes.begin(), out_nodes.end(),
                                   [&](const Node &n) {
                                       return n.outputs.size() == 1 && dropped.count(n.outputs[0]);
                                   }),
                    out_nodes.end());
    g.nodes = std::move(out_nodes);
    return count;
}

} // namespace nhc
