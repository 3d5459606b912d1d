#include "graph/FuseGelu.h"

#include "graph/PatternMatch.h"

#include <cmath>
#include <optional>
#include <set>

namespace nhc {

namespace {

bool near(std::optional<double> v, double want) {
    return v && std::abs(*v - want) <= 1e-4 * std::abs(want);
}

struct Gelu {
    std::string x;
    std::string approximate; ///< "none" (erf) or "tanh"
    std::vector<int> nodes;  ///< the pattern's nodes other than the last
};

class GeluMatcher {
public:
    explicit GeluMatcher(const PatternMatcher &m) : m_(m) {}

    /** The last node's factors: 0.5, x and (1 + Erf|Tanh(...)), multiplied in any grouping. */
    std::optional<Gelu> match(const Node &last) {
        nodes_.clear();
        if (last.op_type != "Mul" || !last.domain.empty() || last.inputs.size() != 2)
            return std::nullopt;
        std::vector<std::string> factors;
        for (const std::string &in : last.inputs)
            collect_factors(in, factors);
        if (factors.size() != 3)
            return std::nullopt;
        for (int half = 0; half < 3; half++) {
            if (!near(m_.scalar(factors[half]), 0.5))
                continue;
            for (int one_plus = 0; one_plus < 3; one_plus++) {
                int x = 3 - half - one_plus;
                if (one_plus == half || x == half || x == one_plus)
                    continue;
                size_t tried = nodes_.size();
                std::optional<std::string> approx = inner(factors[one_plus], factors[x]);
                if (approx)
                    return Gelu{factors[x], *approx, nodes_};
                nodes_.resize(tried); // a failed attempt's nodes are not the pattern's
            }
        }
        return std::nullopt;
    }

private:
    /** Leaves of the product tree under `v` (a Mul read only by its parent), in order. */
    void collect_factors(const std::string &v, std::vector<std::string> &out) {
        const Node *mul = m_.producer(v, "Mul");
        if (mul && mul->inputs.size() == 2 && m_.private_value(v, 1) && out.size() < 4) {
            nodes_.push_back(m_.index(mul));
            for (const std::string &in : mul->inputs)
                collect_factors(in, out);
            return;
        }
        out.push_back(v);
    }

    /** `a` if v = a * c (either order) or a / (1 / c), read only by the pattern. */
    std::optional<std::string> scaled(const std::string &v, double c) {
        if (!m_.private_value(v, 1))
            return std::nullopt;
        if (const Node *mul = m_.producer(v, "Mul"); mul && mul->inputs.size() == 2) {
            for (int s = 0; s < 2; s++)
                if (near(m_.scalar(mul->inputs[s]), c)) {
                    nodes_.push_back(m_.index(mul));
                    return mul->inputs[1 - s];
                }
        }
        if (const Node *div = m_.producer(v, "Div"); div && div->inputs.size() == 2) {
            if (near(m_.scalar(div->inputs[1]), 1 / c)) {
                nodes_.push_back(m_.index(div));
                return div->inputs[0];
            }
        }
        return std::nullopt;
    }

    /** The form, if v = 1 + Erf(x / sqrt(2)) or 1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3)). */
    std::optional<std::string> inner(const std::string &v, const std::string &x) {
        const Node *add = m_.producer(v, "Add");
        if (!add || add->inputs.size() != 2 || !m_.private_value(v, 1))
            return std::nullopt;
        int one = near(m_.scalar(add->inputs[0]), 1)   ? 0
                  : near(m_.scalar(add->inputs[1]), 1) ? 1
                                                       : -1;
        if (one < 0)
            return std::nullopt;
        nodes_.push_back(m_.index(add));
        const std::string &g = add->inputs[1 - one];
        if (!m_.private_value(g, 1))
            return std::nullopt;
        if (const Node *erf = m_.producer(g, "Erf")) {
            nodes_.push_back(m_.index(erf));
            std::optional<std::string> arg = scaled(erf->inputs[0], M_SQRT1_2);
            return arg && *arg == x ? std::optional<std::string>("none") : std::nullopt;
        }
        if (const Node *tanh = m_.producer(g, "Tanh")) {
            nodes_.push_back(m_.index(tanh));
            std::optional<std::string> s = scaled(tanh->inputs[0], std::sqrt(2 / M_PI));
            return s && cubic(*s, x) ? std::optional<std::string>("tanh") : std::nullopt;
        }
        return std::nullopt;
    }

    /** Whether v = x + 0.044715 * Pow(x, 3) (either order). */
    bool cubic(const std::string &v, const std::string &x) {
        const Node *add = m_.producer(v, "Add");
        if (!add || add->inputs.size() != 2 || !m_.private_value(v, 1))
            return false;
        std::string term = PatternMatcher::other(*add, x);
        std::optional<std::string> cube = term.empty() ? std::nullopt : scaled(term, 0.044715);
        const Node *pow = cube ? m_.producer(*cube, "Pow") : nullptr;
        if (!pow || pow->inputs.size() != 2 || pow->inputs[0] != x ||
            !near(m_.scalar(pow->inputs[1]), 3) || !m_.private_value(*cube, 1))
            return false;
        nodes_.push_back(m_.index(add));
        nodes_.push_back(m_.index(pow));
        return true;
    }

    const PatternMatcher &m_;
    std::vector<int> nodes_;
};

} // namespace

int fuse_gelu_patterns(Graph &g) {
    PatternMatcher m(g);
    GeluMatcher matcher(m);
    std::set<int> removed;
    std::map<int, Node> replacement; // at the last Mul's position
    for (const Node &n : g.nodes) {
        std::optional<Gelu> p = matcher.match(n);
        const Value *x = p ? &g.value(p->x) : nullptr;
        if (!p || x->is_constant() || x->dtype != DType::Float32 ||
            x->shape != g.value(n.outputs[0]).shape)
            continue;
        Node gelu;
        gelu.name = n.name + "__gelu";
        gelu.op_type = "Gelu";
        gelu.inputs = {p->x};
        gelu.outputs = n.outputs;
        gelu.attrs["approximate"] = p->approximate;
        removed.insert(p->nodes.begin(), p->nodes.end());
        replacement[m.index(&n)] = gelu;
    }
    replace_nodes(g, removed, replacement);
    return static_cast<int>(replacement.size());
}

} // namespace nhc
