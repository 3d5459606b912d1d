#ifndef NHC_GRAPH_TRANSPOSETHROUGHUNITRESHAPES_H
#define NHC_GRAPH_TRANSPOSETHROUGHUNITRESHAPES_H

/** \file
 * Brings a Transpose next to the MatMul that reads or writes it, across Reshapes that only drop
 * or add axes of extent 1, and merges Transposes that follow each other. Attention written with
 * heads folded into the batch (Stable Diffusion's `einsum('b i d, b j d -> b i j')`, CLIP's and
 * older Hugging Face models' `bmm` on `[b * h, s, d]`) exports `[1, s, h, d] -> Transpose ->
 * [1, h, s, d] -> Reshape -> [h, s, d] -> MatMul` and the mirror on the output; the Reshape
 * between keeps graph/FoldTranspose from folding the Transpose into the MatMul (and the output
 * side from being stored permuted), so each is an HBM-to-HBM copy whose innermost axis moves,
 * one descriptor row per element. Rewritten:
 *  - Transpose(p) then a Reshape dropping unit axes becomes a Reshape dropping the same (unit)
 *    axes of the input, then the Transpose of what remains;
 *  - a Reshape adding unit axes then Transpose(p) becomes the Transpose of the axes that were
 *    there, then a Reshape adding the unit axes where p put them;
 *  - Transpose(p2) of Transpose(p1) of x becomes one Transpose of x (an Identity, a view, when
 *    they undo each other).
 * Removing or adding unit axes keeps every element's place, so each Reshape stays a view. Only
 * where the value between the two nodes has no other reader and is not a graph output. A move
 * of -O2 and -O3 (driver/GraphPasses.cpp), after graph/CancelTransposes, whose pairs a move
 * would hide (ViT's patch embedding).
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of node pairs rewritten. */
int transpose_through_unit_reshapes(Graph &g);

} // namespace nhc

#endif
