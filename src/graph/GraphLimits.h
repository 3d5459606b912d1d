#ifndef NHC_GRAPH_GRAPHLIMITS_H
#define NHC_GRAPH_GRAPHLIMITS_H

/** \file
 * Limits on what one compile takes from a model, so that a model from a stranger cannot make a
 * step's time or memory grow without bound (issue 19's resource limits). They are the
 * compiler's own, not the hardware's: each is chosen far above every model measured and stated
 * with the measurement that set it (docs/errors.md names the errors; bench/README.md, "Graphs
 * deeper than any model").
 */

#include <cstddef>

namespace nhc {

/** The most nodes one fused group holds (driver/FormGroups). Halide's lowering of a group takes
 *  time that grows with the square of its stages (a chain of Neg nodes fused into one group: 250
 *  nodes 3.6 s, 500 13 s, 2,000 279 s and 6 GB), while the largest group of the bench and
 *  development models has 5 nodes. Passes that walk back along a chain to find whether a node
 *  joins a group walk at most this far. */
constexpr size_t kMaxFusedNodes = 32;

/** The most nodes a model holds, its graph, the graphs nested in its nodes and its local
 *  functions together, each call of a local function counted as the nodes it expands to (checked
 *  as the model is read, before ONNX's checker and shape inference: frontend/ModelSize). The compile's passes take time about linear in
 *  the nodes (bench/graph_size.py: a chain of 2,000 Neg nodes 0.26 s, of 50,000 5.3 s; 9,999
 *  side by side, one group each, 4.8 s), and the largest model of the bench, 24 BERT layers, has
 *  1,027: fifty times that leaves room for the largest exports. A graph's depth is bounded by it
 *  too; no pass recurses along the graph (the chain of 50,000 compiles). */
constexpr long kMaxModelNodes = 50000;

/** The most inputs and outputs a model's main graph declares together: each is a NEFF variable
 *  and a host buffer; a decoder with a key/value cache of 80 layers declares about 170. */
constexpr long kMaxGraphInputsOutputs = 10000;

} // namespace nhc

#endif
