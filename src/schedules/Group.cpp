#include "schedules/Group.h"

#include "support/Error.h"

namespace nhc::sched {

Halide::Func Group::stage(const std::string &role) const {
    for (const alg::Stage &s : op.stages)
        if (s.role == role)
            return s.func;
    return Halide::Func();
}

namespace {

void set_dense_output_bounds(Halide::Func f, const Shape &shape) {
    int rank = static_cast<int>(shape.size());
    int64_t stride = 1;
    for (int d = 0; d < rank; d++) {
        int extent = static_cast<int>(shape[rank - 1 - d]);
        f.output_buffer().dim(d).set_bounds(0, extent).set_stride(static_cast<int>(stride));
        stride *= extent;
    }
}

} // namespace

Group build_node_group(const Graph &g, const Node &node) {
    Group grp;
    grp.node = &node;
    alg::OpContext ctx{node, {}, {}, {}, g.opset};
    for (const std::string &in : node.inputs) {
        if (in.empty()) {
            ctx.inputs.emplace_back();
            ctx.constants.push_back(nullptr);
            continue;
        }
        const Value &v = g.value(in);
        alg::InputParam p = alg::make_input(v);
        std::vector<Halide::Var> vars = alg::Builder::vars(static_cast<int>(v.shape.size()));
        Halide::Func staged(alg::Namer(node.name)("stage_" + std::to_string(grp.inputs.size())));
        std::vector<Halide::Expr> args(vars.begin(), vars.end());
        alg::define(staged, vars, args.empty() ? p.tensor.func() : p.tensor.func(args));
        grp.inputs.push_back({in, p.param, staged});
        ctx.inputs.push_back(alg::Tensor{staged, v.shape, v.dtype});
        ctx.constants.push_back(v.constant.get());
    }
    for (const std::string &out : node.outputs)
        ctx.outputs.push_back(out.empty() ? nullptr : &g.value(out));
    grp.op = alg::build_algorithm(ctx);
    for (size_t o = 0; o < grp.op.outputs.size(); o++) {
        if (node.outputs[o].empty())
            continue;
        const alg::Tensor &t = grp.op.outputs[o];
        const Value &v = g.value(node.outputs[o]);
        nhc_assert(t.shape == v.shape, node.describe()
                                           << " output " << o << " has shape " << shape_str(t.shape)
                                           << ", inferred " << shape_str(v.shape));
        std::vector<Halide::Var> vars = alg::Builder::vars(t.rank());
        Halide::Func f(alg::Namer(node.name)("final" + std::to_string(o)));
        std::vector<Halide::Expr> args(vars.begin(), vars.end());
        Halide::Func src = t.func;
        alg::define(f, vars, args.empty() ? src() : src(args));
        set_dense_output_bounds(f, t.shape);
        grp.outputs.push_back({v.name, f, t});
    }
    return grp;
}

} // namespace nhc::sched
