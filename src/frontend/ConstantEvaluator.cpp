#include "frontend/ConstantEvaluator.h"

#include "frontend/ConstantEvaluatorSupport.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

namespace nhc {

namespace {

using namespace folding;

// Copies the elements of x selected by a gather along `axis` into a new shape.
HostTensor gather_along(const HostTensor &x, int64_t axis, const std::vector<int64_t> &picks,
                        const Shape &picks_shape) {
    Shape out_shape(x.shape().begin(), x.shape().begin() + axis);
    out_shape.insert(out_shape.end(), picks_shape.begin(), picks_shape.end());
    out_shape.insert(out_shape.end(), x.shape().begin() + axis + 1, x.shape().end());
    HostTensor out(x.dtype(), out_shape);
    int64_t outer = shape_numel(Shape(x.shape().begin(), x.shape().begin() + axis));
    int64_t inner = shape_numel(Shape(x.shape().begin() + axis + 1, x.shape().end()));
    int64_t esize = dtype_size(x.dtype()), dim = x.shape()[axis];
    int64_t o = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int64_t p : picks) {
            std::copy_n(x.bytes().begin() + ((a * dim + p) * inner) * esize, inner * esize,
                        out.mutable_bytes().begin() + o * esize);
            o += inner;
        }
    return out;
}

HostTensor with_shape(const HostTensor &x, const Shape &s) {
    HostTensor out(x.dtype(), s);
    out.mutable_bytes() = x.bytes().to_vector();
    return out;
}

Outputs shape_of(const Ctx &c) {
    return std::vector<HostTensor>{evaluate_shape_query(c.node, c.input(0).shape())};
}

Outputs gather(const Ctx &c) {
    const HostTensor &x = c.input(0), &idx = c.input(1);
    if (x.rank() == 0)
        c.fail("data must have rank >= 1");
    int64_t axis = c.norm_axis(c.attr_int("axis", 0), x.rank());
    int64_t dim = x.shape()[axis];
    std::vector<int64_t> picks = idx.to_i64_vector();
    for (int64_t &p : picks) {
        if (p < -dim || p >= dim)
            c.fail("index " + std::to_string(p) + " is out of range for dimension " +
                   std::to_string(dim));
        if (p < 0)
            p += dim;
    }
    return std::vector<HostTensor>{gather_along(x, axis, picks, idx.shape())};
}

Outputs slice(const Ctx &c) {
    const HostTensor &x = c.input(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (c.opset < 10) {
        starts = c.attr_ints("starts").value_or(std::vector<int64_t>{});
        ends = c.attr_ints("ends").value_or(std::vector<int64_t>{});
        axes = c.attr_ints("axes").value_or(std::vector<int64_t>{});
    } else {
        starts = c.input(1).to_i64_vector();
        ends = c.input(2).to_i64_vector();
        if (c.has_input(3))
            axes = c.input(3).to_i64_vector();
        if (c.has_input(4))
            steps = c.input(4).to_i64_vector();
    }
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); i++)
            axes.push_back(static_cast<int64_t>(i));
    if (steps.empty())
        steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
        c.fail("starts, ends, axes and steps have different lengths");
    HostTensor cur = x;
    for (size_t i = 0; i < starts.size(); i++) {
        int64_t axis = c.norm_axis(axes[i], x.rank()), dim = x.shape()[axis], step = steps[i];
        if (step == 0)
            c.fail("a step is zero");
        int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
        int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
        if (ends[i] <= -(int64_t(1) << 62))
            e = -1; // INT64_MIN sentinel: slice through the start of the axis
        std::vector<int64_t> picks;
        if (step > 0) {
            s = std::clamp(s, int64_t(0), dim);
            e = std::clamp(e, int64_t(0), dim);
            for (int64_t k = s; k < e; k += step)
                picks.push_back(k);
        } else {
            s = std::clamp(s, int64_t(0), dim - 1);
            e = std::clamp(e, int64_t(-1), dim - 1);
            for (int64_t k = s; k > e; k += step)
                picks.push_back(k);
        }
        cur = gather_along(cur, axis, picks, {static_cast<int64_t>(picks.size())});
    }
    return std::vector<HostTensor>{cur};
}

Outputs concat(const Ctx &c) {
    if (c.in.empty())
        c.fail("no inputs");
    const HostTensor &first = c.input(0);
    int64_t axis = c.norm_axis(c.attr_int("axis", 0), first.rank());
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (size_t i = 0; i < c.in.size(); i++) {
        const HostTensor &t = c.input(i);
        if (t.rank() != first.rank() || t.dtype() != first.dtype())
            c.fail("inputs have different ranks or types");
        for (int d = 0; d < t.rank(); d++)
            if (d != axis && t.shape()[d] != first.shape()[d])
                c.fail("input shapes " + shape_str(first.shape()) + " and " + shape_str(t.shape()) +
                       " differ outside the axis");
        out_shape[axis] += t.shape()[axis];
    }
    HostTensor out(first.dtype(), out_shape);
    int64_t outer = shape_numel(Shape(out_shape.begin(), out_shape.begin() + axis));
    int64_t inner = shape_numel(Shape(out_shape.begin() + axis + 1, out_shape.end()));
    int64_t esize = dtype_size(first.dtype()), o = 0;
    for (int64_t a = 0; a < outer; a++)
        for (size_t i = 0; i < c.in.size(); i++) {
            int64_t n = c.input(i).shape()[axis] * inner * esize;
            std::copy_n(c.input(i).bytes().begin() + a * n, n, out.mutable_bytes().begin() + o);
            o += n;
        }
    return std::vector<HostTensor>{std::move(out)};
}

std::vector<int64_t> axes_of(const Ctx &c) {
    if (c.opset >= 13)
        return c.has_input(1) ? c.input(1).to_i64_vector() : std::vector<int64_t>{};
    return c.attr_ints("axes").value_or(std::vector<int64_t>{});
}

Outputs unsqueeze(const Ctx &c) {
    const HostTensor &x = c.input(0);
    std::vector<int64_t> axes = axes_of(c);
    int64_t r = x.rank() + static_cast<int64_t>(axes.size());
    std::vector<bool> inserted(r, false);
    for (int64_t a : axes) {
        int64_t n = c.norm_axis(a, r);
        if (inserted[n])
            c.fail("axis " + std::to_string(a) + " is repeated");
        inserted[n] = true;
    }
    Shape s;
    size_t k = 0;
    for (int64_t i = 0; i < r; i++)
        s.push_back(inserted[i] ? 1 : x.shape()[k++]);
    return std::vector<HostTensor>{with_shape(x, s)};
}

Outputs squeeze(const Ctx &c) {
    const HostTensor &x = c.input(0);
    std::vector<int64_t> axes = axes_of(c);
    std::vector<bool> drop(x.rank(), axes.empty());
    if (axes.empty())
        for (int i = 0; i < x.rank(); i++)
            drop[i] = x.shape()[i] == 1;
    for (int64_t a : axes) {
        int64_t n = c.norm_axis(a, x.rank());
        if (x.shape()[n] != 1)
            c.fail("axis " + std::to_string(a) + " has size " + std::to_string(x.shape()[n]));
        drop[n] = true;
    }
    Shape s;
    for (int i = 0; i < x.rank(); i++)
        if (!drop[i])
            s.push_back(x.shape()[i]);
    return std::vector<HostTensor>{with_shape(x, s)};
}

Outputs reshape(const Ctx &c) {
    const HostTensor &x = c.input(0);
    std::vector<int64_t> target = c.opset < 5
                                      ? c.attr_ints("shape").value_or(std::vector<int64_t>{})
                                      : c.input(1).to_i64_vector();
    bool allowzero = c.attr_int("allowzero", 0) != 0;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < target.size(); i++) {
        if (target[i] == 0 && !allowzero) {
            if (i >= x.shape().size())
                c.fail("a 0 in the target shape has no input dimension to copy");
            target[i] = x.shape()[i];
        }
        if (target[i] == -1) {
            if (infer >= 0)
                c.fail("more than one -1 in the target shape");
            infer = static_cast<int>(i);
        } else if (target[i] < 0) {
            c.fail("negative dimension in the target shape");
        } else {
            known *= target[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || x.numel() % known != 0)
            c.fail("cannot infer the -1 dimension");
        target[infer] = x.numel() / known;
    }
    if (shape_numel(target) != x.numel())
        c.fail("cannot reshape " + shape_str(x.shape()) + " to " + shape_str(target));
    return std::vector<HostTensor>{with_shape(x, target)};
}

Outputs flatten(const Ctx &c) {
    const HostTensor &x = c.input(0);
    int64_t axis = c.attr_int("axis", 1);
    if (axis < 0)
        axis += x.rank();
    if (axis < 0 || axis > x.rank())
        c.fail("axis out of range");
    int64_t outer = shape_numel(Shape(x.shape().begin(), x.shape().begin() + axis));
    return std::vector<HostTensor>{with_shape(x, {outer, x.numel() / std::max<int64_t>(outer, 1)})};
}

Outputs transpose(const Ctx &c) {
    const HostTensor &x = c.input(0);
    std::vector<int64_t> perm = c.attr_ints("perm").value_or(std::vector<int64_t>{});
    if (perm.empty())
        for (int i = x.rank() - 1; i >= 0; i--)
            perm.push_back(i);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); i++)
        if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != x.shape().size())
            c.fail("perm is not a permutation of the axes");
    Shape out_shape;
    for (int64_t p : perm)
        out_shape.push_back(x.shape()[p]);
    HostTensor out(x.dtype(), out_shape);
    std::vector<int64_t> in_st = row_major_strides(x.shape()), idx(perm.size(), 0);
    int64_t esize = dtype_size(x.dtype());
    for (int64_t o = 0; o < out.numel(); o++) {
        int64_t flat = 0;
        for (size_t d = 0; d < perm.size(); d++)
            flat += idx[d] * in_st[perm[d]];
        std::copy_n(x.bytes().begin() + flat * esize, esize,
                    out.mutable_bytes().begin() + o * esize);
        for (int d = static_cast<int>(perm.size()) - 1; d >= 0; d--) {
            if (++idx[d] < out_shape[d])
                break;
            idx[d] = 0;
        }
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs constant_of_shape(const Ctx &c) {
    Shape s = c.input(0).to_i64_vector();
    check_size(c, s);
    if (too_big(s))
        return std::nullopt;
    HostTensor fill(DType::Float32, {1});
    if (const auto *v = c.attr("value"))
        fill = HostTensor::from_onnx(v->t(), c.node.name() + ".value");
    if (fill.numel() != 1)
        c.fail("attribute 'value' must hold one element");
    HostTensor out(fill.dtype(), s);
    int64_t esize = dtype_size(fill.dtype());
    for (int64_t i = 0; i < out.numel(); i++)
        std::copy_n(fill.bytes().begin(), esize, out.mutable_bytes().begin() + i * esize);
    return std::vector<HostTensor>{std::move(out)};
}

Outputs range(const Ctx &c) {
    const HostTensor &start = c.input(0), &limit = c.input(1), &delta = c.input(2);
    double s = start.get_f64(0), l = limit.get_f64(0), d = delta.get_f64(0);
    if (d == 0)
        c.fail("delta is zero");
    double n = std::max(std::ceil((l - s) / d), 0.0);
    if (n > static_cast<double>(kMaxFoldedElements))
        return std::nullopt;
    HostTensor out(start.dtype(), {static_cast<int64_t>(n)});
    for (int64_t i = 0; i < out.numel(); i++) {
        if (dtype_is_float(start.dtype()))
            out.set_f64(i, s + static_cast<double>(i) * d);
        else
            out.set_i64(i, start.get_i64(0) + i * delta.get_i64(0));
    }
    return std::vector<HostTensor>{std::move(out)};
}

/** Hann, Hamming and Blackman windows (ONNX 17): a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),
 *  N = size when periodic (the default), size - 1 when symmetric. They depend only on the size,
 *  so a constant size folds them away. */
Outputs window(const Ctx &c) {
    const std::string &op = c.node.op_type();
    double a0 = 0.5, a1 = 0.5, a2 = 0; // Hann
    if (op == "HammingWindow") {
        a0 = 25.0 / 46.0;
        a1 = 21.0 / 46.0;
    } else if (op == "BlackmanWindow") {
        a0 = 0.42;
        a2 = 0.08;
    }
    int64_t size = c.input(0).get_i64(0);
    if (size < 0)
        c.fail("a negative size");
    if (size > kMaxFoldedElements)
        return std::nullopt;
    std::optional<DType> t = dtype_from_onnx(static_cast<int>(c.attr_int("output_datatype", 1)));
    if (!t)
        c.fail("an output_datatype the graph cannot hold");
    double n_denominator = c.attr_int("periodic", 1) ? double(size) : double(size - 1);
    HostTensor out(*t, {size});
    const double two_pi = 6.283185307179586;
    for (int64_t i = 0; i < size; i++) {
        double x = two_pi * static_cast<double>(i) / n_denominator;
        out.set_f64(i, a0 - a1 * std::cos(x) + a2 * std::cos(2 * x));
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs expand(const Ctx &c) {
    const HostTensor &x = c.input(0);
    Shape target = c.input(1).to_i64_vector();
    Shape out_shape = broadcast_shapes(c, {x.shape(), target});
    if (too_big(out_shape))
        return std::nullopt;
    HostTensor out(x.dtype(), out_shape);
    std::vector<int64_t> map = broadcast_map(x.shape(), out_shape);
    int64_t esize = dtype_size(x.dtype());
    for (int64_t o = 0; o < out.numel(); o++)
        std::copy_n(x.bytes().begin() + map[o] * esize, esize,
                    out.mutable_bytes().begin() + o * esize);
    return std::vector<HostTensor>{std::move(out)};
}

Outputs constant(const Ctx &c) {
    for (const auto &a : c.node.attribute()) {
        const std::string &n = a.name();
        if (n == "value")
            return std::vector<HostTensor>{HostTensor::from_onnx(a.t(), c.node.output(0))};
        if (n == "value_float") {
            HostTensor t(DType::Float32, {});
            t.set_f64(0, a.f());
            return std::vector<HostTensor>{t};
        }
        if (n == "value_int")
            return std::vector<HostTensor>{HostTensor::scalar_i64(a.i())};
        if (n == "value_ints")
            return std::vector<HostTensor>{
                HostTensor::from_i64(std::vector<int64_t>(a.ints().begin(), a.ints().end()))};
        if (n == "value_floats") {
            HostTensor t(DType::Float32, {a.floats_size()});
            for (int i = 0; i < a.floats_size(); i++)
                t.set_f64(i, a.floats(i));
            return std::vector<HostTensor>{t};
        }
    }
    return std::nullopt; // sparse_value, value_string(s): left for the importer to reject
}

using Evaluator = Outputs (*)(const Ctx &);

const std::map<std::string, Evaluator> &evaluators() {
    static const std::map<std::string, Evaluator> table = {
        {"Abs", unary},
        {"Acos", unary},
        {"Acosh", unary},
        {"Add", binary_arith},
        {"And", compare},
        {"ArgMax", arg_extreme},
        {"ArgMin", arg_extreme},
        {"Asin", unary},
        {"Asinh", unary},
        {"Atan", unary},
        {"Atanh", unary},
        {"BitShift", bit_shift},
        {"BlackmanWindow", window},
        {"Cast", cast},
        {"CastLike", cast_like},
        {"Ceil", unary},
        {"Concat", concat},
        {"Constant", constant},
        {"ConstantOfShape", constant_of_shape},
        {"ConvInteger", conv_integer},
        {"Cos", unary},
        {"Cosh", unary},
        {"CumSum", cum_sum},
        {"DFT", dft},
        {"DequantizeLinear", dequantize_linear},
        {"Det", det},
        {"Div", binary_arith},
        {"DynamicQuantizeLinear", dynamic_quantize_linear},
        {"Einsum", einsum},
        {"Equal", compare},
        {"Erf", unary},
        {"Exp", unary},
        {"Expand", expand},
        {"Flatten", flatten},
        {"Floor", unary},
        {"GRU", recurrent},
        {"Gather", gather},
        {"GatherND", gather_nd},
        {"Gemm", gemm},
        {"GlobalLpPool", lp_pool},
        {"Greater", compare},
        {"GreaterOrEqual", compare},
        {"GridSample", grid_sample},
        {"HammingWindow", window},
        {"HannWindow", window},
        {"Identity", unary},
        {"IsNaN", is_nan},
        {"LSTM", recurrent},
        {"Less", compare},
        {"LessOrEqual", compare},
        {"Log", unary},
        {"LogSoftmax", softmax},
        {"LpNormalization", lp_normalization},
        {"LpPool", lp_pool},
        {"MatMul", matmul},
        {"MatMulInteger", matmul_integer},
        {"Max", binary_arith},
        {"MaxRoiPool", max_roi_pool},
        {"MaxUnpool", max_unpool},
        {"MelWeightMatrix", mel_weight_matrix},
        {"Min", binary_arith},
        {"Mod", binary_arith},
        {"Mul", binary_arith},
        {"Neg", unary},
        {"NonMaxSuppression", non_max_suppression},
        {"NonZero", non_zero},
        {"Not", unary},
        {"Or", compare},
        {"Pow", binary_arith},
        {"QLinearConv", qlinear_conv},
        {"QLinearMatMul", qlinear_matmul},
        {"QuantizeLinear", quantize_linear},
        {"RNN", recurrent},
        {"Range", range},
        {"Reciprocal", unary},
        {"ReduceL1", reduce},
        {"ReduceL2", reduce},
        {"ReduceLogSum", reduce},
        {"ReduceLogSumExp", reduce},
        {"ReduceMax", reduce},
        {"ReduceMean", reduce},
        {"ReduceMin", reduce},
        {"ReduceProd", reduce},
        {"ReduceSum", reduce},
        {"ReduceSumSquare", reduce},
        {"Relu", unary},
        {"Reshape", reshape},
        {"ReverseSequence", reverse_sequence},
        {"RoiAlign", roi_align},
        {"Round", unary},
        {"STFT", stft},
        {"ScatterElements", scatter_elements},
        {"Shape", shape_of},
        {"Sigmoid", unary},
        {"Sign", unary},
        {"Sin", unary},
        {"Sinh", unary},
        {"Size", shape_of},
        {"Slice", slice},
        {"Softmax", softmax},
        {"Softplus", unary},
        {"Softsign", unary},
        {"Sqrt", unary},
        {"Squeeze", squeeze},
        {"Sub", binary_arith},
        {"Tan", unary},
        {"Tanh", unary},
        {"TfIdfVectorizer", tf_idf_vectorizer},
        {"TopK", top_k},
        {"Transpose", transpose},
        {"Unique", unique},
        {"Unsqueeze", unsqueeze},
        {"Where", where},
        {"Xor", compare},
    };
    return table;
}

} // namespace

HostTensor evaluate_shape_query(const onnx::NodeProto &node, const Shape &shape) {
    if (node.op_type() == "Size")
        return HostTensor::scalar_i64(shape_numel(shape));
    // Shape-15 takes an optional [start, end) window of the dims, clamped like Slice.
    int64_t r = static_cast<int64_t>(shape.size()), start = 0, end = r;
    for (const auto &a : node.attribute()) {
        if (a.name() == "start")
            start = a.i();
        if (a.name() == "end")
            end = a.i();
    }
    start = std::clamp(start < 0 ? start + r : start, int64_t(0), r);
    end = std::clamp(end < 0 ? end + r : end, int64_t(0), r);
    return HostTensor::from_i64(
        std::vector<int64_t>(shape.begin() + start, shape.begin() + std::max(start, end)));
}

bool can_evaluate(const std::string &op_type) {
    return evaluators().count(op_type) != 0 || op_type == "If" || op_type == "Loop" ||
           op_type == "Scan";
}

std::optional<std::vector<HostTensor>> evaluate_node(const onnx::NodeProto &node,
                                                     const std::vector<const HostTensor *> &inputs,
                                                     int opset) {
    auto it = evaluators().find(node.op_type());
    if (!node.domain().empty() && node.domain() != "ai.onnx")
        return std::nullopt;
    if (it == evaluators().end())
        return std::nullopt;
    // Variadic Min/Max with other than two inputs are left to the graph.
    if ((node.op_type() == "Min" || node.op_type() == "Max") && inputs.size() != 2)
        return std::nullopt;
    Ctx c{node, inputs, opset};
    return it->second(c);
}

} // namespace nhc
