// Constant folding of elementwise operators (see ConstantEvaluatorSupport.h): broadcasting, and
// arithmetic, comparison, unary (with the attribute-free math functions), Where and Cast on host
// tensors.

#include "frontend/ConstantEvaluatorSupport.h"

#include "frontend/ConstantEvaluator.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace nhc::folding {

std::vector<int64_t> row_major_strides(const Shape &s) {
    std::vector<int64_t> st(s.size(), 1);
    for (int i = static_cast<int>(s.size()) - 2; i >= 0; i--)
        st[i] = st[i + 1] * s[i + 1];
    return st;
}

Shape broadcast_shapes(const Ctx &c, const std::vector<Shape> &shapes) {
    std::optional<Shape> out = numpy_broadcast(shapes);
    if (!out)
        c.fail("shapes " + shapes_str(shapes) + " do not broadcast");
    return *out;
}

/** For each element of `out`, the flat index of the broadcast element of a tensor of shape `in`. */
std::vector<int64_t> broadcast_map(const Shape &in, const Shape &out) {
    std::vector<int64_t> in_st = row_major_strides(in), map(shape_numel(out));
    size_t off = out.size() - in.size();
    std::vector<int64_t> idx(out.size(), 0);
    for (int64_t o = 0; o < static_cast<int64_t>(map.size()); o++) {
        int64_t flat = 0;
        for (size_t d = 0; d < in.size(); d++)
            flat += (in[d] == 1 ? 0 : idx[off + d]) * in_st[d];
        map[o] = flat;
        for (int d = static_cast<int>(out.size()) - 1; d >= 0; d--) {
            if (++idx[d] < out[d])
                break;
            idx[d] = 0;
        }
    }
    return map;
}

void check_size(const Ctx &c, const Shape &s) {
    for (int64_t d : s)
        if (d < 0)
            c.fail("computed a negative dimension in " + shape_str(s));
}

bool too_big(const Shape &s) {
    double n = 1;
    for (int64_t d : s)
        n *= static_cast<double>(d);
    return n > static_cast<double>(kMaxFoldedElements);
}

// Applies f elementwise over broadcast inputs. Integer dtypes compute in int64, floats in double.
Outputs elementwise(const Ctx &c, size_t arity, DType out_dtype,
                    const std::function<double(const std::vector<double> &)> &ff,
                    const std::function<int64_t(const std::vector<int64_t> &)> &fi) {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < arity; i++)
        shapes.push_back(c.input(i).shape());
    Shape out_shape = broadcast_shapes(c, shapes);
    if (too_big(out_shape))
        return std::nullopt;
    HostTensor out(out_dtype, out_shape);
    std::vector<std::vector<int64_t>> maps;
    for (const Shape &s : shapes)
        maps.push_back(broadcast_map(s, out_shape));
    DType compute = c.input(arity == 3 ? 1 : 0).dtype(); // Where computes on X/Y
    bool use_float = dtype_is_float(compute) || !fi;
    std::vector<double> vf(arity);
    std::vector<int64_t> vi(arity);
    for (int64_t o = 0; o < out.numel(); o++) {
        if (use_float) {
            for (size_t i = 0; i < arity; i++)
                vf[i] = c.input(i).get_f64(maps[i][o]);
            out.set_f64(o, ff(vf));
        } else {
            for (size_t i = 0; i < arity; i++)
                vi[i] = c.input(i).get_i64(maps[i][o]);
            out.set_i64(o, fi(vi));
        }
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs binary_arith(const Ctx &c) {
    const std::string &op = c.node.op_type();
    DType t = c.input(0).dtype();
    auto ff = [&](const std::vector<double> &v) -> double {
        double a = v[0], b = v[1];
        if (op == "Add")
            return a + b;
        if (op == "Sub")
            return a - b;
        if (op == "Mul")
            return a * b;
        if (op == "Div")
            return a / b;
        if (op == "Pow")
            return std::pow(a, b);
        if (op == "Max")
            return std::max(a, b);
        if (op == "Min")
            return std::min(a, b);
        if (op == "Mod")
            return std::fmod(a, b);
        nhc_assert(false, "unhandled binary op " << op);
    };
    auto fi = [&](const std::vector<int64_t> &v) -> int64_t {
        int64_t a = v[0], b = v[1];
        if ((op == "Div" || op == "Mod") && b == 0)
            c.fail("integer division by zero");
        if (op == "Add")
            return a + b;
        if (op == "Sub")
            return a - b;
        if (op == "Mul")
            return a * b;
        if (op == "Div")
            return a / b;
        if (op == "Pow")
            return static_cast<int64_t>(std::pow(double(a), double(b)));
        if (op == "Max")
            return std::max(a, b);
        if (op == "Min")
            return std::min(a, b);
        if (op == "Mod") {
            if (c.attr_int("fmod", 0))
                return a % b;
            int64_t r = a % b; // Python semantics: the sign of the divisor
            return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
        }
        nhc_assert(false, "unhandled binary op " << op);
    };
    if (op != "Pow" && c.input(1).dtype() != t)
        c.fail("operand types differ");
    return elementwise(c, 2, t, ff, fi);
}

// One definition for doubles and int64 (exact integer comparison matters for int64: doubles lose
// precision past 2^53).
template <typename T>
T compare_values(const std::string &op, T a, T b) {
    if (op == "Equal")
        return a == b;
    if (op == "Less")
        return a < b;
    if (op == "Greater")
        return a > b;
    if (op == "LessOrEqual")
        return a <= b;
    if (op == "GreaterOrEqual")
        return a >= b;
    if (op == "And")
        return (a != 0) && (b != 0);
    if (op == "Or")
        return (a != 0) || (b != 0);
    if (op == "Xor")
        return (a != 0) != (b != 0);
    nhc_assert(false, "unhandled comparison " << op);
}

Outputs compare(const Ctx &c) {
    const std::string &op = c.node.op_type();
    return elementwise(
        c, 2, DType::Bool,
        [&](const std::vector<double> &v) { return compare_values(op, v[0], v[1]); },
        [&](const std::vector<int64_t> &v) { return compare_values(op, v[0], v[1]); });
}

namespace {

/** The attribute-free math functions of ONNX's default domain (Operators.md, opset 17), in
 *  double: a float64 segment runs them on the host, a constant folds through them. */
double unary_math(const std::string &op, double a) {
    static const std::map<std::string, double (*)(double)> kFunctions = {
        {"Acos", [](double x) { return std::acos(x); }},
        {"Acosh", [](double x) { return std::acosh(x); }},
        {"Asin", [](double x) { return std::asin(x); }},
        {"Asinh", [](double x) { return std::asinh(x); }},
        {"Atan", [](double x) { return std::atan(x); }},
        {"Atanh", [](double x) { return std::atanh(x); }},
        {"Cosh", [](double x) { return std::cosh(x); }},
        {"Erf", [](double x) { return std::erf(x); }},
        {"Exp", [](double x) { return std::exp(x); }},
        {"Log", [](double x) { return std::log(x); }},
        {"Relu", [](double x) { return std::isnan(x) ? x : std::max(x, 0.0); }},
        {"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
        {"Sign", [](double x) { return x > 0   ? 1.0
                                       : x < 0 ? -1.0
                                               : x; }},
        {"Sinh", [](double x) { return std::sinh(x); }},
        {"Softplus", [](double x) { return std::log1p(std::exp(x)); }},
        {"Softsign", [](double x) { return x / (1 + std::fabs(x)); }},
        {"Tan", [](double x) { return std::tan(x); }},
        {"Tanh", [](double x) { return std::tanh(x); }},
    };
    auto f = kFunctions.find(op);
    nhc_assert(f != kFunctions.end(), "unhandled unary op " << op);
    return f->second(a);
}

} // namespace

Outputs unary(const Ctx &c) {
    const std::string &op = c.node.op_type();
    DType t = op == "Not" ? DType::Bool : c.input(0).dtype();
    auto ff = [&](const std::vector<double> &v) -> double {
        double a = v[0];
        if (op == "Neg")
            return -a;
        if (op == "Abs")
            return std::fabs(a);
        if (op == "Sqrt")
            return std::sqrt(a);
        if (op == "Reciprocal")
            return 1.0 / a;
        if (op == "Floor")
            return std::floor(a);
        if (op == "Ceil")
            return std::ceil(a);
        if (op == "Round")
            return std::nearbyint(a); // the default rounding mode: half to even
        if (op == "Sin")
            return std::sin(a);
        if (op == "Cos")
            return std::cos(a);
        if (op == "Not")
            return a == 0;
        if (op == "Identity")
            return a;
        return unary_math(op, a);
    };
    auto fi = [&](const std::vector<int64_t> &v) -> int64_t {
        int64_t a = v[0];
        if (op == "Neg")
            return -a;
        if (op == "Abs")
            return a < 0 ? -a : a;
        if (op == "Not")
            return a == 0;
        if (op == "Identity" || op == "Floor" || op == "Ceil" || op == "Round")
            return a;
        return static_cast<int64_t>(ff({double(a)}));
    };
    if (op == "Identity") {
        return std::vector<HostTensor>{c.input(0)};
    }
    return elementwise(c, 1, t, ff, fi);
}

Outputs where(const Ctx &c) {
    auto ff = [](const std::vector<double> &v) { return v[0] != 0 ? v[1] : v[2]; };
    auto fi = [](const std::vector<int64_t> &v) { return v[0] != 0 ? v[1] : v[2]; };
    // Condition is bool; X and Y share the output dtype. Integer X/Y use the exact path.
    if (dtype_is_float(c.input(1).dtype()))
        return elementwise(c, 3, c.input(1).dtype(), ff, nullptr);
    return elementwise(c, 3, c.input(1).dtype(), ff, fi);
}

Outputs is_nan(const Ctx &c) {
    if (!dtype_is_float(c.input(0).dtype()))
        c.fail(std::string("the input is ") + dtype_name(c.input(0).dtype()) +
               ", not a float type");
    auto ff = [](const std::vector<double> &v) { return std::isnan(v[0]) ? 1.0 : 0.0; };
    return elementwise(c, 1, DType::Bool, ff, nullptr);
}

Outputs bit_shift(const Ctx &c) {
    const DType t = c.input(0).dtype();
    if (t != DType::UInt8 && t != DType::UInt16 && t != DType::UInt32 && t != DType::UInt64)
        c.fail(std::string("the input is ") + dtype_name(t) + ", not u8, u16, u32 or u64");
    const auto *direction = c.attr("direction");
    const bool left = direction && direction->s() == "LEFT";
    if (!direction || (!left && direction->s() != "RIGHT"))
        c.fail("attribute 'direction' is not LEFT or RIGHT");
    const int64_t width = 8 * dtype_size(t);
    // Bits shifted past the type's width are lost (set_i64 keeps the low bits): a shift by the
    // width or more gives 0 either way. Shifted as unsigned 64-bit numbers, whose bits a uint64's
    // int64 holds (HostTensor::get_i64), so a right shift brings in zeros.
    auto fi = [&](const std::vector<int64_t> &v) -> int64_t {
        const uint64_t x = uint64_t(v[0]), by = uint64_t(v[1]);
        if (by >= uint64_t(width))
            return 0;
        return int64_t(left ? x << by : x >> by);
    };
    return elementwise(c, 2, t, nullptr, fi);
}

namespace {

/** `x` converted to `t` as ONNX's Cast converts (floats to integers truncated). */
HostTensor cast_to(const HostTensor &x, DType t) {
    HostTensor out(t, x.shape());
    for (int64_t i = 0; i < x.numel(); i++) {
        if (dtype_is_float(x.dtype()) && !dtype_is_float(t) && t != DType::Bool)
            out.set_i64(i, x.get_i64(i));
        else if (dtype_is_float(x.dtype()) || dtype_is_float(t))
            out.set_f64(i, x.get_f64(i));
        else
            out.set_i64(i, x.get_i64(i));
    }
    return out;
}

} // namespace

Outputs cast(const Ctx &c) {
    const auto *to = c.attr("to");
    if (!to)
        c.fail("attribute 'to' is missing");
    std::optional<DType> t = dtype_from_onnx(static_cast<int>(to->i()));
    if (!t)
        return std::nullopt;
    return std::vector<HostTensor>{cast_to(c.input(0), *t)};
}

Outputs cast_like(const Ctx &c) {
    return std::vector<HostTensor>{cast_to(c.input(0), c.input(1).dtype())};
}

} // namespace nhc::folding
