#ifndef NHC_GRAPH_MIXEDPRECISION_H
#define NHC_GRAPH_MIXEDPRECISION_H

/** \file
 * `--disable-mixed-precision-accumulation` (neuronx-cc's option, neuron-compiler.md §1.2: on by
 * default, accumulation-type ops compute internally in fp32 and cast the result; off trades
 * accuracy for speed). The engines' arithmetic is fp32 whatever they read and write (nc.md:L156),
 * so what the option decides here is the type of the intermediate tensors an accumulation-type
 * node stores between its instructions: softmax's exponentials, row sums and reciprocals, layer
 * norm's sums, means and variances, a reduction's partial sums. On (the default), fp32; off, the
 * node's own data type when that is bf16 or fp16 (a model stored in 16 bits, or `--auto-cast
 * all`): every intermediate the engines write is rounded to it. Nodes on fp32 data are left as
 * they are: their data type is fp32.
 *
 * The pass marks the nodes (kAccumulateInDataType); the algorithms (alg::Builder::
 * accumulates_in) store the marked node's intermediates in its data type. Runs after auto-cast,
 * which decides the types.
 */

#include "graph/Graph.h"

namespace nhc {

/** Attribute set on a node whose intermediates are stored in its data type. */
inline constexpr const char *kAccumulateInDataType = "nhc_accumulate_in_data_type";

/** Marks every Softmax, LogSoftmax, LayerNormalization and sum-like Reduce* node whose input is
 *  bf16 or fp16; returns the number of nodes marked. */
int accumulate_in_data_types(Graph &g);

} // namespace nhc

#endif
