#ifndef NHC_GRAPH_SATURATEINFINITY_H
#define NHC_GRAPH_SATURATEINFINITY_H

/** \file
 * --enable-saturate-infinity (neuronx-cc's option, nc.md:L441): ±inf becomes the
 * largest finite value of its sign before the matmuls, so that the transposes the compiler puts
 * in front of them do not turn a row into NaN. On NeuronCore-v2 a PE transpose is a matmul with
 * the identity, and an infinity in a source column makes its whole output row NaN (nc.md:L125,
 * L442); v3's transpose mode is exact, so the driver runs this pass for v2 targets only.
 *
 * Every MatMul and Gemm operand that is not a constant is read through a Clip to [-m, m], m the
 * largest finite value of the type the PE takes it in (its auto-cast type, else its own: a
 * bound of fp32's maximum would round back to infinity in bf16). A value read by several matmuls
 * in one type is clipped once. NaN stays NaN. Assumes auto-cast has run (Node::operand_cast).
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of Clip nodes inserted. */
int saturate_matmul_operands(Graph &g);

} // namespace nhc

#endif
