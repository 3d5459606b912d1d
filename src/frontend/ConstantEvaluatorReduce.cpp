/** \file
 * Host evaluators of reductions along axes (ONNX Operators.md, opset 17 and ReduceSum's axes
 * input of opset 13): the Reduce* family, Softmax and LogSoftmax, ArgMax and ArgMin. The device
 * runs them on float32 and 16-bit floats; these fold constants and run them in a host segment
 * where the device cannot (a float64 segment: driver/HostPartition.h). Floats are summed in
 * double and rounded once into the output's type; integer Sum, Prod, Max, Min, L1 and SumSquare
 * in int64.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace nhc::folding {

namespace {

/** Which dims of x a node reduces, and the offsets that walk them. */
struct ReducedAxes {
    std::vector<bool> reduced;    ///< per dim of x
    std::vector<int64_t> strides; ///< x's, row-major
    Shape kept_shape;             ///< x's shape with the reduced dims removed
    Shape out_shape;              ///< as the node's keepdims says
    std::vector<int64_t> offsets; ///< flat offsets of one output's inputs from its first
};

/** The flat offsets of every index of `dims` (extents and strides), the last dim fastest. */
std::vector<int64_t> walk_offsets(const std::vector<int64_t> &extents,
                                  const std::vector<int64_t> &strides) {
    std::vector<int64_t> offsets{0};
    for (size_t d = 0; d < extents.size(); d++) {
        std::vector<int64_t> next;
        next.reserve(offsets.size() * size_t(extents[d]));
        for (int64_t base : offsets)
            for (int64_t i = 0; i < extents[d]; i++)
                next.push_back(base + i * strides[d]);
        offsets = std::move(next);
    }
    return offsets;
}

ReducedAxes reduced_axes(const Ctx &c, const Shape &x, const std::vector<int64_t> &axes,
                         bool keepdims) {
    const int64_t rank = int64_t(x.size());
    ReducedAxes r;
    r.reduced.assign(x.size(), axes.empty());
    for (int64_t a : axes)
        r.reduced[size_t(c.norm_axis(a, rank))] = true;
    r.strides = row_major_strides(x);
    std::vector<int64_t> extents, steps;
    for (size_t d = 0; d < x.size(); d++) {
        if (r.reduced[d]) {
            extents.push_back(x[d]);
            steps.push_back(r.strides[d]);
            if (keepdims)
                r.out_shape.push_back(1);
        } else {
            r.kept_shape.push_back(x[d]);
            r.out_shape.push_back(x[d]);
        }
    }
    r.offsets = walk_offsets(extents, steps);
    return r;
}

/** The flat offset in x of output element `o`'s first input (o indexes kept_shape). */
int64_t first_input(const Shape &x, const ReducedAxes &r, int64_t o) {
    int64_t at = 0;
    for (size_t d = x.size(); d-- > 0;) {
        if (r.reduced[d])
            continue;
        at += (o % x[d]) * r.strides[d];
        o /= x[d];
    }
    return at;
}

/** The axes a Reduce node names: its axes input (ReduceSum from opset 13, every one from 18)
 *  or attribute; nullopt when it names none and asks for no reduction then. */
std::optional<std::vector<int64_t>> axes_of(const Ctx &c) {
    std::vector<int64_t> axes;
    if (c.has_input(1))
        axes = c.input(1).to_i64_vector();
    else if (auto a = c.attr_ints("axes"))
        axes = *a;
    if (axes.empty() && c.attr_int("noop_with_empty_axes", 0) != 0)
        return std::nullopt;
    return axes;
}

double reduce_float(const std::string &op, const HostTensor &x, int64_t first,
                    const std::vector<int64_t> &offsets) {
    auto at = [&](int64_t k) { return x.get_f64(first + offsets[size_t(k)]); };
    const int64_t n = int64_t(offsets.size());
    if (op == "ReduceMax" || op == "ReduceMin") {
        const bool max = op == "ReduceMax";
        double best = max ? -INFINITY : INFINITY;
        for (int64_t k = 0; k < n; k++)
            best = std::isnan(at(k)) || std::isnan(best) ? NAN
                   : max                                 ? std::max(best, at(k))
                                                         : std::min(best, at(k));
        return best;
    }
    if (op == "ReduceProd") {
        double p = 1;
        for (int64_t k = 0; k < n; k++)
            p *= at(k);
        return p;
    }
    if (op == "ReduceLogSumExp") {
        double m = -INFINITY;
        for (int64_t k = 0; k < n; k++)
            m = std::max(m, at(k));
        if (!std::isfinite(m))
            return m;
        double sum = 0;
        for (int64_t k = 0; k < n; k++)
            sum += std::exp(at(k) - m);
        return m + std::log(sum);
    }
    double sum = 0;
    for (int64_t k = 0; k < n; k++) {
        const double v = at(k);
        sum += op == "ReduceL1"                              ? std::fabs(v)
               : op == "ReduceL2" || op == "ReduceSumSquare" ? v * v
                                                             : v;
    }
    if (op == "ReduceMean")
        return sum / double(n);
    if (op == "ReduceL2")
        return std::sqrt(sum);
    if (op == "ReduceLogSum")
        return std::log(sum);
    return sum; // ReduceSum, ReduceL1, ReduceSumSquare
}

/** An integer reduction in int64; nullopt for those computed in double (Mean, L2, the logs). */
std::optional<int64_t> reduce_integer(const std::string &op, const HostTensor &x, int64_t first,
                                      const std::vector<int64_t> &offsets) {
    auto at = [&](size_t k) { return x.get_i64(first + offsets[k]); };
    if (op == "ReduceMax" || op == "ReduceMin") {
        int64_t best = op == "ReduceMax" ? std::numeric_limits<int64_t>::min()
                                         : std::numeric_limits<int64_t>::max();
        for (size_t k = 0; k < offsets.size(); k++)
            best = op == "ReduceMax" ? std::max(best, at(k)) : std::min(best, at(k));
        return best;
    }
    if (op != "ReduceSum" && op != "ReduceProd" && op != "ReduceL1" && op != "ReduceSumSquare")
        return std::nullopt;
    int64_t acc = op == "ReduceProd" ? 1 : 0;
    for (size_t k = 0; k < offsets.size(); k++) {
        const int64_t v = at(k);
        acc = op == "ReduceProd"        ? acc * v
              : op == "ReduceL1"        ? acc + (v < 0 ? -v : v)
              : op == "ReduceSumSquare" ? acc + v * v
                                        : acc + v;
    }
    return acc;
}

} // namespace

Outputs reduce(const Ctx &c) {
    const HostTensor &x = c.input(0);
    const std::string &op = c.node.op_type();
    const std::optional<std::vector<int64_t>> axes = axes_of(c);
    if (!axes)
        return std::vector<HostTensor>{x};
    const ReducedAxes r = reduced_axes(c, x.shape(), *axes, c.attr_int("keepdims", 1) != 0);
    HostTensor out(x.dtype(), r.out_shape);
    const bool is_float = dtype_is_float(x.dtype());
    for (int64_t o = 0; o < out.numel(); o++) {
        const int64_t first = first_input(x.shape(), r, o);
        std::optional<int64_t> exact =
            is_float ? std::nullopt : reduce_integer(op, x, first, r.offsets);
        if (exact)
            out.set_i64(o, *exact);
        else
            out.set_f64(o, reduce_float(op, x, first, r.offsets));
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs softmax(const Ctx &c) {
    const HostTensor &x = c.input(0);
    const int64_t rank = x.rank();
    if (!dtype_is_float(x.dtype()))
        c.fail(std::string("the input is ") + dtype_name(x.dtype()) + ", not a float type");
    // Opset 13 normalises along one axis (default -1); before it, over every dim from `axis`
    // (default 1) on, the input seen as a matrix.
    const bool one_axis = c.opset >= 13;
    const int64_t axis =
        c.norm_axis(c.attr_int("axis", one_axis ? -1 : 1), std::max<int64_t>(rank, 1));
    std::vector<int64_t> axes;
    for (int64_t d = axis; d < (one_axis ? axis + 1 : rank); d++)
        axes.push_back(d);
    const ReducedAxes r = reduced_axes(c, x.shape(), axes, true);
    const bool log = c.node.op_type() == "LogSoftmax";
    HostTensor out(x.dtype(), x.shape());
    for (int64_t o = 0; o < shape_numel(r.kept_shape); o++) {
        const int64_t first = first_input(x.shape(), r, o);
        double m = -INFINITY, sum = 0;
        for (int64_t k : r.offsets)
            m = std::max(m, x.get_f64(first + k));
        for (int64_t k : r.offsets)
            sum += std::exp(x.get_f64(first + k) - m);
        for (int64_t k : r.offsets) {
            const double shifted = x.get_f64(first + k) - m;
            out.set_f64(first + k, log ? shifted - std::log(sum) : std::exp(shifted) / sum);
        }
    }
    return std::vector<HostTensor>{std::move(out)};
}

Outputs arg_extreme(const Ctx &c) {
    const HostTensor &x = c.input(0);
    const bool max = c.node.op_type() == "ArgMax";
    const bool last = c.attr_int("select_last_index", 0) != 0;
    const int64_t axis = c.norm_axis(c.attr_int("axis", 0), std::max<int64_t>(x.rank(), 1));
    const ReducedAxes r = reduced_axes(c, x.shape(), {axis}, c.attr_int("keepdims", 1) != 0);
    HostTensor out(DType::Int64, r.out_shape);
    const bool is_float = dtype_is_float(x.dtype());
    for (int64_t o = 0; o < out.numel(); o++) {
        const int64_t first = first_input(x.shape(), r, o);
        int64_t best = 0;
        for (int64_t k = 1; k < int64_t(r.offsets.size()); k++) {
            const int64_t a = first + r.offsets[size_t(k)], b = first + r.offsets[size_t(best)];
            // Compared exactly: int64 as int64, floats as doubles.
            const bool above = is_float ? x.get_f64(a) > x.get_f64(b) : x.get_i64(a) > x.get_i64(b);
            const bool below = is_float ? x.get_f64(a) < x.get_f64(b) : x.get_i64(a) < x.get_i64(b);
            const bool better = max ? above : below;
            const bool tie = !above && !below;
            if (better || (tie && last))
                best = k;
        }
        out.set_i64(o, best);
    }
    return std::vector<HostTensor>{std::move(out)};
}

} // namespace nhc::folding
