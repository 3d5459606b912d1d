#ifndef NHC_SUPPORT_SMALLFLOAT_H
#define NHC_SUPPORT_SMALLFLOAT_H

/** \file
 * Encoding of the narrow float formats into their bits and back, rounding to nearest, ties to
 * even (RNE, the default on all NeuronCore generations, ../shared/reference/neuroncore.md:L433).
 * One codec for the compiler (weights it stores narrow) and the simulator (runtime/Numerics), so
 * that the bytes the compiler writes are the ones the simulator reads back. Rules chosen where
 * the reference is silent:
 *  - fp16 and fp8_e5m2 overflow to infinity, as IEEE formats do; denormals are kept.
 *  - fp8_e4m3 is Neuron's legacy IEEE-like e4m3 (bias 7, exponent 15 reserved, max 240,
 *    nc.md:L425): a finite value with |x| > 240 becomes NaN ("values outside +-240 give NaN on
 *    Neuron" [CQ]); +-inf stays +-inf (the format has an inf, inferred in nc.md:L425).
 *  - NaN stays NaN.
 */

#include <cstdint>

namespace nhc {

/** fp8_e4m3's largest finite value (nc.md:L425). */
constexpr double kFp8E4M3Max = 240.0;

uint16_t small_f32_to_f16(float x);
float small_f16_to_f32(uint16_t h);
uint8_t f32_to_fp8e4m3(float x);
float fp8e4m3_to_f32(uint8_t b);
uint8_t f32_to_fp8e5m2(float x);
float fp8e5m2_to_f32(uint8_t b);

} // namespace nhc

#endif
