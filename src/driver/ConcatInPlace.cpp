#include "driver/ConcatInPlace.h"

#include "driver/FormGroups.h"

#include <vector>

namespace nhc {

namespace {

bool copies_its_inputs(const Node &n) {
    return n.domain.empty() && (n.op_type == "Concat" || n.op_type == "Im2Col");
}

/** Whether `in`, read by `concat`, can be computed into the Concat's output bytes. */
bool placeable(const Graph &g, const std::string &in, const Node &concat,
               const std::map<std::string, const Node *> &producer,
               const std::map<std::string, std::vector<const Node *>> &readers,
               const std::set<std::string> &taken) {
    if (in.empty() || taken.count(in))
        return false;
    const Value &v = g.value(in);
    auto p = producer.find(in);
    if (v.is_constant() || v.dtype != g.value(concat.outputs[0]).dtype || p == producer.end() ||
        codegen_groups::is_view(*p->second) || copies_its_inputs(*p->second) ||
        (p->second->op_type == "Transpose" && p->second->domain.empty()))
        return false;
    for (const Node *r : readers.at(in))
        if (r != &concat && (codegen_groups::is_view(*r) || copies_its_inputs(*r)))
            return false;
    return true;
}

} // namespace

std::map<std::string, InPlace> place_concat_inputs(const Graph &g,
                                                   const std::set<std::string> &taken) {
    std::map<std::string, const Node *> producer;
    std::map<std::string, std::vector<const Node *>> readers;
    for (const Node &n : g.nodes) {
        for (const std::string &o : n.outputs)
            producer[o] = &n;
        for (const std::string &in : n.inputs)
            if (!in.empty())
                readers[in].push_back(&n);
    }
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
        int64_t at = 0;
        for (const std::string &in : n.inputs) {
            if (placeable(g, in, n, producer, readers, taken) && !placed.count(in))
                placed[in] = {n.outputs[0], at * step};
            at += in.empty() ? 0 : g.value(in).shape[static_cast<size_t>(axis)];
        }
    }
    return placed;
}

} // namespace nhc
