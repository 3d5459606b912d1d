/** \file
 * Host evaluators of QuantizeLinear and DequantizeLinear (ONNX Operators.md, opset 13: a scale
 * and zero point per tensor, or per slice along `axis`) and DynamicQuantizeLinear (opset 11: the
 * uint8 scale and zero point of its input's range, and the input quantized with them). The device
 * does not run them; on constants they fold (a quantized weight with its DequantizeLinear becomes a
 * float weight the device reads), elsewhere they run in a host segment (driver/HostPartition.h).
 *
 * Arithmetic follows the operator's definition in float32, as ONNX's reference and ONNX Runtime
 * compute it: QuantizeLinear divides a float32 x by its scale in float32 (an int32 x in double,
 * as NumPy promotes it), rounds half to even and saturates into uint8 or int8; DequantizeLinear
 * subtracts the zero point in the integers and multiplies by the scale in float32.
 */

#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace nhc::folding {

namespace {

/** For each element of x, the index of its scale and zero point: 0 when they are a scalar or a
 *  vector of one element (per tensor, as ONNX Runtime takes both), else its coordinate along
 *  `axis`; NHC_EFLD001 when the scale's shape suits neither. */
std::vector<int64_t> parameter_index(const Ctx &c, const HostTensor &x, const HostTensor &scale,
                                     const HostTensor *zero_point) {
    if (zero_point && zero_point->shape() != scale.shape())
        c.fail("the zero point's shape " + shape_str(zero_point->shape()) + " is not the scale's " +
               shape_str(scale.shape()));
    std::vector<int64_t> index(size_t(x.numel()), 0);
    if (scale.rank() == 0 || (scale.rank() == 1 && scale.numel() == 1))
        return index;
    const int64_t axis = c.norm_axis(c.attr_int("axis", 1), x.rank());
    const int64_t extent = x.shape()[size_t(axis)];
    if (scale.rank() != 1 || scale.numel() != extent)
        c.fail("the scale's shape " + shape_str(scale.shape()) + " is neither a scalar nor [" +
               std::to_string(extent) + "] along axis " + std::to_string(axis) +
               " of an input of shape " + shape_str(x.shape()));
    const int64_t inner = row_major_strides(x.shape())[size_t(axis)];
    for (int64_t i = 0; i < x.numel(); i++)
        index[size_t(i)] = (i / inner) % extent;
    return index;
}

} // namespace

Outputs quantize_linear(const Ctx &c) {
    const HostTensor &x = c.input(0), &scale = c.input(1);
    const HostTensor *zero_point = c.optional_input(2);
    const DType to = zero_point ? zero_point->dtype() : DType::UInt8;
    if (to != DType::UInt8 && to != DType::Int8)
        c.fail(std::string("the zero point is ") + dtype_name(to) + ", not u8 or i8");
    const double low = to == DType::UInt8 ? 0 : -128, high = to == DType::UInt8 ? 255 : 127;
    const std::vector<int64_t> at = parameter_index(c, x, scale, zero_point);
    const bool in_float32 = x.dtype() == DType::Float32;
    HostTensor y(to, x.shape());
    for (int64_t i = 0; i < x.numel(); i++) {
        const int64_t p = at[size_t(i)];
        const double q = in_float32 ? double(float(x.get_f64(i)) / float(scale.get_f64(p)))
                                    : x.get_f64(i) / scale.get_f64(p);
        const double zp = zero_point ? double(zero_point->get_i64(p)) : 0.0;
        // nearbyint rounds half to even in the default rounding mode. A NaN has no integer to
        // round to (the operator leaves it undefined): refused.
        if (std::isnan(q))
            c.fail("element " + std::to_string(i) + " divided by its scale is NaN");
        y.set_i64(i, int64_t(std::clamp(std::nearbyint(q) + zp, low, high)));
    }
    return std::vector<HostTensor>{std::move(y)};
}

Outputs dequantize_linear(const Ctx &c) {
    const HostTensor &x = c.input(0), &scale = c.input(1);
    const HostTensor *zero_point = c.optional_input(2);
    if (dtype_is_float(x.dtype()))
        c.fail(std::string("the input is ") + dtype_name(x.dtype()) + ", not an integer type");
    const std::vector<int64_t> at = parameter_index(c, x, scale, zero_point);
    HostTensor y(DType::Float32, x.shape());
    for (int64_t i = 0; i < x.numel(); i++) {
        const int64_t p = at[size_t(i)];
        const int64_t centred = x.get_i64(i) - (zero_point ? zero_point->get_i64(p) : 0);
        y.set_f64(i, double(float(centred) * float(scale.get_f64(p))));
    }
    return std::vector<HostTensor>{std::move(y)};
}

Outputs dynamic_quantize_linear(const Ctx &c) {
    const HostTensor &x = c.input(0);
    if (x.dtype() != DType::Float32)
        c.fail(std::string("the input is ") + dtype_name(x.dtype()) + ", not f32");
    // The range always holds 0 (so that 0 is exact); its scale spreads it over 0..255, in float32.
    float low = 0, high = 0;
    for (int64_t i = 0; i < x.numel(); i++) {
        const float v = float(x.get_f64(i));
        if (std::isnan(v))
            c.fail("element " + std::to_string(i) + " is NaN");
        low = std::min(low, v);
        high = std::max(high, v);
    }
    const float scale = (high - low) / 255.0f;
    // An all-zero input has no range: scale 0, zero point 0 and every element 0 (which
    // DequantizeLinear gives back exactly).
    const double zero_point =
        scale == 0 ? 0.0 : std::clamp(std::nearbyint(double(-low / scale)), 0.0, 255.0);
    HostTensor y(DType::UInt8, x.shape()), y_scale(DType::Float32, {}), y_zero(DType::UInt8, {});
    for (int64_t i = 0; i < x.numel(); i++) {
        const double q = scale == 0 ? 0.0 : std::nearbyint(double(float(x.get_f64(i)) / scale));
        y.set_i64(i, int64_t(std::clamp(q + zero_point, 0.0, 255.0)));
    }
    y_scale.set_f64(0, scale);
    y_zero.set_i64(0, int64_t(zero_point));
    return std::vector<HostTensor>{std::move(y), std::move(y_scale), std::move(y_zero)};
}

} // namespace nhc::folding
