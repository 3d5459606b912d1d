#ifndef NHC_GRAPH_DOWNCASTINT64_H
#define NHC_GRAPH_DOWNCASTINT64_H

/** \file
 * int64 -> int32, as neuronx-cc does by default (`--native-int64 default`,
 * ../shared/reference/neuron-compiler.md §1.2): the NeuronCore engines have no 64-bit datapath.
 * Every int64 value becomes int32: constants are converted (NHC_EDTY002 if one does not fit;
 * a Slice's starts and ends, which ONNX clamps to the dimension, saturate instead),
 * graph inputs and outputs are declared int32 in the NEFF (neuron-halide-run converts int64 input
 * files, checking the range), and Cast nodes to int64 cast to int32.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of values converted. */
int downcast_int64(Graph &g);

} // namespace nhc

#endif
