#ifndef NHC_GRAPH_UNITAXISTRANSPOSES_H
#define NHC_GRAPH_UNITAXISTRANSPOSES_H

/** \file
 * A Transpose that moves only axes of extent 1 keeps every element where it was: its bytes are
 * its input's, in the same order. torchvision's ViT exports nn.MultiheadAttention's
 * sequence-first layout as such Transposes at batch 1 ([1, 197, 768] -> [197, 1, 768] and back),
 * each of which would otherwise be a group copying the tensor through HBM. This pass makes them
 * Reshapes, which are views (they alias their input's variable, driver/FormGroups.h), so the
 * copies disappear. A move of -O2 and -O3 (driver/Codegen.cpp).
 */

#include "graph/Graph.h"

namespace nhc {

/** Returns the number of Transposes made Reshapes. */
int reshape_unit_axis_transposes(Graph &g);

} // namespace nhc

#endif
