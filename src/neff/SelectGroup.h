#ifndef NHC_NEFF_SELECTGROUP_H
#define NHC_NEFF_SELECTGROUP_H

/** \file
 * Instruction selection for one lowered group (DESIGN.md §6): the selection options the group's
 * schedule declared (layout hints, storage types) and an HBM variable for every buffer its Stmt
 * touches, then select_instructions. Shared by code generation and the autoscheduler's
 * measurements, so that a measured candidate is selected exactly as it will be compiled.
 */

#include "graph/Graph.h"
#include "neff/LowerGroup.h"
#include "neff/SelectInstructions.h"

#include <functional>
#include <string>
#include <vector>

namespace nhc::codegen {

/** The ISA dtype of a graph value's type; NHC_EGEN006 (naming `value`) for 64-bit types. */
neff::DType isa_dtype_of(DType t, const std::string &value);

/** Selects the instructions of `lg`. `so` carries the target, the node name and the allocation
 *  cursors (updated); `bind` gives the HBM variable of a graph value. */
std::vector<SelectedInstr> select_group(const LoweredGroup &lg, SelectOptions &so,
                                        const std::function<HbmBinding(const std::string &)> &bind);

} // namespace nhc::codegen

#endif
