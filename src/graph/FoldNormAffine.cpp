#include "graph/FoldNormAffine.h"

#include <map>
#include <memory>
#include <set>

namespace nhc {

namespace {

struct Readers {
    std::map<std::string, std::vector<size_t>> of; // value -> indices of the nodes reading it
    std::set<std::string> outputs;
};

Readers index_readers(const Graph &g) {
    Readers r;
    for (size_t i = 0; i < g.nodes.size(); i++)
        for (const std::string &in :
             std::set<std::string>(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end()))
            r.of[in].push_back(i);
    r.outputs.insert(g.outputs.begin(), g.outputs.end());
    return r;
}

/** The Gemms that read `v` (directly, or through Reshapes keeping the last axis of `k`) as their
 *  A, each with a constant B of K rows and a constant bias or none; false if anything else reads
 *  it or a Gemm has another form. */
bool linear_readers(const Graph &g, const Readers &r, const std::string &v, int64_t k,
                    std::vector<size_t> &gemms) {
    if (r.outputs.count(v))
        return false;
    auto it = r.of.find(v);
    if (it == r.of.end())
        return false;
    for (size_t i : it->second) {
        const Node &n = g.nodes[i];
        if (!n.domain.empty())
            return false;
        if (n.op_type == "Reshape" && n.inputs[0] == v && g.value(n.outputs[0]).shape.back() == k) {
            if (!linear_readers(g, r, n.outputs[0], k, gemms))
                return false;
            continue;
        }
        bool plain = n.op_type == "Gemm" && n.inputs.size() >= 2 && n.inputs[0] == v &&
                     n.inputs[1] != v && n.attr_int("transA", 0) == 0 &&
                     n.attr_float("alpha", 1.0) == 1.0 && n.attr_float("beta", 1.0) == 1.0 &&
                     n.input_perm.empty() && !n.operand_cast;
        const Value *b = plain ? &g.value(n.inputs[1]) : nullptr;
        bool has_c = n.inputs.size() > 2 && !n.inputs[2].empty();
        if (!b || !b->is_constant() || b->dtype != DType::Float32 || b->shape.size() != 2 ||
            b->shape[n.attr_int("transB", 0) ? 1 : 0] != k ||
            (has_c &&
             (!g.value(n.inputs[2]).is_constant() || g.value(n.inputs[2]).dtype != DType::Float32 ||
              shape_numel(g.value(n.inputs[2]).shape) !=
                  b->shape[n.attr_int("transB", 0) ? 0 : 1])))
            return false;
        gemms.push_back(i);
    }
    return !gemms.empty();
}

bool all_zero(const HostTensor *t) {
    for (int64_t i = 0; t && i < t->numel(); i++)
        if (t->get_f64(i) != 0)
            return false;
    return true;
}

/** Gemm `n` with B scaled by `scale` along K and the bias plus `shift` times B. */
void fold_into(Graph &g, Node &n, const HostTensor &scale, const HostTensor *shift) {
    const Value &bv = g.value(n.inputs[1]);
    bool trans = n.attr_int("transB", 0) != 0;
    int64_t k = scale.numel(), cols = bv.shape[trans ? 0 : 1];
    auto b = std::make_shared<HostTensor>(DType::Float32, bv.shape);
    std::vector<double> c(static_cast<size_t>(cols), 0.0);
    bool has_c = n.inputs.size() > 2 && !n.inputs[2].empty();
    for (int64_t j = 0; has_c && j < cols; j++)
        c[size_t(j)] = g.value(n.inputs[2]).constant->get_f64(j);
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t at = trans ? j * k + kk : kk * cols + j;
            double w = bv.constant->get_f64(at);
            b->set_f64(at, w * scale.get_f64(kk));
            if (shift)
                c[size_t(j)] += shift->get_f64(kk) * w;
        }
    std::string b_name = n.name + "__norm_scaled_b";
    g.values[b_name] = Value{b_name, DType::Float32, bv.shape, b};
    n.inputs[1] = b_name;
    if (has_c || shift) {
        auto ct = std::make_shared<HostTensor>(DType::Float32, Shape{cols});
        for (int64_t j = 0; j < cols; j++)
            ct->set_f64(j, c[size_t(j)]);
        std::string c_name = n.name + "__norm_shifted_c";
        g.values[c_name] = Value{c_name, DType::Float32, {cols}, ct};
        if (n.inputs.size() < 3)
            n.inputs.resize(3);
        n.inputs[2] = c_name;
    }
}

/** Erases the `names` no node reads any more (and no graph input or output is): the compiler
 *  would otherwise hold the weights the folded ones replace until it ends. */
void drop_unread(Graph &g, const std::set<std::string> &names) {
    std::set<std::string> read(g.inputs.begin(), g.inputs.end());
    read.insert(g.outputs.begin(), g.outputs.end());
    for (const Node &n : g.nodes)
        read.insert(n.inputs.begin(), n.inputs.end());
    for (const std::string &name : names)
        if (!read.count(name))
            g.values.erase(name);
}

} // namespace

int fold_norm_affine_into_linear(Graph &g) {
    Readers r = index_readers(g);
    std::set<std::string> replaced; // the weights and biases the folded Gemms read before
    int count = 0;
    for (Node &n : g.nodes) {
        if (n.op_type != "LayerNormalization" || !n.domain.empty() || n.has_attr(kNoAffine) ||
            n.outputs.size() != 1 || n.inputs.size() < 2)
            continue;
        const Value &x = g.value(n.inputs[0]), &scale = g.value(n.inputs[1]);
        int64_t rank = static_cast<int64_t>(x.shape.size()), axis = n.attr_int("axis", -1);
        if (rank < 1 || (axis != -1 && axis != rank - 1) || !scale.is_constant() ||
            scale.dtype != DType::Float32 || shape_numel(scale.shape) != x.shape.back())
            continue;
        bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
        const Value *bias = has_bias ? &g.value(n.inputs[2]) : nullptr;
        if (bias && (!bias->is_constant() || bias->dtype != DType::Float32 ||
                     shape_numel(bias->shape) != x.shape.back()))
            continue;
        const HostTensor *shift =
            bias && !all_zero(bias->constant.get()) ? bias->constant.get() : nullptr;
        std::vector<size_t> gemms;
        if (!linear_readers(g, r, n.outputs[0], x.shape.back(), gemms))
            continue;
        bool biased = true;
        for (size_t i : gemms)
            biased = biased && g.nodes[i].inputs.size() > 2 && !g.nodes[i].inputs[2].empty();
        if (shift && !biased)
            continue;
        std::shared_ptr<const HostTensor> s = scale.constant;
        for (size_t i : gemms) {
            const std::vector<std::string> &in = g.nodes[i].inputs;
            replaced.insert(in.begin() + 1, in.end());
            fold_into(g, g.nodes[i], *s, shift);
        }
        n.attrs[kNoAffine] = int64_t(1);
        count++;
    }
    drop_unread(g, replaced);
    return count;
}

} // namespace nhc
