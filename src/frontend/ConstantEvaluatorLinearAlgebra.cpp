/** \file
 * Host evaluators of linear-algebra operators the device does not run (ONNX Operators.md, opset
 * 17): Einsum (any equation, with repeated labels and an ellipsis), Det, and the integer matrix
 * products MatMulInteger and QLinearMatMul; and MatMul and Gemm, which the device runs on 32- and
 * 16-bit values, for a float64 part of a model. They fold on constants and otherwise run in a
 * host segment (driver/HostPartition.h); MatMul and Gemm leave a product of more than
 * kMaxHostMultiplyAdds unevaluated. Sums are taken in double (floats) or int64 (integers) and
 * rounded once into the output's type; QLinearMatMul requantizes its int32 sums as ONNX Runtime
 * does, by one float32 multiplier rounded half to even.
 */

#include "frontend/ConstantEvaluator.h"
#include "frontend/ConstantEvaluatorSupport.h"
#include "frontend/EinsumEquation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <type_traits>

namespace nhc::folding {

Outputs einsum(const Ctx &c) {
    const auto *equation = c.attr("equation");
    if (!equation)
        c.fail("attribute 'equation' is missing");
    std::vector<Shape> shapes;
    for (size_t i = 0; i < c.in.size(); i++)
        shapes.push_back(c.input(i).shape());
    const EinsumEquation eq =
        parse_einsum(equation->s(), shapes, [&](const std::string &what) { c.fail(what); });
    const std::map<int, int64_t> &extent = eq.extent;
    // The loop over every label: the output's labels first, so that the output's elements come
    // in order.
    std::vector<int> loop = eq.output;
    for (const auto &[label, n] : extent)
        if (std::find(loop.begin(), loop.end(), label) == loop.end())
            loop.push_back(label);
    const Shape out_shape = einsum_output_shape(eq);
    // Each operand's stride per loop label: the sum of its dims' strides with that label (a
    // repeated label walks the diagonal), 0 where it lacks the label or broadcasts it.
    std::vector<std::vector<int64_t>> step(shapes.size(), std::vector<int64_t>(loop.size(), 0));
    for (size_t i = 0; i < shapes.size(); i++) {
        const std::vector<int64_t> strides = row_major_strides(shapes[i]);
        for (size_t d = 0; d < shapes[i].size(); d++) {
            const size_t k =
                size_t(std::find(loop.begin(), loop.end(), eq.operands[i][d]) - loop.begin());
            step[i][k] += shapes[i][d] == 1 ? 0 : strides[d];
        }
    }
    std::vector<int64_t> extents;
    for (int label : loop)
        extents.push_back(extent.at(label));
    const DType t = c.input(0).dtype();
    const bool is_float = dtype_is_float(t);
    HostTensor out(t, out_shape);
    const int64_t outputs = out.numel();
    const int64_t summed = outputs ? shape_numel(extents) / outputs : 0;
    std::vector<int64_t> index(loop.size());
    for (int64_t o = 0; o < outputs; o++) {
        double fsum = 0;
        int64_t isum = 0;
        for (int64_t r = 0; r < summed; r++) {
            int64_t rest = o * summed + r; // the loop's indices, its last label fastest
            for (size_t k = loop.size(); k-- > 0;) {
                index[k] = rest % extents[k];
                rest /= extents[k];
            }
            double fp = 1;
            int64_t ip = 1;
            for (size_t i = 0; i < shapes.size(); i++) {
                int64_t at = 0;
                for (size_t k = 0; k < loop.size(); k++)
                    at += index[k] * step[i][k];
                if (is_float)
                    fp *= c.input(i).get_f64(at);
                else
                    ip *= c.input(i).get_i64(at);
            }
            fsum += fp;
            isum += ip;
        }
        if (is_float)
            out.set_f64(o, fsum);
        else
            out.set_i64(o, isum);
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs det(const Ctx &c) {
    const HostTensor &x = c.input(0);
    const Shape &s = x.shape();
    if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2] || !dtype_is_float(x.dtype()))
        c.fail("the input " + shape_str(s) + " of " + dtype_name(x.dtype()) +
               " is not a float tensor of square matrices [..., M, M]");
    const int64_t m = s.back(), count = x.numel() / std::max<int64_t>(m * m, 1);
    HostTensor out(x.dtype(), Shape(s.begin(), s.end() - 2));
    std::vector<double> a(size_t(m * m));
    for (int64_t b = 0; b < count; b++) {
        for (int64_t i = 0; i < m * m; i++)
            a[size_t(i)] = x.get_f64(b * m * m + i);
        // LU decomposition with partial pivoting: the product of the pivots, its sign flipped
        // by each row swap.
        double d = 1;
        for (int64_t k = 0; k < m && d != 0; k++) {
            int64_t p = k;
            for (int64_t i = k + 1; i < m; i++)
                if (std::fabs(a[size_t(i * m + k)]) > std::fabs(a[size_t(p * m + k)]))
                    p = i;
            if (p != k) {
                for (int64_t j = 0; j < m; j++)
                    std::swap(a[size_t(p * m + j)], a[size_t(k * m + j)]);
                d = -d;
            }
            const double pivot = a[size_t(k * m + k)];
            d *= pivot;
            if (pivot == 0)
                break;
            for (int64_t i = k + 1; i < m; i++) {
                const double f = a[size_t(i * m + k)] / pivot;
                for (int64_t j = k; j < m; j++)
                    a[size_t(i * m + j)] -= f * a[size_t(k * m + j)];
            }
        }
        out.set_f64(b, d);
    }
    return std::vector<HostTensor>{std::move(out)};
}

namespace {

/** The int64 sums (A - a_zero) @ (B - b_zero) of integer matrices [..., M, K] and [..., K, N]
 *  (the leading dims broadcast as MatMul's), with zero points a scalar or one per row of A /
 *  column of B (`a_zero`, `b_zero` may be null). */
HostTensor integer_product(const Ctx &c, const HostTensor &a, const HostTensor &b,
                           const HostTensor *a_zero, const HostTensor *b_zero) {
    const Shape &as = a.shape(), &bs = b.shape();
    if (as.size() < 2 || bs.size() < 2 || as.back() != bs[bs.size() - 2] ||
        dtype_is_float(a.dtype()) || dtype_is_float(b.dtype()))
        c.fail("the inputs " + shape_str(as) + " and " + shape_str(bs) +
               " are not integer matrices [..., M, K] and [..., K, N]");
    const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
    const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
    const Shape batch = broadcast_shapes(c, {a_batch, b_batch});
    const std::vector<int64_t> a_of = broadcast_map(a_batch, batch),
                               b_of = broadcast_map(b_batch, batch);
    auto zero = [&](const HostTensor *z, int64_t i, int64_t extent) -> int64_t {
        if (!z)
            return 0;
        if (z->numel() == 1)
            return z->get_i64(0);
        if (z->numel() != extent)
            c.fail("a zero point of shape " + shape_str(z->shape()) + " is neither a scalar nor " +
                   std::to_string(extent) + " values");
        return z->get_i64(i);
    };
    Shape out_shape = batch;
    out_shape.push_back(m);
    out_shape.push_back(n);
    HostTensor out(DType::Int64, out_shape);
    for (int64_t t = 0; t < shape_numel(batch); t++) {
        const int64_t a0 = a_of[size_t(t)] * m * k, b0 = b_of[size_t(t)] * k * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                int64_t sum = 0;
                for (int64_t p = 0; p < k; p++)
                    sum += (a.get_i64(a0 + i * k + p) - zero(a_zero, i, m)) *
                           (b.get_i64(b0 + p * n + j) - zero(b_zero, j, n));
                out.set_i64((t * m + i) * n + j, sum);
            }
    }
    return out;
}

/** The elements of `t` as doubles (floats) or int64 (integers), read once. */
template <typename T>
std::vector<T> values_of(const HostTensor &t) {
    std::vector<T> v(size_t(t.numel()));
    for (int64_t i = 0; i < t.numel(); i++)
        v[size_t(i)] = std::is_floating_point_v<T> ? T(t.get_f64(i)) : T(t.get_i64(i));
    return v;
}

/** out[t, i, j] = sum_p a[t, i, p] * b[t, p, j] for `batches` pairs of row-major matrices, the
 *  batch's operands at a_of[t] and b_of[t] (in matrices); a or b transposed when asked. */
template <typename T>
std::vector<T> products(const std::vector<T> &a, const std::vector<T> &b, int64_t m, int64_t k,
                        int64_t n, const std::vector<int64_t> &a_of,
                        const std::vector<int64_t> &b_of, bool trans_a = false,
                        bool trans_b = false) {
    std::vector<T> out(a_of.size() * size_t(m * n), T(0));
    for (size_t t = 0; t < a_of.size(); t++) {
        const T *pa = a.data() + a_of[t] * m * k, *pb = b.data() + b_of[t] * k * n;
        T *po = out.data() + t * size_t(m * n);
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++) {
                const T x = trans_a ? pa[p * m + i] : pa[i * k + p];
                for (int64_t j = 0; j < n; j++)
                    po[i * n + j] += x * (trans_b ? pb[j * k + p] : pb[p * n + j]);
            }
    }
    return out;
}

template <typename T>
void store(HostTensor &out, const std::vector<T> &v) {
    for (int64_t i = 0; i < out.numel(); i++) {
        if constexpr (std::is_floating_point_v<T>)
            out.set_f64(i, v[size_t(i)]);
        else
            out.set_i64(i, v[size_t(i)]);
    }
}

bool over_work_limit(int64_t batches, int64_t m, int64_t k, int64_t n) {
    const double work = double(batches) * double(m) * double(k) * double(n);
    return work > double(kMaxHostMultiplyAdds);
}

} // namespace

Outputs matmul(const Ctx &c) {
    const HostTensor &a = c.input(0), &b = c.input(1);
    // numpy's matmul: a 1-D operand is a row (A) or a column (B), its unit dim dropped after.
    Shape as = a.shape(), bs = b.shape();
    const bool a_vector = as.size() == 1, b_vector = bs.size() == 1;
    if (as.empty() || bs.empty())
        c.fail("an operand is a scalar");
    if (a_vector)
        as.insert(as.begin(), 1);
    if (b_vector)
        bs.push_back(1);
    if (as.back() != bs[bs.size() - 2])
        c.fail("the inputs " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
               " do not multiply");
    const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
    const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
    const Shape batch = broadcast_shapes(c, {a_batch, b_batch});
    Shape out_shape = batch;
    if (!a_vector)
        out_shape.push_back(m);
    if (!b_vector)
        out_shape.push_back(n);
    if (too_big(out_shape) || over_work_limit(shape_numel(batch), m, k, n))
        return std::nullopt;
    const std::vector<int64_t> a_of = broadcast_map(a_batch, batch),
                               b_of = broadcast_map(b_batch, batch);
    HostTensor out(a.dtype(), out_shape);
    if (dtype_is_float(a.dtype()))
        store(out, products(values_of<double>(a), values_of<double>(b), m, k, n, a_of, b_of));
    else
        store(out, products(values_of<int64_t>(a), values_of<int64_t>(b), m, k, n, a_of, b_of));
    return std::vector<HostTensor>{std::move(out)};
}

Outputs gemm(const Ctx &c) {
    const HostTensor &a = c.input(0), &b = c.input(1);
    const bool trans_a = c.attr_int("transA", 0) != 0, trans_b = c.attr_int("transB", 0) != 0;
    if (a.rank() != 2 || b.rank() != 2)
        c.fail("the inputs " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
               " are not matrices");
    const int64_t m = a.shape()[trans_a ? 1 : 0], k = a.shape()[trans_a ? 0 : 1],
                  n = b.shape()[trans_b ? 0 : 1];
    if (b.shape()[trans_b ? 1 : 0] != k)
        c.fail("the inputs " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
               " do not multiply with transA " + std::to_string(trans_a) + ", transB " +
               std::to_string(trans_b));
    if (over_work_limit(1, m, k, n))
        return std::nullopt;
    const HostTensor *bias = c.optional_input(2);
    const Shape out_shape{m, n};
    if (bias && !numpy_broadcast({bias->shape(), out_shape}))
        c.fail("C " + shape_str(bias->shape()) + " does not broadcast to " + shape_str(out_shape));
    const bool is_float = dtype_is_float(a.dtype());
    const double alpha = c.attr("alpha") ? c.attr("alpha")->f() : 1.0,
                 beta = c.attr("beta") ? c.attr("beta")->f() : 1.0;
    std::vector<double> y =
        products(values_of<double>(a), values_of<double>(b), m, k, n, {0}, {0}, trans_a, trans_b);
    const std::vector<int64_t> c_of =
        bias ? broadcast_map(bias->shape(), out_shape) : std::vector<int64_t>{};
    HostTensor out(a.dtype(), out_shape);
    for (int64_t i = 0; i < m * n; i++) {
        double v = alpha * y[size_t(i)] + (bias ? beta * bias->get_f64(c_of[size_t(i)]) : 0.0);
        if (is_float)
            out.set_f64(i, v);
        else
            out.set_i64(i, int64_t(v));
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs matmul_integer(const Ctx &c) {
    HostTensor sums =
        integer_product(c, c.input(0), c.input(1), c.optional_input(2), c.optional_input(3));
    HostTensor out(DType::Int32, sums.shape());
    for (int64_t i = 0; i < sums.numel(); i++)
        out.set_i64(i, sums.get_i64(i));
    return std::vector<HostTensor>{std::move(out)};
}

Outputs qlinear_matmul(const Ctx &c) {
    // Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
    const HostTensor &y_zero = c.input(7);
    for (auto [i, name] : {std::pair{1, "a_scale"}, {4, "b_scale"}, {6, "y_scale"}})
        if (c.input(size_t(i)).numel() != 1)
            c.fail(std::string(name) + " is not one value (per-axis scales are not evaluated)");
    HostTensor sums = integer_product(c, c.input(0), c.input(3), &c.input(2), &c.input(5));
    const float multiplier =
        float(c.input(1).get_f64(0)) * float(c.input(4).get_f64(0)) / float(c.input(6).get_f64(0));
    const bool is_u8 = y_zero.dtype() == DType::UInt8;
    HostTensor out(y_zero.dtype(), sums.shape());
    for (int64_t i = 0; i < sums.numel(); i++) {
        const double q =
            std::nearbyint(double(float(sums.get_i64(i)) * multiplier)) + double(y_zero.get_i64(0));
        out.set_i64(i, int64_t(std::clamp(q, is_u8 ? 0.0 : -128.0, is_u8 ? 255.0 : 127.0)));
    }
    return std::vector<HostTensor>{std::move(out)};
}

} // namespace nhc::folding
