// Data-movement operators: Transpose (an explicit permuted copy), the views Reshape, Flatten,
// Squeeze, Unsqueeze and Identity (a copy through the row-major flat index), Split and Concat.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"

namespace nhc::alg {

using Halide::Expr;

OpResult build_transpose(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    std::vector<int64_t> perm = ctx.node.attr_ints("perm");
    if (perm.empty())
        for (int i = x.rank() - 1; i >= 0; i--)
            perm.push_back(i);
    if (static_cast<int>(perm.size()) != x.rank())
        unsupported_form(ctx.node, "perm has " + std::to_string(perm.size()) +
                                       " entries for rank " + std::to_string(x.rank()));
    Shape out_shape;
    for (int64_t p : perm)
        out_shape.push_back(x.shape[normalize_axis(ctx.node, p, x.rank())]);
    std::vector<Halide::Var> v = Builder::vars(x.rank());
    std::vector<Expr> oi = onnx_index(v), in(x.rank());
    for (int j = 0; j < x.rank(); j++)
        in[normalize_axis(ctx.node, perm[j], x.rank())] = oi[j];
    Halide::Func out = b.func("out");
    define(out, v, x.at(in));
    return b.result({Tensor{out, out_shape, x.dtype}});
}

// out[i] = x[unflatten(flatten(i))]: any reshape of a row-major tensor.
OpResult build_reshape(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    if (ctx.outputs.empty() || !ctx.outputs[0])
        unsupported_form(ctx.node, "output value is missing");
    const Shape &out_shape = ctx.outputs[0]->shape;
    if (shape_numel(out_shape) != shape_numel(x.shape))
        unsupported_form(ctx.node,
                         "cannot view " + shape_str(x.shape) + " as " + shape_str(out_shape));
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out_shape.size()));
    std::vector<Expr> oi = onnx_index(v);
    Halide::Func out = b.func("out");
    if (out_shape == x.shape) {
        define(out, v, x.at(oi));
        return b.result({Tensor{out, out_shape, x.dtype}});
    }
    Expr flat = 0;
    for (size_t i = 0; i < out_shape.size(); i++)
        flat = flat * static_cast<int>(out_shape[i]) + oi[i];
    std::vector<Expr> in(x.rank());
    int64_t stride = 1;
    for (int a = x.rank() - 1; a >= 0; a--) {
        in[a] = (flat / static_cast<int>(stride)) % static_cast<int>(x.shape[a]);
        stride *= x.shape[a];
    }
    define(out, v, x.at(in));
    return b.result({Tensor{out, out_shape, x.dtype}});
}

OpResult build_split(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    int axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), x.rank());
    size_t n_out = ctx.node.outputs.size();
    std::vector<int64_t> sizes = ctx.node.attr_ints("split");
    if (ctx.inputs.size() > 1 && ctx.inputs[1].func.defined()) {
        if (!ctx.constants[1])
            unsupported_form(ctx.node, "split sizes must be a constant");
        sizes = ctx.constants[1]->to_i64_vector();
    }
    if (sizes.empty()) {
        if (x.shape[axis] % static_cast<int64_t>(n_out) != 0)
            unsupported_form(ctx.node, "axis size does not divide into the outputs");
        sizes.assign(n_out, x.shape[axis] / static_cast<int64_t>(n_out));
    }
    std::vector<Tensor> outs;
    int64_t offset = 0;
    for (size_t o = 0; o < sizes.size(); o++) {
        Shape s = x.shape;
        s[axis] = sizes[o];
        std::vector<Halide::Var> v = Builder::vars(x.rank());
        std::vector<Expr> idx = onnx_index(v);
        idx[axis] = idx[axis] + static_cast<int>(offset);
        Halide::Func out = b.func("out" + std::to_string(o));
        define(out, v, x.at(idx));
        outs.push_back(Tensor{out, s, x.dtype});
        offset += sizes[o];
    }
    return b.result(outs);
}

OpResult build_concat(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &first = input(ctx, 0);
    int axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), first.rank());
    Shape out_shape = first.shape;
    out_shape[axis] = 0;
    for (size_t i = 0; i < ctx.inputs.size(); i++)
        out_shape[axis] += input(ctx, i).shape[axis];
    std::vector<Halide::Var> v = Builder::vars(first.rank());
    std::vector<Expr> oi = onnx_index(v);
    // Walk the inputs from the last: e = select(i < end of this input, this input, later ones).
    Expr e;
    int64_t end = out_shape[axis];
    for (int i = static_cast<int>(ctx.inputs.size()) - 1; i >= 0; i--) {
        const Tensor &t = input(ctx, i);
        int64_t start = end - t.shape[axis];
        if (t.shape[axis] == 0)
            continue;
        std::vector<Expr> idx = oi;
        // Clamped so that bounds inference never asks an input for rows it does not have.
        idx[axis] = Halide::clamp(oi[axis] - static_cast<int>(start), 0,
                                  static_cast<int>(t.shape[axis]) - 1);
        Expr here = t.at(idx);
        e = e.defined() ? Halide::select(oi[axis] < static_cast<int>(end), here, e) : here;
        end = start;
    }
    Halide::Func out = b.func("out");
    define(out, v, e);
    return b.result({Tensor{out, out_shape, first.dtype}});
}

} // namespace nhc::alg
