#ifndef NHC_GRAPH_FOLDSOFTMAXSCALE_H
#define NHC_GRAPH_FOLDSOFTMAXSCALE_H

/** \file
 * Attention's scores are scaled by 1/sqrt(d) just before their Softmax (PyTorch exports a Div or
 * a Mul by a constant). softmax(x * s) = exp(x*s - max(x)*s) / sum for s > 0, and ScalarE's
 * activation computes func(in * scale + bias) in one instruction (nc.md:L298), so the scale can
 * ride on the exponential instead of taking a pass of its own over every row: the Div or Mul is
 * removed and the Softmax takes the attribute `nhc_input_scale` = s (algorithms/Softmax.cpp).
 *
 * The values are the same bits: multiplying by s > 0 is monotonic, so max(fl(x*s)) =
 * fl(max(x)*s), and exp then takes fl(x*s) - fl(max*s) as before. A Div by c is folded only when
 * 1/c is exact (c a power of two: sqrt(64) = 8 for BERT, GPT-2 and ViT), so that x / c equals
 * x * (1/c) for every x. Only a scaled value that the Softmax alone reads is folded.
 *
 * torchvision's ViT scales q instead, before the scores' MatMul. For s a power of two,
 * (q*s)·k = (q·k)*s to the bit (each product, partial sum and bf16 rounding scales exactly), so
 * that scale moves past a MatMul whose product only the Softmax reads, and folds the same way.
 *
 * A move of -O2 and -O3 (driver/Codegen.cpp): -O1 keeps the Div.
 */

#include "graph/Graph.h"

namespace nhc {

/** The attribute a folded Softmax carries: its input is multiplied by this before the softmax. */
inline constexpr const char *kSoftmaxInputScale = "nhc_input_scale";

/** Folds scales into the Softmax nodes that read them; returns how many. */
int fold_softmax_scales(Graph &g);

} // namespace nhc

#endif
