#ifndef NHC_GRAPH_FOLDNORMAFFINE_H
#define NHC_GRAPH_FOLDNORMAFFINE_H

/** \file
 * A pre-LN transformer's LayerNorm feeds only linear layers (GPT-2's ln_1 -> c_attn and ln_2 ->
 * c_fc, ViT's ln_1 -> Q/K/V and ln_2 -> the MLP): its affine part folds into their constant
 * weights at compile time, (n * g + b) W + c = n (diag(g) W) + (b W + c), so the LayerNorm only
 * normalises (attribute `nhc_no_affine`, algorithms/Normalization.cpp) and two elementwise passes
 * over every row (a product with g, a sum with b, each a DVE pass over a broadcast tile) go.
 * Applies when every reader of the LayerNorm's output, directly or through Reshapes that keep the
 * last axis, is a Gemm reading it as A (transA 0, alpha 1, beta 1) with a constant B and a
 * constant bias C, or no C when b is zero (a bias added where there was none would cost a pass of
 * its own: GPT-2's tied LM head after ln_f keeps its LayerNorm whole). The new B and C are new
 * constants (B may be shared, as a tied embedding is), computed in double and rounded once to
 * fp32: the values change by the fp32 roundings of the reassociation. A move of -O2 and -O3.
 */

#include "graph/Graph.h"

namespace nhc {

/** The attribute of a LayerNormalization whose scale and bias were folded away: it computes
 *  (x - mean) * rstd alone. */
inline constexpr const char *kNoAffine = "nhc_no_affine";

/** Returns the number of LayerNorms whose affine part was folded. */
int fold_norm_affine_into_linear(Graph &g);

} // namespace nhc

#endif
