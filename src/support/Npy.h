#ifndef NHC_SUPPORT_NPY_H
#define NHC_SUPPORT_NPY_H

/** \file
 * A small reader and writer of NumPy's .npy format (versions 1.0-3.0, C order, little-endian
 * or byte-order-free dtypes): enough for tensors going in and out of neuron-halide-run. Errors are
 * user errors NHC_ERT013 naming the file and what was wrong.
 */

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nhc {

/** A tensor as a file holds it (named NpyTensor to stay apart from the Graph IR's HostTensor).
 * `dtype` uses NumPy's names: float32, float16, float64, bfloat16, int8, uint8, int16, uint16,
 * int32, uint32, int64, uint64, bool. */
struct NpyTensor {
    std::string dtype = "float32";
    std::vector<int64_t> shape;
    std::vector<uint8_t> data; ///< little-endian, C order
};

/** Bytes per element of a dtype name, or 0 if unknown. */
int host_dtype_size(const std::string &dtype);
/** The bytes of a tensor of `shape` with elements of `elem_size` bytes; nullopt when a
 *  dimension is negative or the count overflows 64 bits (a file's own word is not trusted). */
std::optional<int64_t> tensor_bytes(const std::vector<int64_t> &shape, int elem_size);

NpyTensor parse_npy(const std::vector<uint8_t> &bytes, const std::string &what);
std::vector<uint8_t> make_npy(const NpyTensor &t);

} // namespace nhc

#endif
