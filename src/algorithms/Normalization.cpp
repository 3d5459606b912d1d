// LayerNormalization (opset 17): mean and variance over the axes from `axis` (default -1) on,
// y = (x - mean) * rstd * gamma + beta, following ../shared/reference/isel-prototype.md §3: the
// variance is the centred second pass, gamma and beta are broadcast by explicit stages. The
// optional Mean and InvStdDev outputs have the input's shape with the normalised axes set to 1.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "algorithms/Reduction.h"
#include "graph/FoldNormAffine.h"

namespace nhc::alg {

namespace {

/** Mean and reciprocal standard deviation of x over the axes from `first_axis` on (stages sum,
 *  mean, var, rstd: the centred second pass of ../shared/reference/isel-prototype.md §3). */
struct Moments {
    ReductionAxes r;
    Halide::Func mean, rstd;
};

Moments moments(Builder &b, const Tensor &x, int first_axis, float eps) {
    int rank = x.rank();
    std::set<int> axes;
    for (int a = first_axis; a < rank; a++)
        axes.insert(a);
    Moments m{make_reduction(x.shape, axes, "r"), b.func("mean"), b.func("rstd")};
    float inv_n = 1.0f / static_cast<float>(m.r.count);
    std::vector<Halide::Var> kv = Builder::vars(static_cast<int>(m.r.kept.size()));
    std::vector<Halide::Expr> kidx = onnx_index(kv), ridx = full_index(m.r, rank, kidx);
    Halide::Expr xr = to_compute(x.at(ridx), x.dtype);
    Halide::Func sum = b.func("sum"), var = b.func("var");
    define(sum, kv, 0.0f);
    define(sum, kv, call_onnx(sum, kidx) + xr);
    define(m.mean, kv, call_onnx(sum, kidx) * inv_n);
    Halide::Expr centred = xr - call_onnx(m.mean, kidx);
    define(var, kv, 0.0f);
    define(var, kv, call_onnx(var, kidx) + centred * centred);
    define(m.rstd, kv, 1.0f / Halide::sqrt(call_onnx(var, kidx) * inv_n + eps));
    for (const Halide::Func &f : {sum, m.mean, var, m.rstd})
        b.accumulates_in(f, x.dtype);
    return m;
}

} // namespace

OpResult build_layer_norm(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0), &gamma = input(ctx, 1);
    int rank = x.rank();
    if (rank == 0)
        unsupported_form(ctx.node, "a scalar input has no axis to normalise");
    int axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", -1), rank);
    Moments mo = moments(b, x, axis, static_cast<float>(ctx.node.attr_float("epsilon", 1e-5)));
    const ReductionAxes &r = mo.r;
    Halide::Func mean = mo.mean, rstd = mo.rstd, y = b.func("y");
    std::vector<Halide::Var> v = Builder::vars(rank);
    std::vector<Halide::Expr> idx = onnx_index(v);
    auto xf = [&](const std::vector<Halide::Expr> &i) { return to_compute(x.at(i), x.dtype); };

    Halide::Expr e =
        (xf(idx) - call_onnx(mean, kept_part(r, idx))) * call_onnx(rstd, kept_part(r, idx));
    // Scale and bias folded into the linear layers that read the result (graph/FoldNormAffine).
    bool affine = !ctx.node.has_attr(kNoAffine);
    if (affine) {
        Tensor gb = broadcast_to(b, gamma, x.shape, "gamma_b");
        e = e * to_compute(gb.at(idx), gamma.dtype);
    }
    if (affine && ctx.inputs.size() > 2 && ctx.inputs[2].func.defined()) {
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

// InstanceNormalization: mean and variance of each (n, c) over the spatial axes, then the
// per-channel scale and bias (broadcast stages). The code generator runs the rewritten form
// (graph/ReduceLastAxis); this is the reference definition.
OpResult build_instance_norm(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    int rank = x.rank();
    if (rank < 3)
        unsupported_form(ctx.node, "the input has no spatial axis");
    Moments mo = moments(b, x, 2, static_cast<float>(ctx.node.attr_float("epsilon", 1e-5)));
    std::vector<Halide::Var> v = Builder::vars(rank);
    std::vector<Halide::Expr> idx = onnx_index(v), k = kept_part(mo.r, idx);
    Halide::Func y = b.func("y");
    Halide::Expr mean = call_onnx(mo.mean, k), rstd = call_onnx(mo.rstd, k);
    const Tensor &scale = input(ctx, 1), &bias = input(ctx, 2);
    Halide::Expr e = (to_compute(x.at(idx), x.dtype) - mean) * rstd *
                         to_compute(scale.at({idx[1]}), scale.dtype) +
                     to_compute(bias.at({idx[1]}), bias.dtype);
    define(y, v, from_compute(e, x.dtype));
    return b.result({Tensor{y, x.shape, x.dtype}});
}

// graph/GroupNorm's GroupNormRows (domain "nhc"): x [tiles, T, W], each tile's T rows whole
// groups of a group normalisation; B [T, T] the block-diagonal mixing matrix (1 / elements per
// group within a group); scale_row and bias_row [tiles, T, 1]. Per tile, the row sums, mixed
// across the tile's rows by B (a contraction over the rows: an accumulator in PSUM on the PE),
// are each row's group mean; the centred squares' sums mixed the same way its variance. Then
//   y = x * a + (bias_row - mean * a),   a = scale_row * rsqrt(var + eps),
// one pass over x with a per-row scale and bias (an ACT instruction, with the activation after
// it when a schedule inlines y), instead of centring x first.
OpResult build_group_norm_rows(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0), &mix = input(ctx, 1), &scale = input(ctx, 2),
                 &bias = input(ctx, 3);
    if (x.rank() != 3 || mix.shape != Shape{x.shape[1], x.shape[1]} ||
        scale.shape != Shape{x.shape[0], x.shape[1], 1} || bias.shape != scale.shape)
        unsupported_form(ctx.node, "GroupNormRows expects x [tiles, T, W], B [T, T] and "
                                   "per-row scale and bias [tiles, T, 1]");
    float eps = static_cast<float>(ctx.node.attr_float("epsilon", 1e-5));
    std::vector<Halide::Var> v = Builder::vars(3);
    Halide::Var w = v[0], t = v[1], tile = v[2];
    Halide::RDom across(0, static_cast<int>(x.shape[2]), "r"),
        rows(0, static_cast<int>(x.shape[1]), "k");
    auto xs = [&](Halide::Expr col) { return to_compute(x.at({tile, t, col}), x.dtype); };
    // A row statistic mixed across the tile's rows by B (the rows on partitions, B stationary,
    // the statistic moving).
    auto mixed = [&](Halide::Func sum, const char *role) {
        Halide::Func m = b.func(role);
        m(w, t, tile) = 0.0f;
        m(w, t, tile) += to_compute(mix.at({rows, t}), mix.dtype) * sum(w, rows, tile);
        return m;
    };
    Halide::Func sum = b.func("sum"), sq = b.func("sumsq"), mean = b.func("mean"),
                 rstd = b.func("rstd"), shift = b.func("shift"), y = b.func("y");
    sum(w, t, tile) = 0.0f;
    sum(w, t, tile) += xs(across);
    Halide::Func mean_acc = mixed(sum, "mean_acc");
    mean(w, t, tile) = mean_acc(w, t, tile);
    Halide::Expr centred = xs(across) - mean(0, t, tile);
    sq(w, t, tile) = 0.0f;
    sq(w, t, tile) += centred * centred;
    Halide::Func var_acc = mixed(sq, "var_acc");
    rstd(w, t, tile) =
        to_compute(scale.at({tile, t, 0}), scale.dtype) / Halide::sqrt(var_acc(w, t, tile) + eps);
    shift(w, t, tile) =
        to_compute(bias.at({tile, t, 0}), bias.dtype) - mean(w, t, tile) * rstd(w, t, tile);
    y(w, t, tile) = from_compute(xs(w) * rstd(0, t, tile) + shift(0, t, tile), x.dtype);
    return b.result({Tensor{y, x.shape, x.dtype}});
}

} // namespace nhc::alg
