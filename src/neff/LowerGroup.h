#ifndef NHC_NEFF_LOWERGROUP_H
#define NHC_NEFF_LOWERGROUP_H

/** \file
 * Lowers a scheduled group through Halide and captures the final Stmt (DESIGN.md §6): one
 * Pipeline per group, a capture pass added on that Pipeline object, compile_to_module with a
 * neutral target so that no host feature (AMX extraction) changes the IR
 * (../shared/reference/halide14.md §3). The Stmt is flattened: Allocate with memory types and
 * extents, Store/Load with 1-D indices, loops rebased to 0.
 */

#include "neff/Isa.h"
#include "schedules/Group.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nhc::codegen {

struct LoweredGroup {
    Halide::Internal::Stmt body;
    /** Halide buffer name -> Graph value name, for the HBM inputs and outputs. */
    std::map<std::string, std::string> hbm_buffers;
    /** The HBM buffers the Stmt actually reads or writes (an input used only as an attribute,
     *  such as Reshape's shape, is not among them). */
    std::set<std::string> referenced;
    std::map<std::string, int> partition_dim;       ///< the schedule's layout hints
    std::map<std::string, int64_t> partition_split; ///< the schedule's layout hints
    std::map<std::string, int> buffers;             ///< the schedule's buffer counts
    std::set<std::string> resident;                 ///< the schedule's resident stages
    bool pe_critical_path = false;                  ///< the schedule's PE order
    std::map<std::string, neff::Engine> engines;    ///< the schedule's engine per stage
    std::map<std::string, DType> stored_as;         ///< stage -> its storage type (tf32)
    std::set<std::string> widened_reductions;       ///< alg::Stage::widens_to_tile
};

LoweredGroup lower_group(const sched::Group &g);

/** `lg`, the lowering of a group whose HBM values are `from` (sched::hbm_values), for a group of
 *  the same workload and plan whose values are `to`, in the same order: its buffers' values
 *  rebound, the Stmt as it is (its stage and buffer names are internal to it). */
LoweredGroup rebound(LoweredGroup lg, const std::vector<std::string> &from,
                     const std::vector<std::string> &to);

} // namespace nhc::codegen

#endif
