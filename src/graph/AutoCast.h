#ifndef NHC_GRAPH_AUTOCAST_H
#define NHC_GRAPH_AUTOCAST_H

/** \file
 * `--auto-cast matmult --auto-cast-type bf16|fp16` (../shared/reference/neuron-compiler.md §1.2,
 * §1.4): the operands of every MatMul and Gemm are rounded to the cast type, accumulation stays
 * fp32 in PSUM. Constant operands (weights) are converted here, at compile time, so that they are
 * stored in the NEFF in the cast type and cross HBM at its size; runtime operands are converted by
 * the operand staging. Graph inputs and outputs are never cast. Gemm's bias C is not a matmul
 * operand and stays as it is. `--auto-cast-type fp8_e4m3` stores linear layers' weights as fp8
 * with a scale and casts the rest as bf16 does (store_linear_weights_fp8).
 */

#include "graph/Graph.h"

namespace nhc {

/** `--auto-cast-type fp8_e4m3`, before auto_cast_matmuls(g, bf16): the float32 constant operands
 *  (weights) of the Gemms (linear layers; a 2-D MatMul by a constant, a layer without bias,
 *  becomes one) and the weights of the convolutions (graph/ConvIm2Col's ConvTaps) are stored as
 *  Neuron's fp8_e4m3 with a per-tensor scale s = max|w| / 240 (the quantisers' absmax/240,
 *  nc.md:L425 [RQ]): the stored weight is w / s rounded to fp8, and the node's alpha (Gemm's,
 *  or one ConvTaps takes for this) is multiplied by s, applied as the result leaves PSUM.
 *  The PE reads the fp8 operand as stored with the other operand in bf16 (inputs may mix,
 *  nc.md:L116): weights cross HBM and sit in SBUF at one byte an element. A weight of no finite
 *  nonzero magnitude is left to the bf16 cast. Returns the number of weights stored as fp8. */
int store_linear_weights_fp8(Graph &g);

/** Marks the matmul nodes and converts their constant operands; returns the number of nodes. */
int auto_cast_matmuls(Graph &g, DType cast_type);

/** After auto_cast_matmuls: a runtime fp32 value whose every reader (directly or through
 *  Reshape/Transpose-like views) is an auto-cast matmul operand is stored in the cast type, as
 *  each reader rounds it to that type anyway: the producer rounds (RNE) when it writes instead,
 *  the numbers are the same and the value crosses HBM at half the size. Graph outputs are kept.
 *  Returns the number of values narrowed. */
int store_matmul_operands_narrow(Graph &g, DType cast_type);

/** A matmul whose two contraction operands are both stored as bf16, or both as fp16, and that
 *  auto-cast left alone takes them in that type: the PE multiplies 16-bit operands at four times
 *  its fp32 rate (nc.md:L112-116), and rounding a value to the type it is stored in changes
 *  nothing. The products of two such operands are exact in fp32 and PSUM accumulates in fp32
 *  either way, so the results are those of staging them as fp32. Returns the number of nodes. */
int take_stored_16bit_operands(Graph &g);

} // namespace nhc

#endif
