#include "graph/HostTensor.h"

#include "support/Error.h"
#include "support/SmallFloat.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <onnx/onnx_pb.h>
#include <tuple>

namespace nhc {

int64_t shape_numel(const Shape &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

std::optional<int64_t> checked_numel(const Shape &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
        if (__builtin_mul_overflow(n, d, &n))
            return std::nullopt;
    return n;
}

std::string shape_str(const Shape &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); i++)
        s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}

std::optional<Shape> numpy_broadcast(const std::vector<Shape> &shapes) {
    size_t rank = 0;
    for (const Shape &s : shapes)
        rank = std::max(rank, s.size());
    Shape out(rank, 1);
    for (const Shape &s : shapes)
        for (size_t i = 0; i < s.size(); i++) {
            int64_t &o = out[rank - s.size() + i];
            if (s[i] == o || s[i] == 1)
                continue;
            if (o != 1)
                return std::nullopt;
            o = s[i];
        }
    return out;
}

std::string shapes_str(const std::vector<Shape> &shapes) {
    std::string s;
    for (const Shape &shape : shapes)
        s += (s.empty() ? "" : ", ") + shape_str(shape);
    return s;
}

HostTensor::HostTensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
    for (int64_t d : shape_)
        nhc_assert(d >= 0, "negative dimension in host tensor shape " << shape_str(shape_));
    bytes_.assign(static_cast<size_t>(numel()) * dtype_size(dtype_), 0);
}

std::vector<uint8_t> &HostTensor::mutable_bytes() {
    if (pending_) {
        ByteView made = pending_bytes();
        bytes_.assign(made.begin(), made.end());
        pending_.reset();
    }
    if (view_) {
        bytes_.assign(view_, view_ + view_size_);
        view_ = nullptr;
        view_size_ = 0;
        keeper_.reset();
    }
    return bytes_;
}

HostTensor HostTensor::viewing(DType dtype, Shape shape, ByteView bytes,
                               std::shared_ptr<const void> keeper) {
    HostTensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    nhc_assert(bytes.size() == size_t(t.numel()) * dtype_size(dtype),
               "a view of " << bytes.size() << " bytes for a tensor of shape "
                            << shape_str(t.shape_));
    nhc_assert(keeper, "a view needs an owner of its bytes");
    t.view_ = bytes.data();
    t.view_size_ = bytes.size();
    t.keeper_ = std::move(keeper);
    return t;
}

float half_to_float(uint16_t h) {
    uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        if (mant == 0)
            bits = sign;
        else { // subnormal half: value = mant * 2^-24, exact in float
            float f = std::ldexp(static_cast<float>(mant), -24);
            return sign ? -f : f;
        }
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u) // NaN: keep it quiet
        return sign | 0x7e00u;
    if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to infinity
        return sign | 0x7c00u;
    if (absx < 0x38800000u) { // below the smallest normal half (2^-14): subnormal or zero
        float a;
        std::memcpy(&a, &absx, 4);
        // Scale so that one half-subnormal ulp is 1.0; nearbyint rounds to nearest even.
        return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
    }
    uint32_t mant_rounded = absx + 0xfffu + ((absx >> 13) & 1u); // RNE on the 13 dropped bits
    return sign | static_cast<uint16_t>((mant_rounded - 0x38000000u) >> 13);
}

float bf16_to_float(uint16_t b) {
    uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

/** fp32 with the 13 low mantissa bits rounded off (RNE): the tf32 value, still 4 bytes. */
float round_to_tf32(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(f))
        return f;
    u += 0xfff + ((u >> 13) & 1);
    u &= ~0x1fffu;
    std::memcpy(&f, &u, 4);
    return f;
}

uint16_t float_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return static_cast<uint16_t>((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
}

template <typename T>
static T load(const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <typename T>
static void store(uint8_t *p, T v) {
    std::memcpy(p, &v, sizeof(T));
}

double HostTensor::get_f64(int64_t i) const {
    nhc_assert(i >= 0 && i < numel(), "element " << i << " out of range");
    const uint8_t *p = bytes().data() + i * dtype_size(dtype_);
    switch (dtype_) {
    case DType::Float32:
    case DType::TFloat32:
        return load<float>(p);
    case DType::Float16:
        return half_to_float(load<uint16_t>(p));
    case DType::BFloat16:
        return bf16_to_float(load<uint16_t>(p));
    case DType::Float8E4M3:
        return fp8e4m3_to_f32(*p);
    case DType::Float64:
        return load<double>(p);
    case DType::Int8:
        return load<int8_t>(p);
    case DType::Int16:
        return load<int16_t>(p);
    case DType::Int32:
        return load<int32_t>(p);
    case DType::Int64:
        return static_cast<double>(load<int64_t>(p));
    case DType::UInt8:
        return load<uint8_t>(p);
    case DType::UInt16:
        return load<uint16_t>(p);
    case DType::UInt32:
        return load<uint32_t>(p);
    case DType::UInt64:
        return static_cast<double>(load<uint64_t>(p));
    case DType::Bool:
        return load<uint8_t>(p) ? 1.0 : 0.0;
    }
    nhc_assert(false, "unknown dtype");
}

int64_t HostTensor::get_i64(int64_t i) const {
    nhc_assert(i >= 0 && i < numel(), "element " << i << " out of range");
    const uint8_t *p = bytes().data() + i * dtype_size(dtype_);
    switch (dtype_) {
    case DType::Int8:
        return load<int8_t>(p);
    case DType::Int16:
        return load<int16_t>(p);
    case DType::Int32:
        return load<int32_t>(p);
    case DType::Int64:
        return load<int64_t>(p);
    case DType::UInt8:
        return load<uint8_t>(p);
    case DType::UInt16:
        return load<uint16_t>(p);
    case DType::UInt32:
        return load<uint32_t>(p);
    case DType::UInt64:
        return static_cast<int64_t>(load<uint64_t>(p));
    case DType::Bool:
        return load<uint8_t>(p) ? 1 : 0;
    default: {
        double v = get_f64(i);
        // Float -> integer follows C truncation; out-of-range and NaN clamp instead of UB.
        if (std::isnan(v))
            return 0;
        if (v >= 9.2233720368547758e18)
            return std::numeric_limits<int64_t>::max();
        if (v <= -9.2233720368547758e18)
            return std::numeric_limits<int64_t>::min();
        return static_cast<int64_t>(v);
    }
    }
}

void HostTensor::set_f64(int64_t i, double v) {
    nhc_assert(i >= 0 && i < numel(), "element " << i << " out of range");
    uint8_t *p = mutable_bytes().data() + i * dtype_size(dtype_);
    switch (dtype_) {
    case DType::Float32:
        store<float>(p, static_cast<float>(v));
        return;
    case DType::TFloat32:
        store<float>(p, round_to_tf32(static_cast<float>(v)));
        return;
    case DType::Float16:
        store<uint16_t>(p, float_to_half(static_cast<float>(v)));
        return;
    case DType::BFloat16:
        store<uint16_t>(p, float_to_bf16(static_cast<float>(v)));
        return;
    case DType::Float8E4M3:
        *p = f32_to_fp8e4m3(static_cast<float>(v));
        return;
    case DType::Float64:
        store<double>(p, v);
        return;
    case DType::Bool:
        store<uint8_t>(p, v != 0.0);
        return;
    default: {
        // Mirrors get_i64's clamping for float -> integer.
        int64_t iv = std::isnan(v)                 ? 0
                     : v >= 9.2233720368547758e18  ? std::numeric_limits<int64_t>::max()
                     : v <= -9.2233720368547758e18 ? std::numeric_limits<int64_t>::min()
                                                   : static_cast<int64_t>(v);
        set_i64(i, iv);
    }
    }
}

namespace {

/** fp32 to bf16, rounded to nearest even, NaN kept quiet: float_to_bf16 without its branches
 *  on the rounding (weights are hundreds of millions of elements a compile). GCC's -O2 keeps
 *  the loop below scalar; a vectorised one measured no faster here (64 Mi elements: 0.13 s
 *  either way, about 3 GB/s: bound by memory, not by the arithmetic). */
inline uint16_t bf16_bits(uint32_t x) {
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = (x >> 16) | 0x40u;
    return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

template <typename Out, typename Convert>
void convert_floats(const uint8_t *src, uint8_t *dst, int64_t n, Convert convert) {
    for (int64_t i = 0; i < n; i++)
        store<Out>(dst + sizeof(Out) * size_t(i), convert(load<uint32_t>(src + 4 * size_t(i))));
}

float as_float(uint32_t x) {
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

bool converts_from_float32(DType to) {
    return to == DType::BFloat16 || to == DType::Float16 || to == DType::TFloat32 ||
           to == DType::Float32;
}

/** Converts `n` float32 elements at `src` to `to` (converts_from_float32) at `dst`. */
void convert_float32(const uint8_t *src, uint8_t *dst, int64_t n, DType to) {
    switch (to) {
    case DType::BFloat16:
        return convert_floats<uint16_t>(src, dst, n, bf16_bits);
    case DType::Float16:
        return convert_floats<uint16_t>(src, dst, n,
                                        [](uint32_t x) { return float_to_half(as_float(x)); });
    case DType::TFloat32:
        return convert_floats<float>(src, dst, n,
                                     [](uint32_t x) { return round_to_tf32(as_float(x)); });
    default:
        nhc_assert(to == DType::Float32, "no float32 conversion to " << dtype_name(to));
        return convert_floats<float>(src, dst, n, as_float);
    }
}

} // namespace

HostTensor HostTensor::converted(DType to) const {
    HostTensor out(to, shape_);
    const int64_t n = numel();
    if (dtype_ == DType::Float32 && converts_from_float32(to)) {
        convert_float32(bytes().data(), out.bytes_.data(), n, to);
        return out;
    }
    for (int64_t i = 0; i < n; i++)
        out.set_f64(i, get_f64(i));
    return out;
}

double HostTensor::largest_magnitude() const {
    double largest = 0.0;
    if (dtype_ == DType::Float32 && !conversion_pending()) {
        const ByteView b = bytes();
        float largest_f32 = 0.0f;
        for (size_t i = 0, n = size_t(numel()); i < n; i++) {
            float x;
            std::memcpy(&x, b.data() + 4 * i, 4);
            largest_f32 = std::fmax(largest_f32, std::fabs(x)); // fmax drops a NaN
        }
        return largest_f32;
    }
    for (int64_t i = 0, n = numel(); i < n; i++)
        largest = std::fmax(largest, std::fabs(get_f64(i)));
    return largest;
}

/** A conversion converted_when_read left to its first reader: shared by the tensor's copies,
 *  made once (`made` tells read_bytes without taking the once-flag). */
struct HostTensor::PendingConversion {
    std::shared_ptr<const HostTensor> source;
    std::once_flag once;
    std::atomic<bool> made{false};
    HostTensor result;
};

HostTensor HostTensor::converted_when_read(std::shared_ptr<const HostTensor> source, DType to) {
    nhc_assert(source, "a conversion of no tensor");
    if (source->dtype_ != DType::Float32 || !converts_from_float32(to))
        return source->converted(to);
    HostTensor t;
    t.dtype_ = to;
    t.shape_ = source->shape_;
    t.pending_ = std::make_shared<PendingConversion>();
    t.pending_->source = std::move(source);
    return t;
}

bool HostTensor::conversion_pending() const {
    return pending_ && !pending_->made.load(std::memory_order_acquire);
}

ByteView HostTensor::pending_bytes() const {
    PendingConversion &p = *pending_;
    std::call_once(p.once, [&] {
        // The source stays: a read_bytes that saw the conversion pending may still be reading it.
        p.result = p.source->converted(dtype_);
        p.made.store(true, std::memory_order_release);
    });
    return p.result.bytes();
}

void HostTensor::read_bytes(size_t offset, size_t size, uint8_t *dst) const {
    const size_t elem = dtype_size(dtype_);
    nhc_assert(offset + size <= size_t(numel()) * elem,
               "bytes " << offset << "+" << size << " of a tensor of shape " << shape_str(shape_));
    if (!conversion_pending()) {
        std::memcpy(dst, bytes().data() + offset, size);
        return;
    }
    // The elements that cover the range, converted from the source: straight into `dst` when
    // the range is whole elements, else through a buffer of them.
    const size_t first = offset / elem, end = (offset + size + elem - 1) / elem;
    const uint8_t *src = pending_->source->bytes().data() + 4 * first;
    if (offset % elem == 0 && size % elem == 0) {
        convert_float32(src, dst, int64_t(end - first), dtype_);
        return;
    }
    std::vector<uint8_t> whole((end - first) * elem);
    convert_float32(src, whole.data(), int64_t(end - first), dtype_);
    std::memcpy(dst, whole.data() + offset % elem, size);
}

void HostTensor::set_i64(int64_t i, int64_t v) {
    nhc_assert(i >= 0 && i < numel(), "element " << i << " out of range");
    uint8_t *p = mutable_bytes().data() + i * dtype_size(dtype_);
    switch (dtype_) {
    case DType::Int8:
        store<int8_t>(p, static_cast<int8_t>(v));
        return;
    case DType::Int16:
        store<int16_t>(p, static_cast<int16_t>(v));
        return;
    case DType::Int32:
        store<int32_t>(p, static_cast<int32_t>(v));
        return;
    case DType::Int64:
        store<int64_t>(p, v);
        return;
    case DType::UInt8:
        store<uint8_t>(p, static_cast<uint8_t>(v));
        return;
    case DType::UInt16:
        store<uint16_t>(p, static_cast<uint16_t>(v));
        return;
    case DType::UInt32:
        store<uint32_t>(p, static_cast<uint32_t>(v));
        return;
    case DType::UInt64:
        store<uint64_t>(p, static_cast<uint64_t>(v));
        return;
    case DType::Bool:
        store<uint8_t>(p, v != 0);
        return;
    default:
        set_f64(i, static_cast<double>(v));
    }
}

std::vector<int64_t> HostTensor::to_i64_vector() const {
    std::vector<int64_t> out(static_cast<size_t>(numel()));
    for (int64_t i = 0; i < numel(); i++)
        out[i] = get_i64(i);
    return out;
}

HostTensor HostTensor::from_i64(const std::vector<int64_t> &values, DType dtype) {
    HostTensor t(dtype, {static_cast<int64_t>(values.size())});
    for (size_t i = 0; i < values.size(); i++)
        t.set_i64(static_cast<int64_t>(i), values[i]);
    return t;
}

HostTensor HostTensor::scalar_i64(int64_t v, DType dtype) {
    HostTensor t(dtype, {});
    t.set_i64(0, v);
    return t;
}

namespace {

// Copies the typed repeated field of a TensorProto into the tensor, element by element.
template <typename Field, typename Setter>
void copy_typed(const Field &field, HostTensor &t, const std::string &what, Setter set) {
    if (field.size() != t.numel())
        user_error("NHC_EONX007", "tensor '", what, "' has ", field.size(),
                   " stored elements but its shape ", shape_str(t.shape()), " needs ", t.numel());
    for (int64_t i = 0; i < t.numel(); i++)
        set(i, field.Get(static_cast<int>(i)));
}

} // namespace

namespace {

/** The element type and shape `proto` declares, checked (NHC_EDTY001, NHC_EONX007, NHC_EMOD026). */
std::pair<DType, Shape> declared_type(const onnx::TensorProto &proto, const std::string &what) {
    std::optional<DType> dt = dtype_from_onnx(proto.data_type());
    if (!dt)
        user_error("NHC_EDTY001", "tensor '", what, "' has element type ",
                   onnx_elem_type_name(proto.data_type()),
                   "; expected a numeric or bool type (string and complex are not supported)");
    Shape shape(proto.dims().begin(), proto.dims().end());
    for (int64_t d : shape)
        if (d < 0)
            user_error("NHC_EONX007", "tensor '", what, "' has a negative dimension in ",
                       shape_str(shape));
    std::optional<int64_t> count = checked_numel(shape); // else a wrapped byte count could match
    if (!count)
        user_error("NHC_EMOD026", "tensor '", what, "' has shape ", shape_str(shape),
                   ", whose element count overflows a 64-bit integer");
    if (*count > INT64_MAX / dtype_size(*dt))
        user_error("NHC_EMOD026", "tensor '", what, "' has shape ", shape_str(shape),
                   ", whose byte count overflows a 64-bit integer");
    return {*dt, shape};
}

/** Raw bytes of `size` must be what the shape and type need (NHC_EONX007). */
void check_raw_size(size_t size, DType dt, const Shape &shape, const std::string &what) {
    size_t need = static_cast<size_t>(shape_numel(shape)) * dtype_size(dt);
    if (size != need)
        user_error("NHC_EONX007", "tensor '", what, "' has ", size,
                   " bytes of raw data but its shape ", shape_str(shape), " and type ",
                   dtype_name(dt), " need ", need);
}

} // namespace

HostTensor HostTensor::from_onnx(const onnx::TensorProto &proto, const std::string &what,
                                 ByteView stored, std::shared_ptr<const void> keeper) {
    auto [dt, shape] = declared_type(proto, what);
    check_raw_size(stored.size(), dt, shape, what);
    return viewing(dt, std::move(shape), stored, std::move(keeper));
}

HostTensor HostTensor::from_onnx(const onnx::TensorProto &proto, const std::string &what) {
    DType dt;
    Shape shape;
    std::tie(dt, shape) = declared_type(proto, what);
    nhc_assert(proto.data_location() != onnx::TensorProto::EXTERNAL,
               "external data of '" << what << "' must be resolved before decoding");
    if (proto.has_raw_data()) {
        const std::string &raw = proto.raw_data();
        check_raw_size(raw.size(), dt, shape, what);
        HostTensor t;
        t.dtype_ = dt;
        t.shape_ = shape;
        t.bytes_.assign(raw.begin(), raw.end()); // one pass over the weights, not zeros first
        return t;
    }
    HostTensor t(dt, shape);
    auto set_i = [&](int64_t i, int64_t v) { t.set_i64(i, v); };
    auto set_bits16 = [&](int64_t i, int32_t v) { store<uint16_t>(t.bytes_.data() + 2 * i, v); };
    switch (dt) {
    case DType::Float32:
        copy_typed(proto.float_data(), t, what, [&](int64_t i, float v) { t.set_f64(i, v); });
        break;
    case DType::Float64:
        copy_typed(proto.double_data(), t, what, [&](int64_t i, double v) { t.set_f64(i, v); });
        break;
    case DType::Float16:
    case DType::BFloat16:
        copy_typed(proto.int32_data(), t, what, set_bits16);
        break;
    case DType::Int64:
        copy_typed(proto.int64_data(), t, what, set_i);
        break;
    case DType::UInt32:
    case DType::UInt64:
        copy_typed(proto.uint64_data(), t, what,
                   [&](int64_t i, uint64_t v) { t.set_i64(i, static_cast<int64_t>(v)); });
        break;
    default:
        copy_typed(proto.int32_data(), t, what, set_i);
        break;
    }
    return t;
}

void HostTensor::to_onnx(onnx::TensorProto *proto, const std::string &name) const {
    proto->Clear();
    proto->set_name(name);
    proto->set_data_type(dtype_to_onnx(dtype_));
    for (int64_t d : shape_)
        proto->add_dims(d);
    proto->set_raw_data(std::string(bytes().begin(), bytes().end()));
}

} // namespace nhc
