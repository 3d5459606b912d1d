// Elementwise operators: unary functions, binary arithmetic with ONNX broadcasting, Where, Cast.
// Each is one output stage computed in fp32 (for floating types) from explicit broadcast stages.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "support/Error.h"

#include <cmath>
#include <limits>

namespace nhc::alg {

namespace {

using Halide::Expr;

// erf has no Halide intrinsic that survives lowering as one call; a pure extern call keeps it one
// node in the IR (the code generator maps it to ACT's erf, the host JIT links libm's erff).
Expr erf_call(const Expr &x) {
    return Halide::Internal::Call::make(Halide::Float(32), "erff", {x},
                                        Halide::Internal::Call::PureExtern);
}

// GELU (graph/FuseGelu makes the node) is one pure extern call for the same reason: the code
// generator maps it to one ACT function; the host JIT links host_jit_externs() below.
Expr gelu_call(const Node &node, const Expr &x) {
    std::string form = node.attr_string("approximate", "none");
    if (form != "none" && form != "tanh")
        unsupported_form(node, "approximate='" + form + "' (expected 'none' or 'tanh')");
    return Halide::Internal::Call::make(Halide::Float(32),
                                        form == "none" ? kGeluErfExtern : kGeluTanhExtern, {x},
                                        Halide::Internal::Call::PureExtern);
}

// Sigmoid, and SiLU (graph/FuseSwish's Swish of alpha 1), as one pure extern call each: one ACT
// function (neuroncore.md L351) rather than exp, an add and a reciprocal; the host JIT links
// host_jit_externs().
Expr sigmoid_call(const Expr &x) {
    return Halide::Internal::Call::make(Halide::Float(32), kSigmoidExtern, {x},
                                        Halide::Internal::Call::PureExtern);
}

Expr swish_expr(const Node &node, const Expr &x) {
    float alpha = static_cast<float>(node.attr_float("alpha", 1.0));
    if (alpha == 1.0f)
        return Halide::Internal::Call::make(Halide::Float(32), kSiluExtern, {x},
                                            Halide::Internal::Call::PureExtern);
    return x * sigmoid_call(alpha * x);
}

// C's fmod as one pure extern call (the code generator maps it to the ALU's mod; the host JIT
// links host_jit_externs()).
Expr fmod_call(const Expr &a, const Expr &b) {
    return Halide::Internal::Call::make(Halide::Float(32), kFmodExtern, {a, b},
                                        Halide::Internal::Call::PureExtern);
}

// Floor, Ceil and Round from the engines' fmod (ALU mod; neuroncore.md L335): x - fmod(x, 1)
// truncates toward zero, then a negative (positive) remainder steps down (up). Round steps away
// from zero past a half, and at a half only from an odd truncation (ONNX: half to even).
Expr rounding_expr(const Node &node, const Expr &x) {
    Expr rem = fmod_call(x, Expr(1.0f));
    if (node.op_type == "Floor")
        return (x - rem) - Halide::select(rem < 0.0f, 1.0f, 0.0f);
    if (node.op_type == "Ceil")
        return (x - rem) + Halide::select(rem > 0.0f, 1.0f, 0.0f);
    if (node.op_type == "Round") {
        Expr trunc = x - rem;
        Expr odd = fmod_call(trunc, Expr(2.0f)) != 0.0f;
        Expr up = rem > 0.5f || (rem == 0.5f && odd);
        Expr down = rem < -0.5f || (rem == -0.5f && odd);
        return trunc + Halide::select(up, 1.0f, 0.0f) - Halide::select(down, 1.0f, 0.0f);
    }
    unsupported_form(node, "no elementwise form");
}

// sin on ACT is accurate on [-pi, pi] only (no range reduction: neuroncore.md L359), arctan on
// [-pi/2, pi/2] (L360): arguments are reduced first, with fmod and atan(x) = sign(x) pi/2 -
// atan(1/x) for |x| > 1. The inverse and hyperbolic functions follow from them, exp and log.
Expr sin_reduced(const Expr &x) {
    const float pi = 3.14159265358979f, two_pi = 6.28318530717959f;
    Expr r = fmod_call(x + pi, Expr(two_pi));
    r = Halide::select(r < 0.0f, r + two_pi, r) - pi; // in [-pi, pi)
    return Halide::sin(r);
}

Expr atan_reduced(const Expr &x) {
    const float half_pi = 1.57079632679490f;
    Expr big = Halide::abs(x) > 1.0f;
    Expr inner = Halide::atan(Halide::select(big, 1.0f / x, x));
    return Halide::select(big, Halide::select(x > 0.0f, half_pi, -half_pi) - inner, inner);
}

Expr trig_expr(const Node &node, const Expr &x) {
    const std::string &op = node.op_type;
    const float half_pi = 1.57079632679490f;
    if (op == "Sin")
        return sin_reduced(x);
    if (op == "Cos")
        return sin_reduced(x + half_pi);
    if (op == "Tan")
        return sin_reduced(x) / sin_reduced(x + half_pi);
    if (op == "Atan")
        return atan_reduced(x);
    if (op == "Asin")
        return atan_reduced(x / Halide::sqrt(1.0f - x * x));
    if (op == "Acos")
        return half_pi - atan_reduced(x / Halide::sqrt(1.0f - x * x));
    if (op == "Sinh")
        return (Halide::exp(x) - Halide::exp(-x)) * 0.5f;
    if (op == "Cosh")
        return (Halide::exp(x) + Halide::exp(-x)) * 0.5f;
    if (op == "Asinh") { // odd: computed on |x| (no cancellation for negative x)
        Expr a = Halide::abs(x);
        Expr v = Halide::log(a + Halide::sqrt(a * a + 1.0f));
        return Halide::select(x < 0.0f, -v, v);
    }
    if (op == "Acosh")
        return Halide::log(x + Halide::sqrt(x * x - 1.0f));
    if (op == "Atanh")
        return 0.5f * Halide::log((1.0f + x) / (1.0f - x));
    return rounding_expr(node, x);
}

// The activations with attributes (ONNX defaults).
Expr activation_expr(const Node &node, const Expr &x) {
    const std::string &op = node.op_type;
    Expr zero = 0.0f, one = 1.0f;
    auto attr = [&](const char *name, double fallback) {
        return Expr(static_cast<float>(node.attr_float(name, fallback)));
    };
    if (op == "LeakyRelu")
        return Halide::select(x < zero, attr("alpha", 0.01) * x, x);
    if (op == "Elu")
        return Halide::select(x < zero, attr("alpha", 1.0) * (Halide::exp(x) - one), x);
    if (op == "HardSigmoid")
        return Halide::clamp(attr("alpha", 0.2) * x + attr("beta", 0.5), zero, one);
    if (op == "HardSwish")
        return x * Halide::clamp(x * (1.0f / 6.0f) + 0.5f, zero, one);
    if (op == "Softplus") // log(1 + e^x), which is x to fp32 precision beyond 20
        return Halide::select(x > 20.0f, x, Halide::log(Halide::exp(x) + one));
    if (op == "Selu")
        return attr("gamma", 1.0507009873554805) *
               Halide::select(x > zero, x,
                              attr("alpha", 1.6732632423543772) * (Halide::exp(x) - one));
    if (op == "Celu") {
        Expr alpha = attr("alpha", 1.0);
        return Halide::max(zero, x) + Halide::min(zero, alpha * (Halide::exp(x / alpha) - one));
    }
    if (op == "ThresholdedRelu")
        return Halide::select(x > attr("alpha", 1.0), x, zero);
    if (op == "Shrink") {
        Expr lambd = attr("lambd", 0.5), bias = attr("bias", 0.0);
        return Halide::select(x < -lambd, x + bias, Halide::select(x > lambd, x - bias, zero));
    }
    if (op == "Softsign")
        return x / (one + Halide::abs(x));
    if (op == "Sign")
        return Halide::select(x > zero, one, Halide::select(x < zero, -one, zero));
    return trig_expr(node, x);
}

Expr unary_expr(const Node &node, const Expr &x) {
    const std::string &op = node.op_type;
    if (op == "Abs")
        return Halide::abs(x);
    if (op == "Neg")
        return -x;
    if (op == "Relu")
        return Halide::max(x, Halide::Internal::make_zero(x.type()));
    if (op == "Exp")
        return Halide::exp(x);
    if (op == "Log")
        return Halide::log(x);
    if (op == "Sqrt")
        return Halide::sqrt(x);
    if (op == "Tanh")
        return Halide::tanh(x);
    if (op == "Erf")
        return erf_call(x);
    if (op == "Gelu")
        return gelu_call(node, x);
    if (op == "Reciprocal")
        return 1.0f / x;
    if (op == "Sigmoid")
        return sigmoid_call(x);
    if (op == "Swish")
        return swish_expr(node, x);
    return activation_expr(node, x);
}

// A constant scalar exponent becomes multiplications or a square root (as torch exports of
// LayerNorm and tanh-GELU use x^2 and x^3).
Expr pow_expr(const OpContext &ctx, const Expr &a, const Expr &b) {
    const HostTensor *c = ctx.constants.size() > 1 ? ctx.constants[1] : nullptr;
    if (c && c->numel() == 1) {
        double e = c->get_f64(0);
        if (e == 1.0)
            return a;
        if (e == 2.0)
            return a * a;
        if (e == 3.0)
            return a * a * a;
        if (e == 0.5)
            return Halide::sqrt(a);
        if (e == -1.0)
            return 1.0f / a;
    }
    return Halide::pow(a, b);
}

// Mod: fmod = 1 is C's fmod (the ALU's mod, neuroncore.md L335); fmod = 0 (integers) takes the
// divisor's sign, as Python's %: a nonzero remainder of the other sign moves by the divisor.
Expr mod_expr(const OpContext &ctx, const Expr &a, const Expr &b, DType t) {
    Expr fa = Halide::cast(Halide::Float(32), a), fb = Halide::cast(Halide::Float(32), b);
    Expr rem = fmod_call(fa, fb);
    if (ctx.node.attr_int("fmod", 0) == 0) {
        if (dtype_is_float(t))
            unsupported_form(ctx.node,
                             "fmod = 0 on floating-point inputs (ONNX requires fmod = 1)");
        rem = Halide::select(rem != 0.0f && (rem < 0.0f) != (fb < 0.0f), rem + fb, rem);
    }
    return Halide::cast(a.type(), rem);
}

Expr binary_expr(const OpContext &ctx, const Expr &a, const Expr &b, DType t) {
    const std::string &op = ctx.node.op_type;
    if (op == "Add" || op == "Sum" || op == "Mean")
        return a + b;
    if (op == "Sub")
        return a - b;
    if (op == "Mul")
        return a * b;
    if (op == "Div")
        return dtype_is_float(t) ? a / b : Halide::div_round_to_zero(a, b);
    if (op == "Max")
        return Halide::max(a, b);
    if (op == "Min")
        return Halide::min(a, b);
    if (op == "Pow")
        return pow_expr(ctx, a, b);
    if (op == "PRelu")
        return Halide::select(a < 0.0f, a * b, a);
    if (op == "Mod")
        return mod_expr(ctx, a, b, t);
    unsupported_form(ctx.node, "no binary form");
}

float gelu_erf_host(float x) {
    return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2)));
}

float gelu_tanh_host(float x) {
    const float k = static_cast<float>(std::sqrt(2.0 / M_PI));
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

float sigmoid_host(float x) {
    return 1.0f / (1.0f + std::exp(-x));
}

float silu_host(float x) {
    return x / (1.0f + std::exp(-x));
}

bool at_most_zero_host(int32_t d) {
    return d <= 0;
}

} // namespace

float fmod_host(float a, float b) {
    return std::fmod(a, b);
}

std::map<std::string, Halide::JITExtern> host_jit_externs() {
    return {{kFmodExtern, Halide::JITExtern(fmod_host)},
            {kGeluErfExtern, Halide::JITExtern(gelu_erf_host)},
            {kGeluTanhExtern, Halide::JITExtern(gelu_tanh_host)},
            {kSigmoidExtern, Halide::JITExtern(sigmoid_host)},
            {kSiluExtern, Halide::JITExtern(silu_host)},
            {kAtMostZeroExtern, Halide::JITExtern(at_most_zero_host)}};
}

OpResult build_unary(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    if (!dtype_is_float(x.dtype) && ctx.node.op_type != "Abs" && ctx.node.op_type != "Neg" &&
        ctx.node.op_type != "Relu")
        unsupported_form(ctx.node, std::string("input type ") + dtype_name(x.dtype) +
                                       " is not floating point");
    std::vector<Halide::Var> v = Builder::vars(x.rank());
    Halide::Func out = b.func("out");
    Expr e = unary_expr(ctx.node, to_compute(x.at(onnx_index(v)), x.dtype));
    define(out, v, from_compute(e, x.dtype));
    return b.result({Tensor{out, x.shape, x.dtype}});
}

// Binary arithmetic; Max, Min, Sum and Mean take one or more inputs (folded left to right).
OpResult build_binary(const OpContext &ctx) {
    Builder b(ctx);
    const std::string &op = ctx.node.op_type;
    bool variadic = op == "Max" || op == "Min" || op == "Sum" || op == "Mean";
    if (ctx.inputs.empty() || (!variadic && ctx.inputs.size() != 2))
        unsupported_form(ctx.node, "expected 2 inputs, found " + std::to_string(ctx.inputs.size()));
    const Tensor &x = input(ctx, 0);
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.inputs.size(); i++)
        shapes.push_back(input(ctx, i).shape);
    Shape shape = broadcast_shape(ctx.node, shapes);
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(shape.size()));
    std::vector<Expr> idx = onnx_index(v);
    Expr e;
    for (size_t i = 0; i < ctx.inputs.size(); i++) {
        const Tensor &t = ctx.inputs[i];
        const HostTensor *c = i < ctx.constants.size() ? ctx.constants[i] : nullptr;
        Expr ti;
        if (c && c->numel() == 1 && dtype_is_float(c->dtype())) {
            // A one-element constant (torch's `x / 8.0`, `x + 1`) is an immediate, not a tensor.
            ti = Halide::Expr(static_cast<float>(c->get_f64(0)));
        } else {
            Tensor tb = broadcast_to(b, t, shape, "bcast" + std::to_string(i));
            ti = to_compute(tb.at(idx), t.dtype);
        }
        e = i == 0 ? ti : binary_expr(ctx, e, ti, x.dtype);
    }
    if (op == "Mean")
        e = e * (1.0f / static_cast<float>(ctx.inputs.size()));
    Halide::Func out = b.func("out");
    define(out, v, from_compute(e, x.dtype));
    return b.result({Tensor{out, shape, x.dtype}});
}

OpResult build_where(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &c = input(ctx, 0), &x = input(ctx, 1), &y = input(ctx, 2);
    Shape shape = broadcast_shape(ctx.node, {c.shape, x.shape, y.shape});
    Tensor cb = broadcast_to(b, c, shape, "bcast_cond");
    Tensor xb = broadcast_to(b, x, shape, "bcast_x");
    Tensor yb = broadcast_to(b, y, shape, "bcast_y");
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(shape.size()));
    std::vector<Expr> idx = onnx_index(v);
    Halide::Func out = b.func("out");
    define(out, v, Halide::select(cb.at(idx) != 0, xb.at(idx), yb.at(idx)));
    return b.result({Tensor{out, shape, x.dtype}});
}

// graph/CausalMask's TriangularWhere (domain "nhc"): x where the column index j of the last two
// axes is at most the row index i plus the diagonal, else the fill. The mask is the indices'
// comparison, so no mask tensor is read.
OpResult build_triangular_where(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    if (x.rank() < 2)
        unsupported_form(ctx.node, "TriangularWhere expects rows and columns");
    int diagonal = static_cast<int>(ctx.node.attr_int("diagonal", 0));
    Expr fill = Halide::cast(x.func.output_types()[0],
                             Expr(static_cast<float>(ctx.node.attr_float("fill", 0))));
    std::vector<Halide::Var> v = Builder::vars(x.rank()); // v[0] the column j, v[1] the row i
    Halide::Func out = b.func("out");
    Expr keep =
        Halide::Internal::Call::make(Halide::Bool(), kAtMostZeroExtern, {v[0] - v[1] - diagonal},
                                     Halide::Internal::Call::PureExtern);
    define(out, v, Halide::select(keep, x.at(onnx_index(v)), fill));
    return b.result({Tensor{out, x.shape, x.dtype}});
}

// Comparisons (numeric inputs) and logical operators (bool inputs, held as 0/1) give bool
// outputs. Inputs are compared in the compute type, so mixed widths compare by value; logical
// operators are arithmetic on 0/1 (And = product, Or = maximum, Xor = inequality, Not = equality
// with 0), which the engines have as ALU operations.
OpResult build_compare(const OpContext &ctx) {
    Builder b(ctx);
    const std::string &op = ctx.node.op_type;
    size_t arity = op == "Not" || op == "IsInf" ? 1 : 2;
    if (ctx.inputs.size() != arity)
        unsupported_form(ctx.node, "expected " + std::to_string(arity) + " inputs");
    std::vector<Shape> shapes;
    for (size_t i = 0; i < arity; i++)
        shapes.push_back(input(ctx, i).shape);
    Shape shape = broadcast_shape(ctx.node, shapes);
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(shape.size()));
    std::vector<Expr> idx = onnx_index(v), in;
    for (size_t i = 0; i < arity; i++) {
        Tensor t = broadcast_to(b, ctx.inputs[i], shape, "bcast" + std::to_string(i));
        // Integers through fp32 as well: the engines compare in fp32 (exact below 2^24).
        in.push_back(Halide::cast(Halide::Float(32), t.at(idx)));
    }
    Expr e;
    if (op == "Equal")
        e = in[0] == in[1];
    else if (op == "Greater")
        e = in[0] > in[1];
    else if (op == "GreaterOrEqual")
        e = in[0] >= in[1];
    else if (op == "Less")
        e = in[0] < in[1];
    else if (op == "LessOrEqual")
        e = in[0] <= in[1];
    else if (op == "And")
        e = in[0] * in[1];
    else if (op == "Or")
        e = Halide::max(in[0], in[1]);
    else if (op == "Xor")
        e = in[0] != in[1];
    else if (op == "Not")
        e = in[0] == 0.0f;
    else if (op == "IsInf") {
        // Beyond the largest finite float rather than equal to inf: the host JIT compiles
        // float compares with inf as if no value were infinite.
        Expr big = std::numeric_limits<float>::max();
        Expr pos = Halide::select(in[0] > big, 1.0f, 0.0f),
             neg = Halide::select(in[0] < -big, 1.0f, 0.0f);
        bool detect_pos = ctx.node.attr_int("detect_positive", 1) != 0,
             detect_neg = ctx.node.attr_int("detect_negative", 1) != 0;
        e = detect_pos && detect_neg ? pos + neg : detect_pos ? pos : detect_neg ? neg : Expr(0.0f);
    } else
        unsupported_form(ctx.node, "no comparison form");
    if (e.type().is_bool())
        e = Halide::select(e, 1.0f, 0.0f);
    Halide::Func out = b.func("out");
    define(out, v, from_compute(e, DType::Bool));
    return b.result({Tensor{out, shape, DType::Bool}});
}

// Clip between the optional bounds: inputs from opset 11 (a one-element constant becomes an
// immediate, a runtime scalar a broadcast stage), attributes before.
OpResult build_clip(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    std::vector<Halide::Var> v = Builder::vars(x.rank());
    std::vector<Expr> idx = onnx_index(v);
    Expr e = to_compute(x.at(idx), x.dtype);
    for (size_t i = 1; i < 3; i++) {
        const char *name = i == 1 ? "min" : "max";
        Expr bound;
        if (i < ctx.inputs.size() && ctx.inputs[i].func.defined()) {
            const HostTensor *c = ctx.constants[i];
            const Tensor &t = ctx.inputs[i];
            if (!t.shape.empty() && shape_numel(t.shape) != 1)
                unsupported_form(ctx.node, std::string(name) + " must have one element");
            bound =
                c ? Expr(static_cast<float>(c->get_f64(0)))
                  : to_compute(broadcast_to(b, t, x.shape, std::string("bcast_") + name).at(idx),
                               t.dtype);
        } else if (ctx.node.has_attr(name)) {
            bound = Expr(static_cast<float>(ctx.node.attr_float(name, 0)));
        }
        if (bound.defined())
            e = i == 1 ? Halide::max(e, bound) : Halide::min(e, bound);
    }
    Halide::Func out = b.func("out");
    define(out, v, from_compute(e, x.dtype));
    return b.result({Tensor{out, x.shape, x.dtype}});
}

// Dropout at inference (training_mode absent or false), or with a ratio of 0: the input as it
// is, and a mask of ones when the node asks for it.
OpResult build_dropout(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    auto constant = [&](size_t i) -> std::optional<double> {
        if (i >= ctx.inputs.size() || !ctx.inputs[i].func.defined())
            return 0.0; // absent: ratio's and training_mode's defaults do not drop at inference
        if (!ctx.constants[i] || ctx.constants[i]->numel() != 1)
            return std::nullopt;
        return ctx.constants[i]->get_f64(0);
    };
    std::optional<double> ratio = constant(1), training = constant(2);
    if (!training || (*training != 0 && (!ratio || *ratio != 0)))
        unsupported_form(ctx.node, "training_mode must be a constant false, or the ratio a "
                                   "constant 0 (training-mode Dropout draws random numbers)");
    std::vector<Halide::Var> v = Builder::vars(x.rank());
    Halide::Func out = b.func("out");
    define(out, v, x.at(onnx_index(v)));
    std::vector<Tensor> outs = {Tensor{out, x.shape, x.dtype}};
    if (ctx.node.outputs.size() > 1) {
        Halide::Func mask = b.func("mask");
        define(mask, v, Halide::cast(Halide::UInt(8), 1));
        outs.push_back(Tensor{mask, x.shape, DType::Bool});
    }
    return b.result(outs);
}

OpResult build_cast(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    // CastLike takes the type of its second input.
    std::optional<DType> to = ctx.node.op_type == "CastLike"
                                  ? std::optional<DType>(input(ctx, 1).dtype)
                                  : dtype_from_onnx(static_cast<int>(ctx.node.attr_int("to", 0)));
    if (!to)
        unsupported_form(ctx.node, "attribute 'to' names a type the compiler cannot hold");
    std::vector<Halide::Var> v = Builder::vars(x.rank());
    // Through the compute type (fp32 for floats), so that bf16 converts with RNE both ways.
    Expr e = x.at(onnx_index(v));
    e = dtype_is_float(*to) || dtype_is_float(x.dtype) ? from_compute(to_compute(e, x.dtype), *to)
                                                       : from_compute(e, *to);
    Halide::Func out = b.func("out");
    define(out, v, e);
    return b.result({Tensor{out, x.shape, *to}});
}

// Expand: x broadcast (numpy rules) to the shape input. A shape given at run time is the
// inferred output shape: a static compile is specialised to it, as for Reshape.
OpResult build_expand(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &x = input(ctx, 0);
    Shape target = ctx.constants.size() > 1 && ctx.constants[1] ? ctx.constants[1]->to_i64_vector()
                                                                : ctx.outputs.at(0)->shape;
    Shape shape = broadcast_shape(ctx.node, {x.shape, target});
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(shape.size()));
    Tensor xb = broadcast_to(b, x, shape, "bcast0");
    Halide::Func out = b.func("out");
    define(out, v, xb.at(onnx_index(v)));
    return b.result({Tensor{out, shape, x.dtype}});
}

} // namespace nhc::alg
