// Softmax: max, exp(x - max), sum, reciprocal, scale, as ../shared/reference/isel-prototype.md §4;
// LogSoftmax: x - max - log(sum) with the same stages. A Softmax whose input scale was folded in
// (graph/FoldSoftmaxScale.h, attribute s > 0) computes exp(x*s + max*(-s)): one activation with
// its scale and bias, the max taken over x (s*max(x) = max(s*x) for s > 0).
// Opset >= 13 normalises along one axis (default -1); older opsets over all axes from `axis`
// (default 1) on, as if the input were flattened to 2-D there.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "algorithms/Reduction.h"
#include "graph/FoldSoftmaxScale.h"
#include "graph/SkipMaskedKeys.h"

namespace nhc::alg {

OpResult build_softmax(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    int rank = x.rank();
    if (rank == 0)
        unsupported_form(ctx.node, "a scalar input has no axis to normalise");
    int axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", ctx.opset >= 13 ? -1 : 1), rank);
    std::set<int> axes;
    for (int a = axis; a < (ctx.opset >= 13 ? axis + 1 : rank); a++)
        axes.insert(a);
    ReductionAxes r = make_reduction(x.shape, axes, "r");

    std::vector<Halide::Var> v = Builder::vars(rank);
    std::vector<Halide::Expr> idx = onnx_index(v);
    std::vector<Halide::Var> kv = Builder::vars(static_cast<int>(r.kept.size()));
    std::vector<Halide::Expr> kidx = onnx_index(kv), ridx = full_index(r, rank, kidx);

    Halide::Func mx = b.func("max"), ex = b.func("exp"), sm = b.func("sum"), rs = b.func("rcp"),
                 out = b.func("out");
    // A causally masked row (graph/SkipMaskedKeys.h): the maximum and the sum over the keys up
    // to the diagonal, the masked ones past it vanishing.
    if (ctx.node.has_attr(kKeysUpToDiagonal) && rank >= 2 &&
        r.reduced == std::vector<int>{rank - 1}) {
        r.rdom.where(r.rdom[0] <=
                     kidx.back() + static_cast<int>(ctx.node.attr_int(kKeysUpToDiagonal, 0)));
        b.widens_to_tile(mx);
        b.widens_to_tile(sm);
    }
    define(mx, kv, Halide::Float(32).min());
    define(mx, kv, Halide::max(call_onnx(mx, kidx), to_compute(x.at(ridx), x.dtype)));
    if (ctx.node.has_attr(kSoftmaxInputScale)) {
        float scale = static_cast<float>(ctx.node.attr_float(kSoftmaxInputScale, 1.0));
        Halide::Func bias = b.func("neg_scaled_max");
        define(bias, kv, call_onnx(mx, kidx) * -scale);
        define(ex, v,
               Halide::exp(to_compute(x.at(idx), x.dtype) * scale +
                           call_onnx(bias, kept_part(r, idx))));
    } else {
        define(ex, v,
               Halide::exp(to_compute(x.at(idx), x.dtype) - call_onnx(mx, kept_part(r, idx))));
    }
    define(sm, kv, 0.0f);
    define(sm, kv, call_onnx(sm, kidx) + call_onnx(ex, ridx));
    for (const Halide::Func &f : {ex, sm, rs})
        b.accumulates_in(f, x.dtype);
    if (ctx.node.op_type == "LogSoftmax") { // x - max - log(sum)
        define(rs, kv, Halide::log(call_onnx(sm, kidx)));
        Halide::Expr shifted = to_compute(x.at(idx), x.dtype) - call_onnx(mx, kept_part(r, idx));
        define(out, v, from_compute(shifted - call_onnx(rs, kept_part(r, idx)), x.dtype));
    } else {
        define(rs, kv, 1.0f / call_onnx(sm, kidx));
        define(out, v,
               from_compute(call_onnx(ex, idx) * call_onnx(rs, kept_part(r, idx)), x.dtype));
    }
    return b.result({Tensor{out, x.shape, x.dtype}});
}

} // namespace nhc::alg
