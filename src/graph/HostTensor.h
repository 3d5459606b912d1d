#ifndef NHC_GRAPH_HOSTTENSOR_H
#define NHC_GRAPH_HOSTTENSOR_H

/** \file
 * A dense, row-major tensor held on the host: the constants of the Graph IR (weights, folded
 * values) and the values the constant folder computes with. Elements are stored in their own
 * dtype (little-endian bytes, as in an ONNX raw_data field); element access converts through
 * double or int64. A tensor owns its bytes, views bytes another object keeps alive (a weight
 * left where the mapped model file holds it: frontend/LoadModel), or is a conversion of another
 * tensor made when first read (converted_when_read: auto-cast weights); writing to either of
 * the last two copies the bytes first.
 */

#include "graph/DType.h"
#include "support/ByteView.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace nhc {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape &shape);
/** The element count of `shape`, or nullopt when it overflows a 64-bit integer (for shapes a
 *  model declares: checked before anything is sized by them). */
std::optional<int64_t> checked_numel(const Shape &shape);
/** "[1,64,256]" */
std::string shape_str(const Shape &shape);
/** The multidirectional (numpy) broadcast of `shapes` (ONNX Broadcasting.md); nullopt when they do
 *  not broadcast. */
std::optional<Shape> numpy_broadcast(const std::vector<Shape> &shapes);
/** "[a], [b], ..." for a message about several shapes. */
std::string shapes_str(const std::vector<Shape> &shapes);

class HostTensor {
public:
    HostTensor() = default;
    HostTensor(DType dtype, Shape shape);

    DType dtype() const { return dtype_; }
    const Shape &shape() const { return shape_; }
    int64_t numel() const { return shape_numel(shape_); }
    int rank() const { return static_cast<int>(shape_.size()); }
    ByteView bytes() const {
        return pending_ ? pending_bytes() : view_ ? ByteView(view_, view_size_) : ByteView(bytes_);
    }
    /** Bytes [offset, offset + size) into `dst`; of a conversion still pending
     *  (converted_when_read), those bytes converted from its source alone, without making the
     *  whole copy. Safe on several threads at once. */
    void read_bytes(size_t offset, size_t size, uint8_t *dst) const;
    /** The bytes to write; a view is copied into bytes of the tensor's own first. */
    std::vector<uint8_t> &mutable_bytes();
    /** True when the bytes are another object's (viewing()). */
    bool is_view() const { return view_ != nullptr; }

    /** A tensor of `bytes`, which `keeper` keeps alive; they must be exactly the shape's size. */
    static HostTensor viewing(DType dtype, Shape shape, ByteView bytes,
                              std::shared_ptr<const void> keeper);

    /** Element i (flat index) as a double / int64, converting from the stored dtype. */
    double get_f64(int64_t i) const;
    int64_t get_i64(int64_t i) const;
    /** Sets element i, converting (and rounding to nearest even for f16/bf16) into the dtype. */
    void set_f64(int64_t i, double v);
    void set_i64(int64_t i, int64_t v);
    /** A copy converted to `to` element by element, as set_f64(get_f64) would (rounding to
     *  nearest even into f16/bf16); float32 to a float type without going through double. */
    HostTensor converted(DType to) const;
    /** source->converted(to) made when first read rather than now: its bytes are converted the
     *  first time anything asks for them (bytes(), an element, mutable_bytes()), once for this
     *  tensor and its copies, and read_bytes() converts the range it is asked for without them.
     *  A float32 weight cast for the matmuls is so written to the NEFF a piece at a time, and
     *  no converted copy of the whole model is held (issue 16's compile time: such copies are
     *  memory touched for the first time). `source` is shared, not copied. Only float32 to a
     *  float type; else converted(to) at once. */
    static HostTensor converted_when_read(std::shared_ptr<const HostTensor> source, DType to);
    /** True while a conversion of converted_when_read has not been made. */
    bool conversion_pending() const;
    /** max |x| over the elements: NaNs skipped, infinity when one is infinite, 0 when empty.
     *  Auto-cast asks it of every weight (float32 read straight from the bytes). */
    double largest_magnitude() const;
    /** All elements as int64 (for shape-like tensors). */
    std::vector<int64_t> to_i64_vector() const;

    static HostTensor from_i64(const std::vector<int64_t> &values, DType dtype = DType::Int64);
    static HostTensor scalar_i64(int64_t v, DType dtype = DType::Int64);

    /** Decodes an ONNX TensorProto whose data is inline (raw_data or the typed fields).
     *  `what` names the tensor in error messages. Throws NHC_EONX007 on a size mismatch and
     *  NHC_EDTY001 for element types the Graph IR cannot hold. */
    static HostTensor from_onnx(const onnx::TensorProto &proto, const std::string &what);
    /** A view of `stored`, the raw bytes of `proto` kept elsewhere (its dtype and dims from the
     *  proto, checked as from_onnx checks them), which `keeper` keeps alive. */
    static HostTensor from_onnx(const onnx::TensorProto &proto, const std::string &what,
                                ByteView stored, std::shared_ptr<const void> keeper);
    /** Encodes as raw_data with the given name. */
    void to_onnx(onnx::TensorProto *proto, const std::string &name) const;

private:
    DType dtype_ = DType::Float32;
    Shape shape_;
    struct PendingConversion;
    ByteView pending_bytes() const;

    std::shared_ptr<PendingConversion> pending_; ///< converted_when_read's, else null
    std::vector<uint8_t> bytes_;                 ///< the bytes, when the tensor owns them
    const uint8_t *view_ = nullptr;              ///< else the bytes `keeper_` keeps alive
    size_t view_size_ = 0;
    std::shared_ptr<const void> keeper_;
};

/** IEEE half / bfloat16 conversions (round to nearest even), for folding and weight decoding. */
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

} // namespace nhc

#endif
