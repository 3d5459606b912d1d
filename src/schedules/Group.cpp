#include "schedules/Group.h"

#include "support/Error.h"

#include <map>
#include <set>

namespace nhc::sched {

Halide::Func Group::stage(const std::string &role, int node_index) const {
    for (size_t i = 0; i < op.stages.size(); i++)
        if (op.stages[i].role == role && (node_index < 0 || stage_node.at(i) == node_index))
            return op.stages[i].func;
    return Halide::Func();
}

namespace {

/** Constant bounds and the strides of the dense tensor Transpose(value, perm) (identity perm:
 *  the value's own dense layout), so the group writes the value already transposed. */
void set_output_layout(Halide::Func f, const Shape &shape, std::vector<int64_t> perm) {
    int rank = static_cast<int>(shape.size());
    if (perm.empty())
        for (int a = 0; a < rank; a++)
            perm.push_back(a);
    std::vector<int64_t> stride(rank); // per ONNX axis of the value
    int64_t dense = 1;
    for (int j = rank - 1; j >= 0; j--) { // axis j of the stored tensor is value axis perm[j]
        stride[static_cast<size_t>(perm[j])] = dense;
        dense *= shape[static_cast<size_t>(perm[j])];
    }
    for (int d = 0; d < rank; d++) {
        int a = rank - 1 - d; // Halide dim d is ONNX axis rank - 1 - d
        f.output_buffer()
            .dim(d)
            .set_bounds(0, static_cast<int>(shape[a]))
            .set_stride(static_cast<int>(stride[a]));
    }
}

} // namespace

Group build_node_group(const Graph &g, const Node &node) {
    return build_group(g, index_values(g), {&node});
}

Group build_group(const Graph &g, const ValueIndex &values, const std::vector<const Node *> &nodes,
                  const std::map<std::string, std::vector<int64_t>> &output_perm) {
    nhc_assert(!nodes.empty(), "an empty group");
    Group grp;
    grp.node = nodes.front();
    grp.nodes = nodes;
    std::set<std::string> produced, read_outside;
    for (const Node *n : nodes)
        produced.insert(n->outputs.begin(), n->outputs.end());
    std::map<std::string, alg::Tensor> tensors; // values available inside the group
    for (size_t node_index = 0; node_index < nodes.size(); node_index++) {
        const Node *node = nodes[node_index];
        alg::OpContext ctx{*node, {}, {}, {}, g.opset};
        for (const std::string &in : node->inputs) {
            if (in.empty()) {
                ctx.inputs.emplace_back();
                ctx.constants.push_back(nullptr);
                continue;
            }
            const Value &v = g.value(in);
            if (!tensors.count(in)) { // an HBM input of the group: staged by an identity Func
                alg::InputParam p = alg::make_input(v);
                std::vector<Halide::Var> vars =
                    alg::Builder::vars(static_cast<int>(v.shape.size()));
                Halide::Func staged(
                    alg::Namer(node->name)("stage_" + std::to_string(grp.inputs.size())));
                std::vector<Halide::Expr> args(vars.begin(), vars.end());
                alg::define(staged, vars, args.empty() ? p.tensor.func() : p.tensor.func(args));
                grp.inputs.push_back({in, p.param, staged, v.shape});
                tensors[in] = alg::Tensor{staged, v.shape, v.dtype};
            }
            ctx.inputs.push_back(tensors.at(in));
            ctx.constants.push_back(v.constant.get());
        }
        for (const std::string &out : node->outputs)
            ctx.outputs.push_back(out.empty() ? nullptr : &g.value(out));
        alg::OpResult r = alg::build_algorithm(ctx);
        for (size_t o = 0; o < r.outputs.size(); o++)
            if (!node->outputs[o].empty()) {
                const Value &v = g.value(node->outputs[o]);
                nhc_assert(r.outputs[o].shape == v.shape,
                           node->describe()
                               << " output " << o << " has shape " << shape_str(r.outputs[o].shape)
                               << ", inferred " << shape_str(v.shape));
                tensors[v.name] = r.outputs[o];
            }
        grp.op.stages.insert(grp.op.stages.end(), r.stages.begin(), r.stages.end());
        grp.stage_node.resize(grp.op.stages.size(), static_cast<int>(node_index));
        grp.op.outputs.insert(grp.op.outputs.end(), r.outputs.begin(), r.outputs.end());
    }
    for (const auto &[name, t] : tensors)
        if (produced.count(name))
            grp.values[name] = t;
    // Group outputs: the values the group produces that something outside it reads.
    std::set<std::string> wanted;
    std::set<const Node *> inside(nodes.begin(), nodes.end());
    for (const std::string &v : produced) {
        if (values.graph_outputs.count(v))
            wanted.insert(v);
        for (const Node *n : values.consumers_of(v))
            if (!inside.count(n))
                wanted.insert(v);
    }
    for (const Node *node : nodes)
        for (size_t o = 0; o < node->outputs.size(); o++) {
            const std::string &name = node->outputs[o];
            if (name.empty() || !wanted.count(name) || !tensors.count(name))
                continue;
            alg::Tensor t = tensors.at(name);
            std::vector<Halide::Var> vars = alg::Builder::vars(t.rank());
            Halide::Func f(alg::Namer(node->name)("final" + std::to_string(o)));
            std::vector<Halide::Expr> args(vars.begin(), vars.end());
            Halide::Func src = t.func;
            // The graph may store the value narrower than the algorithm computes it (auto-cast's
            // store_matmul_operands_narrow): the final copy rounds on the way out.
            DType stored = g.value(name).dtype;
            Halide::Expr e = args.empty() ? src() : src(args);
            alg::define(f, vars, stored == t.dtype ? e : alg::from_compute(e, stored));
            t.dtype = stored;
            auto perm = output_perm.find(name);
            set_output_layout(f, t.shape,
                              perm == output_perm.end() ? std::vector<int64_t>{} : perm->second);
            grp.outputs.push_back({name, f, t});
        }
    return grp;
}

std::vector<std::string> hbm_values(const Group &g) {
    std::vector<std::string> values;
    for (const GroupInput &in : g.inputs)
        values.push_back(in.value);
    for (const GroupOutput &out : g.outputs)
        values.push_back(out.value);
    return values;
}

} // namespace nhc::sched
