#include "driver/ConcatInPlace.h"

#include "driver/FormGroups.h"
#include "graph/ValueIndex.h"

#include <vector>

namespace nhc {

namespace {

bool copies_its_inputs(const Node &n) {
    return n.domain.empty() && (n.op_type == "Concat" || n.op_type == "Im2Col");
}

/** Whether every node reading `v`, directly or through views, other than `concat` reads its
 *  bytes where they are: no copy of it (another Concat, an Im2Col, a view that is a graph
 *  output) would find them. */
bool read_in_place(const ValueIndex &u, const std::string &v, const Node &concat) {
    for (const Node *n : u.consumers_of(v)) {
        if (n == &concat)
            continue;
        if (copies_its_inputs(*n))
            return false;
        if (codegen_groups::is_view(*n) &&
            (u.graph_outputs.count(n->outputs[0]) || !read_in_place(u, n->outputs[0], concat)))
            return false;
    }
    return true;
}

/** The value whose bytes `in` holds: through views to the value a group computes; "" when it
 *  is not computed by a group that can write it in place. */
std::string placeable_root(const Graph &g, std::string in, const Node &concat, const ValueIndex &u,
                           const std::set<std::string> &taken) {
    const DType type = g.value(concat.outputs[0]).dtype;
    for (auto p = u.producer.find(in); p != u.producer.end(); p = u.producer.find(in)) {
        const Node &n = *p->second;
        if (!codegen_groups::is_view(n)) {
            bool group = !copies_its_inputs(n) && !(n.op_type == "Transpose" && n.domain.empty());
            const Value &v = g.value(in);
            return group && !taken.count(in) && !v.is_constant() && v.dtype == type &&
                           !u.graph_outputs.count(in) && read_in_place(u, in, concat)
                       ? in
                       : "";
        }
        in = n.inputs.at(0);
    }
    return ""; // a graph input
}

} // namespace

std::map<std::string, InPlace> place_concat_inputs(const Graph &g, const ValueIndex &u,
                                                   const std::set<std::string> &taken) {
    std::map<std::string, InPlace> placed;
    for (const Node &n : g.nodes) {
        if (n.op_type != "Concat" || !n.domain.empty() || n.outputs.size() != 1)
            continue;
        const Value &out = g.value(n.outputs[0]);
        int64_t rank = static_cast<int64_t>(out.shape.size()), axis = n.attr_int("axis", 0);
        axis = axis < 0 ? axis + rank : axis;
        if (axis < 0 || axis >= rank)
            continue;
        // Elements before the axis (must be one) and bytes per step along it.
        int64_t outer = 1, step = dtype_size(out.dtype);
        for (int64_t a = 0; a < rank; a++) {
            if (a < axis)
                outer *= out.shape[static_cast<size_t>(a)];
            else if (a > axis)
                step *= out.shape[static_cast<size_t>(a)];
        }
        if (outer != 1)
            continue;
        // A value the Concat takes twice (Concat(a, a)) has two blocks: it is copied.
        std::vector<std::string> roots;
        std::map<std::string, int> times;
        for (const std::string &in : n.inputs) {
            roots.push_back(in.empty() ? "" : placeable_root(g, in, n, u, taken));
            times[roots.back()]++;
        }
        int64_t at = 0;
        for (size_t i = 0; i < n.inputs.size(); i++) {
            if (n.inputs[i].empty())
                continue;
            const std::string &root = roots[i];
            if (!root.empty() && times[root] == 1 && !placed.count(root))
                placed[root] = {n.outputs[0], at * step};
            at += g.value(n.inputs[i]).shape[static_cast<size_t>(axis)];
        }
    }
    return placed;
}

} // namespace nhc
