#ifndef NHC_RUNTIME_ALUOPS_H
#define NHC_RUNTIME_ALUOPS_H

/** \file
 * Scalar semantics of the ALU operators and activation functions, in fp32 as the engines compute
 * (neuroncore.md §1.4, §3.3, §3.4).
 *  - Arithmetic operators work on fp32 values; comparisons and logical operators give 1.0 / 0.0;
 *    max/min propagate NaN (the reference is silent; we choose the visible behaviour).
 *  - Bitvec operators (bitwise_*, shift_*) need raw integer bits and are not implemented yet:
 *    alu_supported() says so and the executor raises NHC_ERT012.
 *  - Activation functions are evaluated in double and rounded once to fp32. The hardware uses
 *    piecewise polynomials (nc.md:L365) whose coefficients are not public, so results match a
 *    correctly rounded function, not the device's last bits; out-of-range inputs (log, sin,
 *    arctan, sqrt, rsqrt, reciprocal limits in §3.4) are still evaluated exactly.
 *  - gelu_apprx_sigmoid is x * sigmoid(1.702 x) (Hendrycks & Gimpel 2016, the usual definition).
 */

#include "neff/Isa.h"

namespace nhc::rt {

bool alu_supported(neff::AluOp op);
float alu(neff::AluOp op, float a, float b);
/** Identity element of a reduction (add 0, mult 1, max -inf, ...). */
float reduce_identity(neff::AluOp op);
bool is_reduce_op(neff::AluOp op);

/** func(x) for the activation engine; alpha is prelu's slope. */
float activation(neff::ActFunc f, float x, float alpha);

} // namespace nhc::rt

#endif
