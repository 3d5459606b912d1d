#include "frontend/WeightsInPlace.h"

namespace nhc {

namespace {

// Field numbers of onnx.proto (ONNX 1.12) and wire types of protobuf's encoding.
constexpr uint64_t kModelGraph = 7, kGraphInitializer = 5;
constexpr uint64_t kTensorSegment = 3, kTensorRawData = 9, kTensorExternalData = 13,
                   kTensorDataLocation = 14;
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

/** One field of a message: its number and wire type, and where its payload lies. */
struct Field {
    uint64_t number = 0;
    int wire_type = 0;
    size_t begin = 0;   ///< of the tag
    size_t payload = 0; ///< first byte after the tag (and the length, if delimited)
    size_t end = 0;     ///< one past the field
};

/** Reads the fields of the message in [pos, end) of `bytes` one at a time. */
class FieldReader {
public:
    FieldReader(ByteView bytes, size_t pos, size_t end) : bytes_(bytes), pos_(pos), end_(end) {}

    /** The next field; nullopt at the end, and `malformed()` if the bytes end inside one. */
    std::optional<Field> next() {
        if (pos_ >= end_ || malformed_)
            return std::nullopt;
        Field f;
        f.begin = pos_;
        std::optional<uint64_t> tag = varint();
        if (!tag)
            return fail();
        f.number = *tag >> 3;
        f.wire_type = int(*tag & 7);
        f.payload = pos_;
        uint64_t length = 0;
        switch (f.wire_type) {
        case kVarint:
            if (!varint())
                return fail();
            f.end = pos_;
            return f;
        case kFixed64:
            length = 8;
            break;
        case kFixed32:
            length = 4;
            break;
        case kLengthDelimited: {
            std::optional<uint64_t> n = varint();
            if (!n)
                return fail();
            length = *n;
            break;
        }
        default: // groups (deprecated) and invalid types: not walked
            return fail();
        }
        f.payload = pos_;
        if (length > end_ - pos_)
            return fail();
        pos_ += size_t(length);
        f.end = pos_;
        return f;
    }
    bool malformed() const { return malformed_; }

private:
    std::optional<uint64_t> varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64 && pos_ < end_; shift += 7) {
            uint8_t b = bytes_[pos_++];
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                return v;
        }
        return std::nullopt;
    }
    std::optional<Field> fail() {
        malformed_ = true;
        return std::nullopt;
    }

    ByteView bytes_;
    size_t pos_, end_;
    bool malformed_ = false;
};

void append_varint(std::string &out, uint64_t v) {
    while (v >= 0x80) {
        out += char(uint8_t(v) | 0x80);
        v >>= 7;
    }
    out += char(v);
}

/** Appends a length-delimited field `number` holding `payload`. */
void append_message(std::string &out, uint64_t number, const std::string &payload) {
    append_varint(out, number << 3 | kLengthDelimited);
    append_varint(out, payload.size());
    out += payload;
}

class Stripper {
public:
    Stripper(ByteView bytes, size_t min_bytes) : bytes_(bytes), min_bytes_(min_bytes) {}

    std::optional<WeightsInPlace> run() {
        WeightsInPlace out;
        FieldReader model(bytes_, 0, bytes_.size());
        while (std::optional<Field> f = model.next()) {
            if (f->number == kModelGraph && f->wire_type == kLengthDelimited) {
                std::optional<std::string> graph = strip_graph(*f, out.weights);
                if (!graph)
                    return std::nullopt;
                append_message(out.stripped, kModelGraph, *graph);
            } else {
                copy(out.stripped, *f);
            }
        }
        if (model.malformed() || out.weights.empty())
            return std::nullopt;
        return out;
    }

private:
    std::optional<std::string> strip_graph(const Field &graph, std::vector<RawDataInPlace> &out) {
        std::string kept;
        FieldReader fields(bytes_, graph.payload, graph.end);
        while (std::optional<Field> f = fields.next()) {
            if (f->number != kGraphInitializer || f->wire_type != kLengthDelimited) {
                copy(kept, *f);
                continue;
            }
            std::optional<Field> raw = large_raw_data(*f);
            if (!raw) {
                copy(kept, *f);
            } else {
                out.push_back({initializers_, raw->payload, raw->end - raw->payload});
                std::string tensor(chars(f->payload), chars(raw->begin));
                tensor.append(chars(raw->end), chars(f->end));
                append_message(kept, kGraphInitializer, tensor);
            }
            initializers_++;
        }
        if (fields.malformed())
            return std::nullopt;
        return kept;
    }

    /** The tensor's raw_data field when it is its only data, given once, of min_bytes or more. */
    std::optional<Field> large_raw_data(const Field &tensor) const {
        std::optional<Field> raw;
        int raw_fields = 0;
        FieldReader fields(bytes_, tensor.payload, tensor.end);
        while (std::optional<Field> f = fields.next()) {
            if (f->number == kTensorRawData) {
                raw = f;
                raw_fields++;
            }
            if (f->number == kTensorExternalData || f->number == kTensorDataLocation ||
                f->number == kTensorSegment)
                return std::nullopt;
        }
        if (fields.malformed() || raw_fields != 1 || raw->wire_type != kLengthDelimited ||
            raw->end - raw->payload < min_bytes_)
            return std::nullopt;
        return raw;
    }

    const char *chars(size_t pos) const {
        return reinterpret_cast<const char *>(bytes_.data()) + pos;
    }
    void copy(std::string &out, const Field &f) const { out.append(chars(f.begin), chars(f.end)); }

    ByteView bytes_;
    size_t min_bytes_;
    size_t initializers_ = 0;
};

} // namespace

std::optional<WeightsInPlace> find_weights_in_place(ByteView serialized, size_t min_bytes) {
    return Stripper(serialized, min_bytes).run();
}

} // namespace nhc
