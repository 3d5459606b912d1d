// Gather along an axis with a tensor of indices (an embedding lookup when axis is 0). Negative
// indices count from the end, as ONNX says; indices are clamped into range so that an
// out-of-range index cannot read outside the table (the runtime reports it separately).

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"

namespace nhc::alg {

using Halide::Expr;

OpResult build_gather(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &data = input(ctx, 0), &ind = input(ctx, 1);
    if (dtype_is_float(ind.dtype))
        unsupported_form(ctx.node, "indices must be integers");
    int axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), data.rank());
    if (data.rank() == 2 && axis == 0 && dtype_is_float(data.dtype))
        return build_gather_rows(ctx); // rows of a table: a one-hot contraction
    const HostTensor *c = ctx.constants.size() > 1 ? ctx.constants[1] : nullptr;
    if (c && c->numel() == 1) {
        // One constant index (BERT's pooler takes token 0): a plain, affine read.
        int64_t k = c->get_i64(0);
        int64_t dim = data.shape[axis];
        if (k < -dim || k >= dim)
            unsupported_form(ctx.node, "constant index " + std::to_string(k) +
                                           " is out of range for dimension " + std::to_string(dim));
        k = k < 0 ? k + dim : k;
        Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
        out_shape.insert(out_shape.end(), ind.shape.begin(), ind.shape.end());
        out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
        std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out_shape.size()));
        std::vector<Expr> oi = onnx_index(v);
        std::vector<Expr> di(oi.begin(), oi.begin() + axis);
        di.push_back(static_cast<int>(k));
        di.insert(di.end(), oi.begin() + axis + ind.rank(), oi.end());
        Halide::Func out = b.func("out");
        define(out, v, data.at(di));
        return b.result({Tensor{out, out_shape, data.dtype}});
    }
    int q = ind.rank();
    Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
    out_shape.insert(out_shape.end(), ind.shape.begin(), ind.shape.end());
    out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out_shape.size()));
    std::vector<Expr> oi = onnx_index(v);
    std::vector<Expr> ii(oi.begin() + axis, oi.begin() + axis + q);
    int dim = static_cast<int>(data.shape[axis]);
    Expr k = Halide::cast(Halide::Int(32), ind.at(ii));
    k = Halide::clamp(Halide::select(k < 0, k + dim, k), 0, dim - 1);
    std::vector<Expr> di(oi.begin(), oi.begin() + axis);
    di.push_back(k);
    di.insert(di.end(), oi.begin() + axis + q, oi.end());
    Halide::Func out = b.func("out");
    define(out, v, data.at(di));
    return b.result({Tensor{out, out_shape, data.dtype}});
}

} // namespace nhc::alg
