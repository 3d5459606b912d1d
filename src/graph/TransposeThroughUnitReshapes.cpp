#include "graph/TransposeThroughUnitReshapes.h"

#include "graph/PatternMatch.h"

#include <optional>

namespace nhc {

namespace {

/** Whether `shorter` is `longer` with some axes of extent 1 removed; if so, per axis of
 *  `longer`, whether it is one of them. Equal shapes are not: such a Reshape changes nothing. */
std::optional<std::vector<bool>> unit_axes_removed(const Shape &longer, const Shape &shorter) {
    if (shorter.size() >= longer.size())
        return std::nullopt;
    std::vector<bool> removed;
    size_t k = 0;
    for (int64_t d : longer) {
        if (k < shorter.size() && shorter[k] == d) {
            removed.push_back(false);
            k++;
        } else if (d == 1) {
            removed.push_back(true);
        } else {
            return std::nullopt;
        }
    }
    if (k != shorter.size())
        return std::nullopt;
    return removed;
}

/** Per axis of a shape, its index among the axes `dropped` leaves (-1 for a dropped one). */
std::vector<int64_t> kept_index(const std::vector<bool> &dropped) {
    std::vector<int64_t> index;
    int64_t next = 0;
    for (bool d : dropped)
        index.push_back(d ? -1 : next++);
    return index;
}

class Rewriter {
public:
    explicit Rewriter(Graph &g) : g_(g), m_(g) {}

    /** One pass over the nodes, rewriting pairs that share no node; the count. */
    int run() {
        int count = 0;
        for (size_t i = 0; i < g_.nodes.size(); i++) {
            Node &second = g_.nodes[i];
            if (!second.domain.empty() || second.inputs.empty() || second.outputs.size() != 1 ||
                !m_.private_value(second.inputs[0], 1))
                continue;
            const Node *first_c = m_.producer(second.inputs[0], "Transpose");
            if (!first_c)
                first_c = m_.producer(second.inputs[0], "Reshape");
            if (!first_c || touched_.count(m_.index(first_c)) || touched_.count(int(i)))
                continue;
            Node &first = g_.nodes[size_t(m_.index(first_c))];
            bool done = false;
            if (first.op_type == "Transpose" && second.op_type == "Reshape")
                done = transpose_then_drop(first, second);
            else if (first.op_type == "Reshape" && second.op_type == "Transpose")
                done = add_then_transpose(first, second);
            else if (first.op_type == "Transpose" && second.op_type == "Transpose")
                done = merge(first, second);
            if (done) {
                touched_.insert({m_.index(&first), int(i)});
                count++;
            }
        }
        replace_nodes(g_, removed_, {});
        return count;
    }

private:
    std::vector<int64_t> perm(const Node &t) const {
        return t.transpose_perm(static_cast<int64_t>(g_.value(t.inputs[0]).shape.size()));
    }

    static void make_transpose(Node &n, const std::string &in, std::vector<int64_t> p) {
        n.op_type = "Transpose";
        n.attrs.clear();
        n.attrs["perm"] = std::move(p);
        n.inputs = {in};
    }

    /** n becomes a Reshape of `in` to the shape of its output. */
    void make_reshape(Node &n, const std::string &in) {
        std::string shape =
            shape_constant(g_, n.outputs[0] + "__unit_shape", g_.value(n.outputs[0]).shape);
        n.op_type = "Reshape";
        n.attrs.clear();
        n.inputs = {in, shape};
    }

    /** The value between two rewritten nodes renamed `name`, of `shape`, its type kept. */
    void replace_value(const std::string &old_name, const std::string &name, const Shape &shape) {
        Value v = g_.value(old_name);
        g_.values.erase(old_name);
        v.name = name;
        v.shape = shape;
        g_.values[name] = std::move(v);
    }

    bool transpose_then_drop(Node &t, Node &r) {
        const Shape &x = g_.value(t.inputs[0]).shape;
        std::optional<std::vector<bool>> dropped =
            unit_axes_removed(g_.value(t.outputs[0]).shape, g_.value(r.outputs[0]).shape);
        if (!dropped)
            return false;
        std::vector<int64_t> p = perm(t);
        std::vector<bool> x_dropped(x.size(), false);
        for (size_t j = 0; j < p.size(); j++)
            x_dropped[size_t(p[j])] = (*dropped)[j];
        std::vector<int64_t> index = kept_index(x_dropped), q;
        Shape squeezed;
        for (size_t a = 0; a < x.size(); a++)
            if (!x_dropped[a])
                squeezed.push_back(x[a]);
        for (size_t j = 0; j < p.size(); j++)
            if (!(*dropped)[j])
                q.push_back(index[size_t(p[j])]);
        // t: Reshape x -> squeezed (its output renamed); r: Transpose of that.
        const std::string x_name = t.inputs[0], mid = t.outputs[0] + "__squeezed";
        replace_value(t.outputs[0], mid, squeezed);
        t.outputs[0] = mid;
        make_reshape(t, x_name);
        make_transpose(r, mid, q);
        return true;
    }

    bool add_then_transpose(Node &r, Node &t) {
        const Shape &y = g_.value(r.inputs[0]).shape;
        std::optional<std::vector<bool>> added = unit_axes_removed(g_.value(r.outputs[0]).shape, y);
        if (!added)
            return false;
        std::vector<int64_t> p = perm(t), index = kept_index(*added), q;
        Shape transposed;
        for (int64_t a : p)
            if (!(*added)[size_t(a)]) {
                q.push_back(index[size_t(a)]);
                transposed.push_back(y[size_t(index[size_t(a)])]);
            }
        // r: Transpose y -> transposed (its output renamed); t: Reshape adding the unit axes.
        const std::string y_name = r.inputs[0], mid = r.outputs[0] + "__transposed";
        replace_value(r.outputs[0], mid, transposed);
        r.outputs[0] = mid;
        make_transpose(r, y_name, q);
        make_reshape(t, mid);
        return true;
    }

    bool merge(Node &first, Node &second) {
        std::vector<int64_t> p1 = perm(first), p2 = perm(second), p;
        for (int64_t a : p2)
            p.push_back(p1[size_t(a)]);
        g_.values.erase(first.outputs[0]);
        make_transpose(second, first.inputs[0], p);
        bool identity = true;
        for (size_t i = 0; i < p.size(); i++)
            identity &= p[i] == int64_t(i);
        if (identity) { // the two undo each other: a view
            second.op_type = "Identity";
            second.attrs.clear();
        }
        removed_.insert(m_.index(&first));
        return true;
    }

    Graph &g_;
    PatternMatcher m_;
    std::set<int> touched_, removed_;
};

} // namespace

int transpose_through_unit_reshapes(Graph &g) {
    int total = 0;
    // A swap moves a Reshape that drops unit axes towards the inputs, or one that adds them
    // towards the outputs, past one Transpose; a merge removes a node. Every rewrite keeps the
    // values, so the bound on the rounds only guards against a cycle.
    for (size_t round = 0; round <= g.nodes.size(); round++) {
        int n = Rewriter(g).run();
        if (n == 0)
            break;
        total += n;
    }
    return total;
}

} // namespace nhc
