#ifndef NHC_RUNTIME_NUMERICS_H
#define NHC_RUNTIME_NUMERICS_H

/** \file
 * Element conversions of the simulator. Engines compute in fp32 and cast on the way in and out
 * (neuroncore.md §1.4, §5); every narrowing rounds to nearest, ties to even (RNE, the default on
 * all generations, nc.md:L433). Rules chosen where the reference is silent are stated here:
 *  - bf16/tf32 keep denormals (no flush); NaN stays NaN (quiet); fp16 and fp8 follow
 *    support/SmallFloat.h (fp8_e4m3 beyond +-240 is NaN, nc.md:L425).
 *  - fp32 -> integer: RNE with saturation to the destination range (nc.md:L439); NaN gives 0.
 */

#include "neff/DType.h"
#include "support/SmallFloat.h"

#include <cstdint>

namespace nhc::rt {

uint16_t f32_to_bf16(float x);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_f16(float x);
float f16_to_f32(uint16_t h);
/** fp32 with the mantissa rounded to tf32's 10 bits (stored in 4 bytes). */
float round_to_tf32(float x);
// The fp8 codecs are the compiler's too (support/SmallFloat.h).
using nhc::f32_to_fp8e4m3;
using nhc::f32_to_fp8e5m2;
using nhc::fp8e4m3_to_f32;
using nhc::fp8e5m2_to_f32;

/** Reads one element of type t at p as fp32. */
float load_elem(neff::DType t, const uint8_t *p);
/** Writes fp32 x as one element of type t at p (RNE / saturation as above). */
void store_elem(neff::DType t, uint8_t *p, float x);
/** x rounded through type t and back (what a store followed by a load gives). */
float round_through(neff::DType t, float x);

} // namespace nhc::rt

#endif
