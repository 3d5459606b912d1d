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
    // tp is the permuted value, out its copy: one copy when tp is inlined; a schedule may put
    // tp in PSUM (a PE transpose of an SBUF tile) and out in SBUF. tp holds the compute type (a
    // 16-bit float widened to fp32, exactly), as the PE's transposes write fp32 on
    // NeuronCore-v2 (neuroncore.md L123, L297).
    Halide::Func tp = b.func("tp"), out = b.func("out");
    define(tp, v, to_compute(x.at(in), x.dtype));
    define(out, v, from_compute(tp(v), x.dtype));
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
        sizes.clear(); // sizes given at run time are the inferred output shapes' (static compile)
        for (size_t o = 0; o < n_out; o++)
            sizes.push_back(ctx.outputs.at(o)->shape[static_cast<size_t>(axis)]);
        if (ctx.constants[1])
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

// Slice with constant starts, ends, axes and steps (inputs from opset 10): an affine view,
// out[i] = x[start + i * step] along each sliced axis.
OpResult build_slice(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    int rank = x.rank();
    auto list = [&](size_t i, const char *what) -> std::optional<std::vector<int64_t>> {
        if (i >= ctx.inputs.size() || !ctx.inputs[i].func.defined())
            return std::nullopt;
        if (!ctx.constants[i])
            unsupported_form(ctx.node, std::string(what) + " must be a constant");
        return ctx.constants[i]->to_i64_vector();
    };
    std::vector<int64_t> starts = list(1, "starts").value_or(std::vector<int64_t>{}),
                         ends = list(2, "ends").value_or(std::vector<int64_t>{});
    std::vector<int64_t> axes = list(3, "axes").value_or(std::vector<int64_t>{});
    std::vector<int64_t> steps = list(4, "steps").value_or(std::vector<int64_t>(starts.size(), 1));
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); i++)
            axes.push_back(static_cast<int64_t>(i));
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
        unsupported_form(ctx.node, "starts, ends, axes and steps differ in length");
    Shape shape = x.shape;
    std::vector<int64_t> first(rank, 0), step(rank, 1);
    for (size_t i = 0; i < starts.size(); i++) {
        int a = normalize_axis(ctx.node, axes[i], rank);
        int64_t dim = x.shape[a], s = steps[i];
        if (s == 0)
            unsupported_form(ctx.node, "a step of 0");
        // ONNX clamping: starts/ends wrap once if negative, then clamp to [0, dim] (step > 0) or
        // [-1, dim - 1] (step < 0).
        auto clamp = [&](int64_t v) {
            if (v < 0)
                v += dim;
            return s > 0 ? std::clamp<int64_t>(v, 0, dim) : std::clamp<int64_t>(v, -1, dim - 1);
        };
        int64_t lo = clamp(starts[i]), hi = clamp(ends[i]);
        int64_t n = s > 0 ? (hi - lo + s - 1) / s : (lo - hi - s - 1) / -s;
        shape[a] = std::max<int64_t>(n, 0);
        first[a] = lo;
        step[a] = s;
    }
    std::vector<Halide::Var> v = Builder::vars(rank);
    std::vector<Expr> idx = onnx_index(v);
    for (int a = 0; a < rank; a++)
        idx[a] = static_cast<int>(first[a]) + idx[a] * static_cast<int>(step[a]);
    Halide::Func out = b.func("out");
    define(out, v, x.at(idx));
    return b.result({Tensor{out, shape, x.dtype}});
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
