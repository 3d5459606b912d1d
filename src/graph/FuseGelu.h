#ifndef NHC_GRAPH_FUSEGELU_H
#define NHC_GRAPH_FUSEGELU_H

/** \file
 * Recognises the two GELU forms that PyTorch exports as elementwise chains and replaces each by
 * one Gelu node (ONNX's Gelu of opset 20, attribute `approximate`):
 *  - erf:  0.5 * x * (1 + Erf(x / sqrt(2)))                    (F.gelu; x * (1/sqrt(2)) too)
 *  - tanh: 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * Pow(x, 3))))
 *                                                              (F.gelu(approximate="tanh"), GPT-2)
 * The three factors 0.5, x and (1 + ...) may be multiplied in any order and grouping. Every
 * intermediate must be read only inside the pattern, and the constants must match to 1e-4
 * relative. A Gelu is one ACT instruction (neuroncore.md L351 lists gelu and gelu_apprx_tanh among
 * ACT's functions) where the chain is five or eight engine instructions.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of patterns replaced. */
int fuse_gelu_patterns(Graph &g);

} // namespace nhc

#endif
