// LayerNormalization (opset 17): mean and variance over the axes from `axis` (default -1) on,
// y = (x - mean) * rstd * gamma + beta, following ../shared/reference/isel-prototype.md §3: the
// variance is the centred second pass, gamma and beta are broadcast by explicit stages. The
// optional Mean and InvStdDev outputs have the input's shape with the normalised axes set to 1.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "algorithms/Reduction.h"

namespace nhc::alg {

OpResult build_layer_norm(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0), &gamma = input(ctx, 1);
    int rank = x.rank();
    if (rank == 0)
        unsupported_form(ctx.node, "a scalar input has no axis to normalise");
    int axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", -1), rank);
    float eps = static_cast<float>(ctx.node.attr_float("epsilon", 1e-5));
    std::set<int> axes;
    for (int a = axis; a < rank; a++)
        axes.insert(a);
    ReductionAxes r = make_reduction(x.shape, axes, "r");
    float inv_n = 1.0f / static_cast<float>(r.count);

    std::vector<Halide::Var> v = Builder::vars(rank);
    std::vector<Halide::Expr> idx = onnx_index(v);
    std::vector<Halide::Var> kv = Builder::vars(static_cast<int>(r.kept.size()));
    std::vector<Halide::Expr> kidx = onnx_index(kv), ridx = full_index(r, rank, kidx);
    auto xf = [&](const std::vector<Halide::Expr> &i) { return to_compute(x.at(i), x.dtype); };

    Halide::Func sum = b.func("sum"), mean = b.func("mean"), var = b.func("var"),
                 rstd = b.func("rstd"), y = b.func("y");
    define(sum, kv, 0.0f);
    define(sum, kv, call_onnx(sum, kidx) + xf(ridx));
    define(mean, kv, call_onnx(sum, kidx) * inv_n);
    Halide::Expr centred = xf(ridx) - call_onnx(mean, kidx);
    define(var, kv, 0.0f);
    define(var, kv, call_onnx(var, kidx) + centred * centred);
    define(rstd, kv, 1.0f / Halide::sqrt(call_onnx(var, kidx) * inv_n + eps));

    Tensor gb = broadcast_to(b, gamma, x.shape, "gamma_b");
    Halide::Expr e = (xf(idx) - call_onnx(mean, kept_part(r, idx))) *
                     call_onnx(rstd, kept_part(r, idx)) * to_compute(gb.at(idx), gamma.dtype);
    if (ctx.inputs.size() > 2 && ctx.inputs[2].func.defined()) {
        Tensor bb = broadcast_to(b, ctx.inputs[2], x.shape, "beta_b");
        e = e + to_compute(bb.at(idx), bb.dtype);
    }
    define(y, v, from_compute(e, x.dtype));

    std::vector<Tensor> outs = {Tensor{y, x.shape, x.dtype}};
    Shape stat_shape = x.shape;
    for (int a : r.reduced)
        stat_shape[a] = 1;
    // Mean and InvStdDev, when the node asks for them: indexed like x with the normalised axes 1.
    for (int o = 1; o < static_cast<int>(ctx.node.outputs.size()) && o < 3; o++) {
        Halide::Func stat = b.func(o == 1 ? "mean_out" : "rstd_out");
        define(stat, v, call_onnx(o == 1 ? mean : rstd, kept_part(r, idx)));
        outs.push_back(Tensor{stat, stat_shape, DType::Float32});
    }
    return b.result(outs);
}

// BatchNormalization at inference: y = (x - mean[c]) * scale[c] / sqrt(var[c] + eps) + B[c] over
// the channel axis 1; each per-channel parameter is broadcast by an explicit stage.
OpResult build_batch_norm(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    if (ctx.node.attr_int("training_mode", 0) != 0 || ctx.node.outputs.size() > 1)
        unsupported_form(ctx.node, "training mode (running statistics) is not supported");
    if (x.rank() < 2)
        unsupported_form(ctx.node, "the input has no channel axis");
    float eps = static_cast<float>(ctx.node.attr_float("epsilon", 1e-5));
    std::vector<Halide::Var> v = Builder::vars(x.rank());
    std::vector<Halide::Expr> idx = onnx_index(v);
    const char *roles[] = {"", "bcast_scale", "bcast_bias", "bcast_mean", "bcast_var"};
    std::vector<Halide::Expr> p(5);
    for (size_t i = 1; i < 5; i++) {
        const Tensor &t = input(ctx, i);
        if (t.shape != Shape{x.shape[1]})
            unsupported_form(ctx.node, std::string("input ") + std::to_string(i) +
                                           " is not one value per channel");
        Halide::Func f = b.func(roles[i], x.shape);
        define(f, v, t.at({idx[1]}));
        p[i] = to_compute(f(std::vector<Halide::Expr>(v.begin(), v.end())), t.dtype);
    }
    Halide::Expr e =
        (to_compute(x.at(idx), x.dtype) - p[3]) * (p[1] / Halide::sqrt(p[4] + eps)) + p[2];
    Halide::Func y = b.func("y");
    define(y, v, from_compute(e, x.dtype));
    return b.result({Tensor{y, x.shape, x.dtype}});
}

} // namespace nhc::alg
