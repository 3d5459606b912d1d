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

// graph/ConvIm2Col's ConvTaps (domain "nhc"): x [N, Ci, H, W], w [Ci, KH, KW, Co] (the contraction
// axis outermost), bias [Co]. The input is staged zero-padded (`x_pad`: the image inside, zeros
// outside), the weights as stored (`w_t`), and the accumulator sums over
// the channels (innermost: one PE matmul contracts them on partitions) and the kernel taps (outer:
// one matmul per tap, accumulated in PSUM), each tap reading a shifted, strided window of x_pad:
//   acc(ow, oh, co, n) += w_t(co, kw, kh, ci) * x_pad(ow * sw + kw * dw, oh * sh + kh * dh, ci, n)
// With packed_rows, x_pad's channels are (kernel row, channel) pairs and its rows the output rows
// (w [KH * block, 1, KW, Co]): the same sum with one matmul per kernel column.
OpResult build_conv_taps(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0), &w = input(ctx, 1);
    const Node &n = ctx.node;
    std::vector<int64_t> stride = n.attr_ints("strides"), dil = n.attr_ints("dilations"),
                         pad = n.attr_ints("pads_begin"), out = n.attr_ints("output_spatial");
    if (x.rank() != 4 || w.rank() != 4 || stride.size() != 2 || out.size() != 2)
        unsupported_form(n, "ConvTaps expects a 2-D convolution");
    DType operand = n.operand_cast.value_or(DType::Float32);
    auto stage = [&](Halide::Expr e, DType stored) {
        return stored == operand ? e : from_compute(to_compute(e, stored), operand);
    };
    std::vector<Halide::Var> v = Builder::vars(4); // (w, h, c, n), innermost first
    Halide::Func x_pad = b.func("x_pad"), w_t = b.func("w_t"), acc = b.func("acc"),
                 y = b.func("out");
    // The image as stored (`x_in`, w, h, c, n), which x_pad copies from: inlined by default, so
    // that x_pad reads the input itself; a schedule may stage it (ImagePlan::pad_on_chip).
    Halide::Func x_in = b.func("x_in");
    x_in(v) = x.at({v[3], v[2], v[1], v[0]});
    // ConvTranspose (graph/ConvTranspose) spreads the image by its stride, zeros between.
    std::vector<int64_t> spread =
        n.has_attr("input_strides") ? n.attr_ints("input_strides") : std::vector<int64_t>{1, 1};
    int width = static_cast<int>(x.shape[3]), height = static_cast<int>(x.shape[2]);
    // A pure definition, so that a schedule may compute it for any band of rows (the rows a band
    // of outputs reads, halo included): the code generator fills the region with zeros and
    // copies the part inside the image (neff/SelectBoundedCopy), into every stride-th element
    // when the image is spread.
    int sw = static_cast<int>(spread[1]), sh = static_cast<int>(spread[0]);
    Halide::Expr col = v[0] - static_cast<int>(pad[1]), row = v[1] - static_cast<int>(pad[0]);
    Halide::Expr channel = v[2], packed_inside; // a block's channels past Ci: zeros
    if (n.has_attr("packed_rows")) {
        // Kernel rows packed into the channels (graph/ConvIm2Col's packs_kernel_rows), attribute
        // (KH, stride, dilation, pad, block): channel kh * block + c of x_pad holds the rows
        // kernel row kh reads of channel c, one per output row (image row = output row * stride
        // + kh * dilation - padding), and zeros for c >= Ci.
        std::vector<int64_t> packed = n.attr_ints("packed_rows");
        if (packed.size() != 5 || sh != 1 || pad[0] != 0 || packed[4] < x.shape[1])
            unsupported_form(n, "packed_rows expects (KH, stride, dilation, pad, block) of a "
                                "dense image");
        int block = static_cast<int>(packed[4]), channels = static_cast<int>(x.shape[1]);
        channel = v[2] % block;
        row = v[1] * static_cast<int>(packed[1]) + v[2] / block * static_cast<int>(packed[2]) -
              static_cast<int>(packed[3]);
        packed_inside = channel < channels;
        channel = Halide::clamp(channel, 0, channels - 1);
    }
    Halide::Expr inside =
        col >= 0 && col < (width - 1) * sw + 1 && row >= 0 && row < (height - 1) * sh + 1;
    if (packed_inside.defined())
        inside = packed_inside && inside;
    Halide::Expr x_col = col, x_row = row; // the image element at a spread position
    if (sw > 1) {
        inside = inside && col % sw == 0;
        x_col = col / sw;
    }
    if (sh > 1) {
        inside = inside && row % sh == 0;
        x_row = row / sh;
    }
    Halide::Expr image = stage(x_in(Halide::clamp(x_col, 0, width - 1),
                                    Halide::clamp(x_row, 0, height - 1), channel, v[3]),
                               x.dtype),
                 zero = from_compute(Halide::Expr(0.0f), operand);
    if (n.has_attr("packed_rows")) {
        // Zeros over all the channels first, then each kernel row's image inside: a schedule
        // can copy one kernel row's channels at a time without a fill of their own (an engine's
        // fill starts on an aligned partition, a channel block need not).
        x_pad(v) = zero;
        x_pad(v) = Halide::select(inside, image, x_pad(v));
    } else {
        x_pad(v) = Halide::select(inside, image, zero);
    }
    // A weight auto-cast stored as fp8 (graph/AutoCast.h) is taken as stored, as Matmul.cpp's
    // operands are: the PE reads fp8 beside the bf16 image (nc.md:L116).
    if (w.dtype == DType::Float8E4M3) {
        b.store_as(w_t, w.dtype);
        w_t(v) = w.at({v[3], v[2], v[1], v[0]}); // (co, kw, kh, ci)
    } else {
        w_t(v) = stage(w.at({v[3], v[2], v[1], v[0]}), w.dtype);
    }
    Halide::RDom r(0, static_cast<int>(w.shape[0]), 0, static_cast<int>(w.shape[1]), 0,
                   static_cast<int>(w.shape[2]), "r"); // (ci, kh, kw)
    acc(v) = 0.0f;
    acc(v) +=
        Halide::cast(Halide::Float(32), w_t(v[2], r.z, r.y, r.x)) *
        Halide::cast(Halide::Float(32),
                     x_pad(v[0] * static_cast<int>(stride[1]) + r.z * static_cast<int>(dil[1]),
                           v[1] * static_cast<int>(stride[0]) + r.y * static_cast<int>(dil[0]), r.x,
                           v[3]));
    Halide::Expr sum = acc(v);
    // fp8 weights' per-tensor scale (graph/AutoCast.h), applied as the sums leave PSUM.
    const float alpha = static_cast<float>(n.attr_float("alpha", 1.0));
    if (alpha != 1.0f)
        sum = sum * alpha;
    if (ctx.inputs.size() > 2 && ctx.inputs[2].func.defined()) {
        // One value per output channel: a [channels, 1] tile, an operand constant along the
        // free axes, rather than a broadcast built per element.
        Halide::Func bias = b.func("bias");
        bias(v[0]) = to_compute(ctx.inputs[2].at({v[0]}), ctx.inputs[2].dtype);
        sum = sum + bias(v[2]);
    }
    DType out_type = ctx.outputs.empty() || !ctx.outputs[0] ? x.dtype : ctx.outputs[0]->dtype;
    y(v) = from_compute(sum, out_type);
    Shape out_shape = {x.shape[0], w.shape[3], out[0], out[1]};
    return b.result({Tensor{y, out_shape, out_type}});
}

} // namespace nhc::alg
