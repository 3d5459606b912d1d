#include "graph/UnitAxisTransposes.h"

namespace nhc {

namespace {

/** Whether `perm` keeps the axes of extent above 1 of `in` in their order. */
bool moves_only_unit_axes(const std::vector<int64_t> &perm, const Shape &in) {
    int64_t last = -1;
    for (int64_t axis : perm) {
        if (axis < 0 || axis >= static_cast<int64_t>(in.size()))
            return false;
        if (in[static_cast<size_t>(axis)] == 1)
            continue;
        if (axis < last)
            return false;
        last = axis;
    }
    return true;
}

} // namespace

int reshape_unit_axis_transposes(Graph &g) {
    int count = 0;
    for (Node &n : g.nodes) {
        if (n.op_type != "Transpose" || !n.domain.empty() || n.inputs.size() != 1 ||
            n.outputs.size() != 1)
            continue;
        const Value &in = g.value(n.inputs[0]);
        const Value &out = g.value(n.outputs[0]);
        if (!moves_only_unit_axes(n.transpose_perm(static_cast<int64_t>(in.shape.size())),
                                  in.shape))
            continue;
        std::string shape = shape_constant(g, n.name + "__shape", out.shape);
        n.op_type = "Reshape";
        n.attrs.clear();
        n.inputs.push_back(shape);
        count++;
    }
    return count;
}

} // namespace nhc
