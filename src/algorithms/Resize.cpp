// Resize: per axis whose size changes, out(.., i, ..) = sum_j W[i, j] * in(.., j, ..) with
// graph/ResizeMatmul's interpolation matrix W (constant; nearest, linear and cubic modes are all
// separable). This is the reference definition (the host JIT); the code generator runs the
// graph pass's rewrite of it into the same contractions as PE matmuls.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "graph/ResizeMatmul.h"

namespace nhc::alg {

OpResult build_resize(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    if (ctx.outputs.empty() || ctx.outputs[0] == nullptr)
        unsupported_form(ctx.node, "an output of unknown shape");
    // Sizes restate the output shape (runtime sizes included); scales are values.
    if (ctx.node.inputs.size() > 2 && !ctx.node.inputs[2].empty() &&
        (ctx.constants.size() <= 2 || !ctx.constants[2]))
        unsupported_form(ctx.node, "a runtime 'scales' input (a static compile needs its values)");
    const Shape &out_shape = ctx.outputs[0]->shape;
    std::vector<ResizeAxis> axes = resize_axes(
        ctx.node, x.shape, out_shape, ctx.constants.size() > 2 ? ctx.constants[2] : nullptr);
    int rank = x.rank();
    std::vector<Halide::Var> v = Builder::vars(rank);
    std::vector<Halide::Expr> o = onnx_index(v);
    Tensor cur = x;
    for (int a = rank - 1; a >= 0; a--) {
        const ResizeAxis &ax = axes[static_cast<size_t>(a)];
        if (ax.is_identity())
            continue;
        Halide::Buffer<float> w(static_cast<int>(ax.in), static_cast<int>(ax.out));
        for (int64_t i = 0; i < ax.out; i++)
            for (int64_t j = 0; j < ax.in; j++)
                w(static_cast<int>(j), static_cast<int>(i)) =
                    static_cast<float>(ax.weights[static_cast<size_t>(i * ax.in + j)]);
        Halide::RDom r(0, static_cast<int>(ax.in), "r");
        std::vector<Halide::Expr> from = o;
        from[static_cast<size_t>(a)] = r;
        Halide::Func f = b.func("axis" + std::to_string(a));
        define(f, v, 0.0f);
        define(f, v,
               call_onnx(f, o) +
                   w(r, o[static_cast<size_t>(a)]) * to_compute(cur.at(from), cur.dtype));
        cur.func = f;
        cur.shape[static_cast<size_t>(a)] = ax.out;
        cur.dtype = DType::Float32;
    }
    Halide::Func out = b.func("out");
    define(out, v, from_compute(to_compute(cur.at(o), cur.dtype), x.dtype));
    return b.result({Tensor{out, out_shape, x.dtype}});
}

} // namespace nhc::alg
