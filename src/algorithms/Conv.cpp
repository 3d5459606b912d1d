// Conv (N-D, grouped): out[n, co, o...] = bias[co] + sum over the channels ci of co's group and
// the kernel taps of w[co, ci, k...] * x[n, ci, o * stride + k * dilation - pad_begin] (zero
// outside x). This is the
// reference definition (the host JIT); the code generator runs graph/ConvIm2Col's rewrite of it
// (an im2col copy and a matmul on the PE).

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "graph/ConvIm2Col.h"

namespace nhc::alg {

OpResult build_conv(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0), &w = input(ctx, 1);
    ConvGeometry geo = conv_geometry(ctx.node, x.shape, w.shape);
    int spatial = static_cast<int>(geo.out.size());
    Shape out_shape = {x.shape[0], w.shape[0]};
    out_shape.insert(out_shape.end(), geo.out.begin(), geo.out.end());
    // RDom over (ci, k...): the channel and the kernel taps.
    // Grouped: output channel co reads the input channels of its group.
    int ci_per_group = static_cast<int>(w.shape[1]);
    int co_per_group = static_cast<int>(w.shape[0] / ctx.node.attr_int("group", 1));
    Halide::Region ranges = {Halide::Range(0, ci_per_group)};
    for (int64_t k : geo.kernel)
        ranges.push_back(Halide::Range(0, static_cast<int>(k)));
    Halide::RDom r(ranges, "r");
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out_shape.size()));
    std::vector<Halide::Expr> o = onnx_index(v);
    std::vector<Halide::Expr> xi = {o[0], (o[1] / co_per_group) * ci_per_group + r[0]};
    std::vector<Halide::Expr> wi = {o[1], r[0]};
    Halide::Expr inside = Halide::Internal::const_true();
    for (int i = 0; i < spatial; i++) {
        Halide::Expr pos = o[static_cast<size_t>(i) + 2] * static_cast<int>(geo.stride[i]) +
                           r[i + 1] * static_cast<int>(geo.dilation[i]) -
                           static_cast<int>(geo.pad_begin[i]);
        int dim = static_cast<int>(x.shape[static_cast<size_t>(i) + 2]);
        inside = inside && pos >= 0 && pos < dim;
        xi.push_back(Halide::clamp(pos, 0, dim - 1));
        wi.push_back(r[i + 1]);
    }
    Halide::Func acc = b.func("acc"), out = b.func("out");
    Halide::Expr bias = 0.0f;
    if (ctx.inputs.size() > 2 && ctx.inputs[2].func.defined())
        bias = to_compute(ctx.inputs[2].at({o[1]}), ctx.inputs[2].dtype);
    define(acc, v, bias);
    define(acc, v,
           call_onnx(acc, o) + Halide::select(inside, to_compute(x.at(xi), x.dtype), 0.0f) *
                                   to_compute(w.at(wi), w.dtype));
    define(out, v, from_compute(call_onnx(acc, o), x.dtype));
    return b.result({Tensor{out, out_shape, x.dtype}});
}

} // namespace nhc::alg
