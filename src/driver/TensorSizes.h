#ifndef NHC_DRIVER_TENSORSIZES_H
#define NHC_DRIVER_TENSORSIZES_H

/** \file
 * Refuses tensors too large to compile, before anything is allocated for them (issue 19's
 * resource limits): a model from a stranger may declare any shape. Checked on the graph as
 * imported, every value (inputs, outputs, weights, intermediates), in name order:
 * - NHC_EMOD026: an element count that a 64-bit integer cannot hold, or more elements than the
 *   code generator indexes: 2^31 - 1, since Halide's indices are 32-bit (a target without its
 *   large_buffers feature);
 * - NHC_EMOD027: the model's inputs, outputs and weights together larger than the HBM one
 *   NeuronCore of the target addresses (one tensor within the count above cannot be).
 */

#include "graph/Graph.h"
#include "target/Target.h"

namespace nhc {

void check_tensor_sizes(const Graph &g, const target::TargetInfo &target);

} // namespace nhc

#endif
