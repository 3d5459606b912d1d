#ifndef NHC_FRONTEND_WEIGHTSINPLACE_H
#define NHC_FRONTEND_WEIGHTSINPLACE_H

/** \file
 * Finds the weights of a serialized ONNX ModelProto where the file holds them, so that they need
 * not be copied: protobuf's parser copies every bytes field into a string of its own, and for a
 * model of 778 MB those copies are memory the process touches for the first time (the larger
 * part of loading it). Walks the protobuf wire format (protobuf.dev, "Encoding": varint tags,
 * length-delimited fields) down ModelProto.graph (field 7) -> GraphProto.initializer (field 5)
 * -> TensorProto.raw_data (field 9) and returns the message without the raw_data fields of
 * `min_bytes` or more, and where each removed field's bytes lie. Every other byte is kept as it
 * is, so parsing the result gives the same model with those fields empty.
 *
 * Assumes nothing about the input: when it is not well-formed protobuf, or a tensor's raw data
 * is not plainly one field (given twice, or beside external-data or segment fields), nothing is
 * removed from it and the parser sees those bytes as they are (and reports what is wrong).
 */

#include "support/ByteView.h"

#include <optional>
#include <string>
#include <vector>

namespace nhc {

/** Where the raw data of one initializer lies. */
struct RawDataInPlace {
    size_t initializer; ///< its position among the main graph's initializers, as parsed
    size_t offset;      ///< of its first byte in the serialized model
    size_t size;
};

struct WeightsInPlace {
    std::string stripped;                ///< the model without those raw_data fields
    std::vector<RawDataInPlace> weights; ///< in initializer order
};

/** The model `serialized` without its initializers' raw_data fields of `min_bytes` or more;
 *  nullopt when it is not well-formed protobuf or has no such field. */
std::optional<WeightsInPlace> find_weights_in_place(ByteView serialized, size_t min_bytes);

} // namespace nhc

#endif
