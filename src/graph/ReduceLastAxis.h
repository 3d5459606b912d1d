#ifndef NHC_GRAPH_REDUCELASTAXIS_H
#define NHC_GRAPH_REDUCELASTAXIS_H

/** \file
 * Rewrites reductions over axes other than the last into reductions over the last axis of a 2-D
 * view, which is what the default schedules run (rows on partitions, the reduced axis free):
 *  - LayerNormalization(axis = a) normalises over axes a..r-1, which are contiguous: the input
 *    is viewed as [rows, cols], gamma and beta as [cols], and the results viewed back;
 *  - InstanceNormalization: a LayerNormalization of the [N * C, spatial] view, then the
 *    per-channel scale and bias as [C, 1, ...] views multiplied and added;
 *  - Softmax(axis = a), a not last: Transpose a to the end, Softmax there, Transpose back;
 *  - Reduce* over constant axes other than just the last (or over the last without keepdims,
 *    whose result would lose the partition axis' rank): Transpose the reduced axes
 *    to the end (skipped when they already are), view as [kept, reduced], reduce the last axis
 *    with keepdims, and view the result as the node's output.
 * Views are free (they alias HBM); a Transpose is a copy (a layout group). A form this pass does
 * not know (runtime axes, noop_with_empty_axes with empty axes, gamma that broadcasts) is left
 * alone, for the code generator to refuse with its coded error.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of nodes rewritten. */
int move_reductions_to_last_axis(Graph &g);

} // namespace nhc

#endif
