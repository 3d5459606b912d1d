#ifndef NHC_GRAPH_DECOMPOSE_H
#define NHC_GRAPH_DECOMPOSE_H

/** \file
 * Operators expressed with others the code generator has, so that each needs no algorithm,
 * schedule or instruction selection of its own:
 *  - Trilu: Where(triangle mask, x, 0), the mask constant or compared with a runtime k;
 *  - Tile: one Concat of copies per repeated axis;
 *  - Pad (constant, edge, reflect): per padded axis, a Concat of the fill before, the data and
 *    the fill after; the fill is an Expand of the value (constant), an Expand of the edge slice
 *    (edge), or a reversed Slice (reflect); negative pads are a Slice first;
 *  - OneHot: Where(indices == position along the new axis, on value, off value), a negative
 *    index counting from the end (as ONNX's reference);
 *  - Compress: the selected runs as Slices, concatenated (flattened first without an axis);
 *  - MeanVarianceNormalization: ONNX's function body (means, square, sqrt, divide);
 *  - LRN: the squares zero-padded along the channels and summed as shifted slices, then the
 *    power and the divide;
 *  - EyeLike, and ConstantOfShape given its shape at run time: constants (they depend only on
 *    the static output shape).
 *
 * Assumes the front end's guarantee that their compile-time operands are constants (Pad's pads
 * and value, Compress's condition; frontend/ConstantOperands.h) and static shapes (Tile's
 * repeats and OneHot's depth are read from them). NHC_EALG001 for forms not covered.
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of nodes decomposed. */
int decompose_operators(Graph &g);

} // namespace nhc

#endif
