#ifndef NHC_GRAPH_CANCELTRANSPOSES_H
#define NHC_GRAPH_CANCELTRANSPOSES_H

/** \file
 * Removes a Transpose that undoes an earlier one: Transpose(p2) of Reshapes of Transpose(p1) of
 * x, where the Reshapes return to the shape they started from and p1 composed with p2 is the
 * identity, is x itself. ViT's patch embedding makes such a pair: the convolution, computed with
 * its channels last (graph/ConvIm2Col), is transposed to [N, C, P], viewed [N, C, H, W] and back,
 * and transposed to [N, P, C] by the model. Either Transpose of a large tensor is an HBM-to-HBM
 * copy whose innermost axis moves, one 4-byte descriptor row per element. The pair is removed only
 * when each value between them has one reader and none is a graph output; the second Transpose
 * becomes an Identity (a view) of x.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of Transpose pairs removed. */
int cancel_transpose_pairs(Graph &g);

} // namespace nhc

#endif
