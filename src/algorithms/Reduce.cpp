// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum and ReduceLogSumExp over the `axes` (an attribute, or ReduceSum's second input from
// opset 13), with keepdims and noop_with_empty_axes. The reduction is an RDom update of an
// accumulator stage `acc` in fp32 (sum, product, max or min of the element, its absolute value,
// square or exponential); the output stage applies the mean's scale, the root or the log.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "algorithms/Reduction.h"

namespace nhc::alg {

OpResult build_reduce(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    const std::string &op = ctx.node.op_type;
    int rank = x.rank();
    std::vector<int64_t> axes_list = ctx.node.attr_ints("axes");
    if (op == "ReduceSum" && ctx.opset >= 13 && ctx.inputs.size() > 1 &&
        ctx.inputs[1].func.defined()) {
        if (!ctx.constants[1])
            unsupported_form(ctx.node, "axes must be a constant");
        axes_list = ctx.constants[1]->to_i64_vector();
    }
    bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
    std::set<int> axes;
    for (int64_t a : axes_list)
        axes.insert(normalize_axis(ctx.node, a, rank));
    if (axes_list.empty() && ctx.node.attr_int("noop_with_empty_axes", 0) == 0)
        for (int a = 0; a < rank; a++)
            axes.insert(a);
    ReductionAxes r = make_reduction(x.shape, axes, "r");

    std::vector<Halide::Var> kv = Builder::vars(static_cast<int>(r.kept.size()));
    std::vector<Halide::Expr> kidx = onnx_index(kv);
    Halide::Expr xe = to_compute(x.at(full_index(r, rank, kidx)), x.dtype);
    Halide::Type t = compute_type(x.dtype);
    Halide::Func acc = b.func("acc");
    Halide::Expr init = op == "ReduceMax"    ? t.min()
                        : op == "ReduceMin"  ? t.max()
                        : op == "ReduceProd" ? Halide::Internal::make_one(t)
                                             : Halide::Internal::make_zero(t);
    define(acc, kv, init);
    Halide::Expr a = call_onnx(acc, kidx); // the accumulator, once it is defined
    if (op == "ReduceMax")
        define(acc, kv, Halide::max(a, xe));
    else if (op == "ReduceMin")
        define(acc, kv, Halide::min(a, xe));
    else if (op == "ReduceProd")
        define(acc, kv, a * xe);
    else if (op == "ReduceL1")
        define(acc, kv, a + Halide::abs(xe));
    else if (op == "ReduceL2" || op == "ReduceSumSquare")
        define(acc, kv, a + xe * xe);
    else if (op == "ReduceLogSumExp")
        define(acc, kv, a + Halide::exp(xe));
    else
        define(acc, kv, a + xe);
    // Output: the kept axes, plus size-1 axes in place of the reduced ones with keepdims.
    Shape out_shape;
    for (int a = 0; a < rank; a++)
        if (!axes.count(a) || keepdims)
            out_shape.push_back(axes.count(a) ? 1 : x.shape[a]);
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out_shape.size()));
    std::vector<Halide::Expr> oi = onnx_index(v), acc_idx;
    for (int a = 0, o = 0; a < rank; a++) {
        if (!axes.count(a))
            acc_idx.push_back(oi[o]);
        if (!axes.count(a) || keepdims)
            o++;
    }
    Halide::Expr e = call_onnx(acc, acc_idx);
    if (op == "ReduceMean")
        e = e * (1.0f / static_cast<float>(r.count));
    if (op == "ReduceL2")
        e = Halide::sqrt(e);
    if (op == "ReduceLogSum" || op == "ReduceLogSumExp")
        e = Halide::log(e);
    Halide::Func out = b.func("out");
    define(out, v, from_compute(e, x.dtype));
    return b.result({Tensor{out, out_shape, x.dtype}});
}

} // namespace nhc::alg
