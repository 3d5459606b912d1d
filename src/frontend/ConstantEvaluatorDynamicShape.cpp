/** \file
 * Host evaluators of operators whose output shape depends on their input's values: NonZero and
 * Unique (ONNX Operators.md, opsets 13-17). The device cannot run them (a NEFF's tensors have
 * fixed shapes), so they fold when their inputs are constants and otherwise run in a host
 * segment (driver/HostPartition.h), as NonMaxSuppression does.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace nhc::folding {

namespace {

/** An element as a comparable number: floats by value, integers exactly. NaNs are equal to each
 *  other and after every number, so that the order is total (a std::map key). */
struct Element {
    bool is_float;
    double f;
    int64_t i;
    bool operator<(const Element &o) const {
        if (!is_float)
            return i < o.i;
        return std::isnan(f) ? false : std::isnan(o.f) || f < o.f;
    }
    bool operator==(const Element &o) const {
        return is_float ? f == o.f || (std::isnan(f) && std::isnan(o.f)) : i == o.i;
    }
};

Element element(const HostTensor &t, int64_t at) {
    bool is_float = dtype_is_float(t.dtype());
    return {is_float, is_float ? t.get_f64(at) : 0.0, is_float ? 0 : t.get_i64(at)};
}

} // namespace

Outputs non_zero(const Ctx &c) {
    const HostTensor &x = c.input(0);
    std::vector<int64_t> strides = row_major_strides(x.shape());
    std::vector<int64_t> found;
    for (int64_t i = 0; i < x.numel(); i++)
        if (!(element(x, i) == Element{dtype_is_float(x.dtype()), 0.0, 0}))
            found.push_back(i);
    const int64_t rank = x.rank(), count = int64_t(found.size());
    HostTensor out(DType::Int64, {rank, count});
    for (int64_t n = 0; n < count; n++)
        for (int64_t d = 0; d < rank; d++) // the flat index's coordinate along d
            out.set_i64(d * count + n, (found[size_t(n)] / strides[size_t(d)]) % x.shape()[d]);
    return std::vector<HostTensor>{out};
}

Outputs unique(const Ctx &c) {
    const HostTensor &x = c.input(0);
    const auto *axis_attr = c.attr("axis");
    // Without an axis the flattened tensor, whose slices are its elements.
    const Shape shape = axis_attr ? x.shape() : Shape{x.numel()};
    const int64_t axis = axis_attr ? c.norm_axis(axis_attr->i(), x.rank()) : 0;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < int64_t(shape.size()); d++) {
        if (d < axis)
            outer *= shape[size_t(d)];
        else if (d > axis)
            inner *= shape[size_t(d)];
    }
    const int64_t length = shape[size_t(axis)];
    // Slice s: the elements (o, s, i) for every outer o and inner i, in that order.
    auto slice = [&](int64_t s) {
        std::vector<Element> v;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++)
                v.push_back(element(x, (o * length + s) * inner + i));
        return v;
    };
    // Each slice's first occurrence; the distinct ones in order of occurrence, then sorted.
    std::vector<std::vector<Element>> slices;
    std::map<std::vector<Element>, int64_t> first_of;
    std::vector<int64_t> firsts, first_of_slice;
    for (int64_t s = 0; s < length; s++) {
        slices.push_back(slice(s));
        auto [it, added] = first_of.emplace(slices.back(), s);
        if (added)
            firsts.push_back(s);
        first_of_slice.push_back(it->second);
    }
    if (c.attr_int("sorted", 1) != 0)
        std::stable_sort(firsts.begin(), firsts.end(), [&](int64_t a, int64_t b) {
            return slices[size_t(a)] < slices[size_t(b)];
        });
    const int64_t kept = int64_t(firsts.size());
    Shape y_shape = shape;
    y_shape[size_t(axis)] = kept;
    HostTensor y(x.dtype(), y_shape), indices(DType::Int64, {kept}),
        inverse(DType::Int64, {length}), counts(DType::Int64, {kept});
    for (int64_t k = 0; k < kept; k++) {
        const int64_t s = firsts[size_t(k)];
        indices.set_i64(k, s);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
                const int64_t from = (o * length + s) * inner + i, to = (o * kept + k) * inner + i;
                if (dtype_is_float(x.dtype()))
                    y.set_f64(to, x.get_f64(from));
                else
                    y.set_i64(to, x.get_i64(from));
            }
        int64_t n = 0;
        for (int64_t t = 0; t < length; t++)
            if (first_of_slice[size_t(t)] == s) {
                inverse.set_i64(t, k);
                n++;
            }
        counts.set_i64(k, n);
    }
    return std::vector<HostTensor>{y, indices, inverse, counts};
}

} // namespace nhc::folding
