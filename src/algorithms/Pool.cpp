// MaxPool and AveragePool (N-D; ceil_mode through the output shape inference gave; dilations;
// count_include_pad): the reference definition (the host JIT). The code generator runs
// graph/PoolTaps's rewrite, PoolTaps (below): the padded image staged on chip and a max or a sum
// over the kernel taps of each window.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "graph/ConvIm2Col.h"

#include <limits>

namespace nhc::alg {

namespace {

const float kMinusInf = -std::numeric_limits<float>::infinity();

} // namespace

OpResult build_pool(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    const Node &n = ctx.node;
    if (n.outputs.size() > 1 && !n.outputs[1].empty())
        unsupported_form(n, "the Indices output is not supported yet");
    if (ctx.outputs.empty() || !ctx.outputs[0])
        unsupported_form(n, "an output of unknown shape");
    Shape w_shape = {1, x.shape[1]};
    for (int64_t k : n.attr_ints("kernel_shape"))
        w_shape.push_back(k);
    ConvGeometry geo = conv_geometry(n, x.shape, w_shape);
    const Shape &out_shape = ctx.outputs[0]->shape;
    bool avg = n.op_type == "AveragePool", include_pad = n.attr_int("count_include_pad", 0) != 0;
    int spatial = x.rank() - 2;
    Halide::Region ranges;
    for (int64_t k : geo.kernel)
        ranges.push_back(Halide::Range(0, static_cast<int>(k)));
    Halide::RDom r(ranges, "r");
    std::vector<Halide::Var> v = Builder::vars(x.rank());
    std::vector<Halide::Expr> o = onnx_index(v), xi = {o[0], o[1]};
    Halide::Expr inside = Halide::Internal::const_true(), counted = inside;
    for (int i = 0; i < spatial; i++) {
        Halide::Expr pos = o[static_cast<size_t>(i) + 2] * static_cast<int>(geo.stride[i]) +
                           r[i] * static_cast<int>(geo.dilation[i]) -
                           static_cast<int>(geo.pad_begin[i]);
        int dim = static_cast<int>(x.shape[static_cast<size_t>(i) + 2]);
        inside = inside && pos >= 0 && pos < dim;
        counted = counted && pos >= -static_cast<int>(geo.pad_begin[i]) &&
                  pos < dim + static_cast<int>(geo.pad_end[i]);
        xi.push_back(Halide::clamp(pos, 0, dim - 1));
    }
    Halide::Expr value = to_compute(x.at(xi), x.dtype);
    Halide::Func acc = b.func("acc"), out = b.func("out");
    if (avg) {
        Halide::Func count = b.func("count");
        define(acc, v, 0.0f);
        define(acc, v, call_onnx(acc, o) + Halide::select(inside, value, 0.0f));
        define(count, v, 0.0f);
        define(count, v,
               call_onnx(count, o) + Halide::select(include_pad ? counted : inside, 1.0f, 0.0f));
        define(out, v, from_compute(call_onnx(acc, o) / call_onnx(count, o), x.dtype));
    } else {
        Halide::Expr lowest =
            value.type().is_float() ? Halide::Expr(kMinusInf) : value.type().min();
        define(acc, v, lowest);
        define(acc, v, Halide::max(call_onnx(acc, o), Halide::select(inside, value, lowest)));
        define(out, v, from_compute(call_onnx(acc, o), x.dtype));
    }
    return b.result({Tensor{out, out_shape, x.dtype}});
}

// graph/PoolTaps's PoolTaps (domain "nhc"): x [N, C, H, W], for "avg" the reciprocal counts
// [Ho, Wo], for "conv" (a depthwise convolution) the weights [C, KH, KW] and the bias [C]. The
// image is staged padded with the reduction's identity (`x_pad`: the image inside, the identity
// outside) and the accumulator combines one shifted, strided window per kernel tap:
//   acc(ow, oh, c, n) = max|+ over (kh, kw) of x_pad(ow * sw + kw * dw, oh * sh + kh * dh, c, n)
// (for "conv", each window times w(c, kh, kw)).
OpResult build_pool_taps(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    const Node &n = ctx.node;
    std::vector<int64_t> kernel = n.attr_ints("kernel"), stride = n.attr_ints("strides"),
                         dil = n.attr_ints("dilations"), pad = n.attr_ints("pads_begin"),
                         out = n.attr_ints("output_spatial");
    if (x.rank() != 4 || kernel.size() != 2 || stride.size() != 2 || out.size() != 2)
        unsupported_form(n, "PoolTaps expects a 2-D pooling");
    std::string mode = n.attr_string("mode", "max");
    bool avg = mode == "avg", conv = mode == "conv";
    Halide::Expr identity = avg || conv ? Halide::Expr(0.0f) : Halide::Expr(kMinusInf);
    std::vector<Halide::Var> v = Builder::vars(4); // (w, h, c, n), innermost first
    Halide::Func x_pad = b.func("x_pad"), acc = b.func("acc"), y = b.func("out");
    // The image as stored (`x_in`), which x_pad copies from: inlined by default; a schedule may
    // stage it (ImagePlan::pad_on_chip).
    Halide::Func x_in = b.func("x_in");
    x_in(v) = x.at({v[3], v[2], v[1], v[0]});
    // Padded with the identity in x's own type: -inf, or the lowest integer.
    // A pure definition, so that a schedule may compute it for any band of rows (the rows a band
    // of outputs reads, halo included): the code generator fills the region and copies the part
    // inside the image (neff/SelectBoundedCopy).
    Halide::Type stored = halide_type(x.dtype);
    Halide::Expr border =
        avg || conv || stored.is_float() ? from_compute(identity, x.dtype) : stored.min();
    int width = static_cast<int>(x.shape[3]), height = static_cast<int>(x.shape[2]);
    Halide::Expr col = v[0] - static_cast<int>(pad[1]), row = v[1] - static_cast<int>(pad[0]);
    x_pad(v) = Halide::select(
        col >= 0 && col < width && row >= 0 && row < height,
        x_in(Halide::clamp(col, 0, width - 1), Halide::clamp(row, 0, height - 1), v[2], v[3]),
        border);
    Halide::RDom r(0, static_cast<int>(kernel[1]), 0, static_cast<int>(kernel[0]), "r");
    Halide::Expr window = to_compute(
        x_pad(v[0] * static_cast<int>(stride[1]) + r.x * static_cast<int>(dil[1]),
              v[1] * static_cast<int>(stride[0]) + r.y * static_cast<int>(dil[0]), v[2], v[3]),
        x.dtype);
    Shape out_shape = {x.shape[0], x.shape[1], out[0], out[1]};
    acc(v) = identity;
    Halide::Expr result = acc(v);
    if (conv) {
        // A weight per channel and tap: one column per tap, constant along the free axes of the
        // window it scales. The bias per channel likewise.
        const Tensor &w = input(ctx, 1);
        Halide::Func w_t = b.func("w_t");
        w_t(v[0], v[1], v[2]) = to_compute(w.at({v[2], v[1], v[0]}), w.dtype); // (kw, kh, c)
        acc(v) = acc(v) + window * w_t(r.x, r.y, v[2]);
        if (ctx.inputs.size() > 2 && ctx.inputs[2].func.defined()) {
            Halide::Func bias = b.func("bias");
            bias(v[0]) = to_compute(ctx.inputs[2].at({v[0]}), ctx.inputs[2].dtype);
            result = result + bias(v[2]);
        }
    } else if (avg) {
        acc(v) = acc(v) + window;
        Tensor scale = broadcast_to(b, input(ctx, 1), out_shape, "bcast_count");
        result = result * to_compute(scale.at(onnx_index(v)), scale.dtype);
    } else {
        acc(v) = Halide::max(acc(v), window);
    }
    y(v) = from_compute(result, x.dtype);
    return b.result({Tensor{y, out_shape, x.dtype}});
}

} // namespace nhc::alg
