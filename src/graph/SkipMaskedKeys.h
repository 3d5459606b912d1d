#ifndef NHC_GRAPH_SKIPMASKEDKEYS_H
#define NHC_GRAPH_SKIPMASKEDKEYS_H

/** \file
 * Causal attention without its masked keys: softmax(where(j <= i + k, s, fill)) · V, where the
 * causal mask is a TriangularWhere (graph/CausalMask.h) read by the Softmax alone, whose
 * probabilities P only the context product P·V reads (as its first operand). Where the masked
 * terms vanish (masked_terms_vanish: each is exp of at least 128 below the row's maximum, 0 in
 * fp32), the softmax's maximum and sum and P·V's contraction need only the keys j <= i + k: the
 * Softmax and the MatMul take the attribute `nhc_keys_up_to_diagonal` = k, and their algorithms
 * reduce over those keys alone (RDom::where; algorithms/Softmax.cpp, Matmul.cpp). Bounds
 * inference then computes, per tile of query rows, the scores and probabilities only up to the
 * tile's last diagonal key: a causal attention over S positions computes about half of its
 * S x S scores (the blocks above the diagonal are never computed).
 *
 * The maximum may then differ from the unskipped one only when the fill exceeds every kept score
 * of a row, which masked_terms_vanish excludes. A move of -O2 and -O3 (where the masks are
 * TriangularWheres), after fold_softmax_scales (whose scale the test weighs).
 */

#include "graph/Graph.h"

namespace nhc {

/** The attribute of a Softmax and of its P·V MatMul whose reductions visit keys j <= i + k. */
inline constexpr const char *kKeysUpToDiagonal = "nhc_keys_up_to_diagonal";

/** Marks causal attentions' Softmax and P·V; returns how many attentions. */
int skip_masked_keys(Graph &g);

} // namespace nhc

#endif
