#include "graph/FuseLayerNorm.h"

#include "graph/PatternMatch.h"

#include <map>
#include <optional>
#include <set>

namespace nhc {

namespace {

struct Pattern {
    std::string x, gamma, beta, y;
    double eps = 0;
    std::vector<int> nodes; // indices of the nine nodes
};

// Walks up from the final Add (y = Mul(...) + beta).
std::optional<Pattern> match_at(const Graph &g, const PatternMatcher &m, const Node &add_beta) {
    if (add_beta.op_type != "Add" || !add_beta.domain.empty() || add_beta.inputs.size() != 2)
        return std::nullopt;
    for (int side = 0; side < 2; side++) {
        const Node *mul = m.producer(add_beta.inputs[side], "Mul");
        std::string beta = add_beta.inputs[1 - side];
        if (!mul || !m.constant(beta) || !m.private_value(mul->outputs[0], 1))
            continue;
        const Node *div = nullptr;
        std::string gamma;
        for (int s2 = 0; s2 < 2 && !div; s2++)
            if ((div = m.producer(mul->inputs[s2], "Div")))
                gamma = mul->inputs[1 - s2];
        if (!div || !m.constant(gamma) || !m.private_value(div->outputs[0], 1))
            continue;
        const Node *sub = m.producer(div->inputs[0], "Sub");
        const Node *sqrt = m.producer(div->inputs[1], "Sqrt");
        if (!sub || !sqrt || !m.private_value(sub->outputs[0], 2) ||
            !m.private_value(sqrt->outputs[0], 1))
            continue;
        const Node *add_eps = m.producer(sqrt->inputs[0], "Add");
        if (!add_eps || !m.private_value(add_eps->outputs[0], 1))
            continue;
        const Node *mean2 = nullptr;
        std::string eps;
        for (int s3 = 0; s3 < 2 && !mean2; s3++)
            if ((mean2 = m.producer(add_eps->inputs[s3], "ReduceMean")))
                eps = add_eps->inputs[1 - s3];
        const Value *eps_v = eps.empty() ? nullptr : m.constant(eps);
        if (!mean2 || !eps_v || eps_v->constant->numel() != 1 ||
            !m.private_value(mean2->outputs[0], 1))
            continue;
        const Node *pow = m.producer(mean2->inputs[0], "Pow");
        if (!pow || pow->inputs[0] != sub->outputs[0] || !m.private_value(pow->outputs[0], 1))
            continue;
        const Value *two = m.constant(pow->inputs[1]);
        if (!two || two->constant->numel() != 1 || two->constant->get_f64(0) != 2.0)
            continue;
        const Node *mean = m.producer(sub->inputs[1], "ReduceMean");
        std::string x = sub->inputs[0];
        if (!mean || mean->inputs[0] != x || !m.private_value(mean->outputs[0], 1))
            continue;
        const Value &xv = g.value(x);
        int rank = static_cast<int>(xv.shape.size());
        Shape row{rank ? xv.shape.back() : 1};
        if (!PatternMatcher::last_axis_mean(*mean, rank) ||
            !PatternMatcher::last_axis_mean(*mean2, rank) || g.value(gamma).shape != row ||
            g.value(beta).shape != row)
            continue;
        Pattern p{x, gamma, beta, add_beta.outputs[0], eps_v->constant->get_f64(0), {}};
        for (const Node *n : {mean, sub, pow, mean2, add_eps, sqrt, div, mul, &add_beta})
            p.nodes.push_back(m.index(n));
        return p;
    }
    return std::nullopt;
}

} // namespace

int fuse_decomposed_layer_norms(Graph &g) {
    PatternMatcher m(g);
    std::set<int> removed;
    std::map<int, Node> replacement; // at the final Add's position
    for (const Node &n : g.nodes) {
        std::optional<Pattern> p = match_at(g, m, n);
        if (!p)
            continue;
        Node ln;
        ln.name = n.name + "__layer_norm";
        ln.op_type = "LayerNormalization";
        ln.inputs = {p->x, p->gamma, p->beta};
        ln.outputs = {p->y};
        ln.attrs["axis"] = int64_t(-1);
        ln.attrs["epsilon"] = p->eps;
        removed.insert(p->nodes.begin(), p->nodes.end());
        replacement[p->nodes.back()] = ln;
    }
    replace_nodes(g, removed, replacement);
    return static_cast<int>(replacement.size());
}

} // namespace nhc
