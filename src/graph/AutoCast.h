#ifndef NHC_GRAPH_AUTOCAST_H
#define NHC_GRAPH_AUTOCAST_H

/** \file
 * `--auto-cast matmult --auto-cast-type bf16|fp16` (../shared/reference/neuron-compiler.md §1.2,
 * §1.4): the operands of every MatMul and Gemm are rounded to the cast type, accumulation stays
 * fp32 in PSUM. Constant operands (weights) are converted here, at compile time, so that they are
 * stored in the NEFF in the cast type and cross HBM at its size; runtime operands are converted by
 * the operand staging. Graph inputs and outputs are never cast. Gemm's bias C is not a matmul
 * operand and stays as it is.
 */

#include "graph/Graph.h"

namespace nhc {

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
