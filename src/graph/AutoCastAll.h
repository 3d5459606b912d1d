#ifndef NHC_GRAPH_AUTOCASTALL_H
#define NHC_GRAPH_AUTOCASTALL_H

/** \file
 * `--auto-cast all --auto-cast-type bf16|fp16` (../shared/reference/neuron-compiler.md §1.2):
 * every float32 value the graph computes or holds is stored in the cast type, as if the model had
 * been exported in it: weights and folded constants converted at compile time (rounded to
 * nearest even, and saturated to the type's largest finite value, so that an attention mask's
 * float32 minimum does not become an infinity that a multiply by 0 turns into NaN), intermediate
 * values written by the engines in the cast type (each engine computes in fp32 and rounds what
 * it stores, nc.md:L117, L172: softmax, layer norm and reductions accumulate in fp32, which is
 * `--enable-mixed-precision-accumulation`; graph/MixedPrecision.h stores their intermediates in
 * the type when it is disabled), Cast nodes to float32 cast to the type instead. The
 * NEFF's interface keeps float32: a Cast after each float32 graph input and before each float32
 * graph output. Matmuls then take their 16-bit operands as stored (graph/AutoCast's
 * take_stored_16bit_operands). tf32 has float32's bytes: with it, `all` is `matmult`.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of values stored in the cast type. */
int auto_cast_all(Graph &g, DType cast_type);

} // namespace nhc

#endif
