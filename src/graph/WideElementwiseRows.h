#ifndef NHC_GRAPH_WIDEELEMENTWISEROWS_H
#define NHC_GRAPH_WIDEELEMENTWISEROWS_H

/** \file
 * Computes a pure elementwise node over an N-D value (each operand a runtime value of the
 * output's shape, or a constant of one element) on a 2-D view [rows, cols] of its elements that
 * fills the partitions with long rows: rows the partitions times the smallest count that keeps a
 * row within `max_row_elems`, where the element count divides so. The elementwise schedule tiles
 * an output by rows of its second-to-last axis: the SiLU after a U-Net's GroupNorm, on
 * [1, 512, 16, 16], otherwise moves tiles of 16 partitions and 16-element rows (sd_unet_64: 1,024
 * DMAs of 32 bytes for one SiLU). A pure elementwise node reads each element at its own index,
 * so any view of the same elements gives the same values, and views alias HBM (no data moves).
 * Consecutive such nodes share the view; the N-D value is viewed back only where something else
 * reads it. A chain whose runtime operand views a computed 2-D value of rows the partitions
 * divide, each within `max_row_elems` (a GroupNorm's [N * C * k, H * W / k] result,
 * graph/GroupNorm), takes that value's rows instead and reads it directly, the view dropped when
 * nothing else reads it: the chain (the SiLU after the norm) then has the shape of the group
 * that computes the value and joins it (driver/FormGroups), one store and load fewer. Left alone:
 * nodes of rank 2 and 1-D ones the partitions hold (a longer 1-D one has no other schedule), nodes
 * that join a convolution's group (FlattenElementwise.h), nodes reading a matmul's output through
 * views, or whose output a matmul reads through views and Transposes (attention's scores and scaled
 * queries keep their shapes for its fusion), element counts the partitions do not divide, and views
 * whose rows would be no longer than the output's last axis. Runs before graph/FlattenElementwise,
 * which then finds fewer chains to flatten.
 */

#include "graph/ConvIm2Col.h"
#include "graph/Graph.h"

namespace nhc {

/** Returns the number of nodes rewritten. */
int widen_elementwise_rows(Graph &g, int64_t partitions, int64_t max_row_elems,
                           const ConvLimits &conv_limits);

} // namespace nhc

#endif
