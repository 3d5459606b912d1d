#ifndef NHC_ALGORITHMS_REFERENCE_H
#define NHC_ALGORITHMS_REFERENCE_H

/** \file
 * Runs a Graph on the host: each node's algorithm is JIT-compiled with Halide's CPU backend and
 * realized node by node. This is the reference that checks the algorithms against ONNX's own test
 * data and PyTorch's outputs, independently of schedules and the NeuronCore code generator.
 * Assumes every node has an algorithm (NHC_EUOC002 otherwise).
 */

#include "graph/Graph.h"

#include <map>
#include <string>

namespace nhc::alg {

/** Values of every graph output, keyed by name; `inputs` holds every graph input. */
std::map<std::string, HostTensor> run_reference(const Graph &g,
                                                const std::map<std::string, HostTensor> &inputs);

} // namespace nhc::alg

#endif
