// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum and ReduceLogSumExp over the `axes` (an attribute, or ReduceSum's second input from
// opset 13), with keepdims and noop_with_empty_axes. The reduction is an RDom update of an
// accumulator stage `acc` in fp32 (sum, product, max or min of the element, its absolute value,
// square or exponential); the output stage applies the mean's scale, the root or the log.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "algorithms/Reduction.h"

namespace nhc::alg {

// ArgMax / ArgMin over one axis: the extreme value m, then the smallest (or, with
// select_last_index, the largest) index whose element equals m, both as reductions in fp32
// (indices are exact below 2^24). The result has the graph's index type (int32 after int64
// narrowing).
OpResult build_arg_reduce(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    const std::string &op = ctx.node.op_type;
    int rank = x.rank();
    int axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), rank);
    bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
    bool last = ctx.node.attr_int("select_last_index", 0) != 0;
    ReductionAxes r = make_reduction(x.shape, {axis}, "r");
    std::vector<Halide::Var> kv = Builder::vars(static_cast<int>(r.kept.size()));
    std::vector<Halide::Expr> kidx = onnx_index(kv), ridx = full_index(r, rank, kidx);
    Halide::Expr xe = to_compute(x.at(ridx), x.dtype);
    Halide::Func ext = b.func("extreme"), pos = b.func("index");
    define(ext, kv, op == "ArgMax" ? Halide::Float(32).min() : Halide::Float(32).max());
    Halide::Expr e = call_onnx(ext, kidx);
    define(ext, kv, op == "ArgMax" ? Halide::max(e, xe) : Halide::min(e, xe));
    Halide::Expr at = Halide::cast(Halide::Float(32), ridx[static_cast<size_t>(axis)]);
    define(pos, kv, last ? -1.0f : static_cast<float>(x.shape[axis]));
    Halide::Expr p = call_onnx(pos, kidx), hit = xe == call_onnx(ext, kidx);
    define(pos, kv,
           last ? Halide::max(p, Halide::select(hit, at, -1.0f))
                : Halide::min(p, Halide::select(hit, at, static_cast<float>(x.shape[axis]))));
    Shape out_shape;
    std::vector<Halide::Var> v;
    for (int a = 0; a < rank; a++)
        if (a != axis || keepdims)
            out_shape.push_back(a == axis ? 1 : x.shape[a]);
    v = Builder::vars(static_cast<int>(out_shape.size()));
    std::vector<Halide::Expr> oi = onnx_index(v), pos_idx;
    for (int a = 0, o = 0; a < rank; a++) {
        if (a != axis)
            pos_idx.push_back(oi[o]);
        if (a != axis || keepdims)
            o++;
    }
    DType out_type = ctx.outputs.empty() || !ctx.outputs[0] ? DType::Int64 : ctx.outputs[0]->dtype;
    Halide::Func out = b.func("out");
    define(out, v, from_compute(call_onnx(pos, pos_idx), out_type));
    return b.result({Tensor{out, out_shape, out_type}});
}

OpResult build_reduce(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    const std::string &op = ctx.node.op_type == "GlobalAveragePool" ? std::string("ReduceMean")
                            : ctx.node.op_type == "GlobalMaxPool"   ? std::string("ReduceMax")
                                                                    : ctx.node.op_type;
    int rank = x.rank();
    std::vector<int64_t> axes_list = ctx.node.attr_ints("axes");
    if (ctx.node.op_type.rfind("Global", 0) == 0) // over the spatial axes, keeping them as 1
        for (int a = 2; a < rank; a++)
            axes_list.push_back(a);
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
    b.accumulates_in(acc, x.dtype);
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
