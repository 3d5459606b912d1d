#ifndef NHC_NEFF_DTYPE_H
#define NHC_NEFF_DTYPE_H

/** \file
 * Element types of the NeuronCore ISA (neuroncore.md §5), and two the engines do not have
 * (float64, uint64: §5 lists no 64-bit type) that a partitioned NEFF's tensors in HBM carry
 * between its host segments and the model's inputs and outputs (driver/HostPartition.h). No
 * instruction's access pattern may hold those two (neff/Encoding.cpp and the assembler refuse
 * them). Values are part of the binary encoding: never renumber, only append.
 */

#include <cstdint>
#include <string>

namespace nhc::neff {

enum class DType : uint8_t {
    F32 = 0,
    BF16 = 1,
    F16 = 2,
    TF32 = 3,    ///< stored in 4 bytes, mantissa rounded to 10 bits
    FP8E4M3 = 4, ///< Neuron "legacy" e4m3: IEEE-like, range +-240
    FP8E5M2 = 5,
    I8 = 6,
    U8 = 7,
    I16 = 8,
    U16 = 9,
    I32 = 10,
    U32 = 11,
    F64 = 12, ///< host segments and model I/O only
    U64 = 13, ///< host segments and model I/O only
};
constexpr int kNumDTypes = 14;
/** The types an instruction may read or write: those before F64. */
constexpr int kNumDeviceDTypes = 12;
inline bool dtype_on_device(DType t) {
    return static_cast<int>(t) < kNumDeviceDTypes;
}

int dtype_size(DType t);
/** Short assembly name: f32 bf16 f16 tf32 fp8e4m3 fp8e5m2 i8 u8 i16 u16 i32 u32 f64 u64. */
const char *dtype_name(DType t);
/** Parses an assembly name; returns false if unknown. */
bool parse_dtype(const std::string &s, DType &out);
bool dtype_is_float(DType t);
bool dtype_is_16bit_float(DType t);
/** numpy-style name used in def.json ("float32", "bfloat16", ...). */
const char *dtype_numpy_name(DType t);
bool parse_dtype_numpy_name(const std::string &s, DType &out);

} // namespace nhc::neff

#endif
