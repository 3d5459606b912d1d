#ifndef NHC_RUNTIME_NUMERICS_H
#define NHC_RUNTIME_NUMERICS_H

/** \file
 * Element conversions of the simulator. Engines compute in fp32 and cast on the way in and out
 * (neuroncore.md §1.4, §5); every narrowing rounds to nearest, ties to even (RNE, the default on
 * all generations, nc.md:L433). Rules chosen where the reference is silent are stated here:
 *  - bf16/fp16/tf32 keep denormals (no flush); NaN stays NaN (quiet); fp16 and fp8_e5m2 overflow
 *    to infinity as IEEE formats do.
 *  - fp8_e4m3 is Neuron's legacy IEEE-like e4m3 (bias 7, exponent 15 reserved, max 240,
 *    nc.md:L425): a finite value with |x| > 240 becomes NaN ("values outside +-240 give NaN on
 *    Neuron" [CQ]); +-inf stays +-inf (the format has an inf, inferred in nc.md:L425); NaN is NaN.
 *  - fp32 -> integer: RNE with saturation to the destination range (nc.md:L439); NaN gives 0.
 */

#include "neff/DType.h"

#include <cstdint>

namespace nhc::rt {

uint16_t f32_to_bf16(float x);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_f16(float x);
float f16_to_f32(uint16_t h);
/** fp32 with the mantissa rounded to tf32's 10 bits (stored in 4 bytes). */
float round_to_tf32(float x);
uint8_t f32_to_fp8e4m3(float x);
float fp8e4m3_to_f32(uint8_t b);
uint8_t f32_to_fp8e5m2(float x);
float fp8e5m2_to_f32(uint8_t b);

/** Reads one element of type t at p as fp32. */
float load_elem(neff::DType t, const uint8_t *p);
/** Writes fp32 x as one element of type t at p (RNE / saturation as above). */
void store_elem(neff::DType t, uint8_t *p, float x);
/** x rounded through type t and back (what a store followed by a load gives). */
float round_through(neff::DType t, float x);

} // namespace nhc::rt

#endif
