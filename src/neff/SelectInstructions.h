#ifndef NHC_NEFF_SELECTINSTRUCTIONS_H
#define NHC_NEFF_SELECTINSTRUCTIONS_H

/** \file
 * Instruction selection from a group's lowered Stmt (DESIGN.md §6,
 * ../shared/reference/isel-prototype.md). Loops that are not part of an instruction are unrolled;
 * each perfect nest that ends in one Store is one instruction (or a few, when an expression does
 * not fit one engine instruction), chosen by what it stores:
 *  - HBM <-> SBUF and HBM -> HBM copies: dma (byte access patterns, casts);
 *  - `acc = acc + a * b` into PSUM: matmul (the zero init of PSUM becomes the first matmul's
 *    overwrite, since memset followed by accumulate is undefined on v2/v3);
 *  - `acc = acc op expr` with the destination constant along the innermost loops: tensor_reduce;
 *  - constants: memset; everything else: elementwise instructions on ACT (functions) and DVE
 *    (arithmetic), splitting expressions through SBUF temporaries.
 * On-chip buffers: the outermost non-unit dimension of an Allocate is the partition dimension,
 * the others are contiguous in each partition. A form the hardware cannot run is a user error
 * naming the stage and the loop (NHC_EGEN...). Assumes the default schedules' conventions.
 */

#include "neff/Isa.h"
#include "neff/OnChipAllocator.h"
#include "target/Target.h"

#include <Halide.h>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace nhc::codegen {

struct SelectedInstr {
    neff::Engine engine;
    neff::Instr instr;
    /** The list scheduler ranks this PE instruction by its longest path to the end of the
     *  program (SelectOptions::pe_critical_path). */
    bool by_critical_path = false;
};

struct HbmBinding {
    int var = -1;
    neff::DType dtype = neff::DType::F32;
    int64_t bytes = -1; ///< the tensor's size, to refuse copies outside it (-1: not checked)
    int64_t offset = 0; ///< where the tensor starts in the variable (driver/ConcatInPlace.h)
};

struct SelectOptions {
    const target::TargetInfo *target = nullptr;
    std::map<std::string, HbmBinding> hbm;          ///< Halide buffer name -> HBM variable
    std::map<std::string, int> partition_dim;       ///< stage -> Halide dim on partitions
    std::map<std::string, int64_t> partition_split; ///< stage -> partitions per chunk of that dim
    std::map<std::string, int> buffers; ///< stage -> fixed buffers its tiles take turns in
    std::map<std::string, neff::DType> stored_as; ///< stage -> storage type beyond Halide's
    std::string node_name; ///< carried by every instruction (traces, messages)
    int dma_queues = 4;    ///< DMA queues used round-robin
    /** A load that reads one row into every partition (a bias or a norm's scale, partition
     *  stride 0) is built on the PE instead: the row loaded into one partition, a matmul of a
     *  ones row by it per PSUM bank, a copy out (SelectBroadcast.cpp). The DMA then moves the
     *  row once, not once per partition; the PE and ACT/DVE do the rest. */
    bool broadcast_on_pe = false;
    /** Rows shorter than this stay broadcast by the DMA (a heuristic, not measured: such a load
     *  moves at most 128 KiB, and the matmul and the copy each pay their fixed cost whatever the
     *  row's width, nc.md:L142, L298). */
    static constexpr int64_t kMinPeBroadcastRow = 256;
    /** Reduction stages bounded per row by the keys it keeps (alg::Stage::widens_to_tile): a
     *  loop of such a stage's nest whose bounds vary along the nest's partition loop runs over
     *  the union of its ranges; the terms it adds are masked ones, which change nothing. */
    std::set<std::string> widened_reductions;
    /** Stages whose SBUF tiles outlive the group (sched::Group::resident): each tile keeps its
     *  region after the group, which kept_sbuf reports. */
    std::set<std::string> resident;
    /** The group's PE instructions are ordered by critical path (sched::Group::pe_critical_path,
     *  SelectedInstr::by_critical_path). */
    bool pe_critical_path = false;
    /** Stage -> the engine its elementwise and reduction instructions run on where that engine
     *  can (sched::Group::engines); other stages balance ACT and DVE. */
    std::map<std::string, neff::Engine> engines;
    /** In: SBUF regions (offset, bytes per partition) earlier groups keep, which this group
     *  leaves alone. */
    std::vector<std::pair<int64_t, int64_t>> reserved_sbuf;
    /** Out: the regions of this group's resident tiles, in allocation order. */
    std::vector<std::pair<int64_t, int64_t>> kept_sbuf;
    /** In and out: where SBUF and PSUM allocation resume, with what was released when and the
     *  SBUF region kept for the next group (OnChipAllocator::history), threaded through the
     *  groups of a program. */
    AllocationHistory sbuf_history, psum_history;
    /** In: SBUF bytes per partition to keep out of this group's allocation for the next group's
     *  stages that live as long as it does (OnChipAllocator::reserve_for_next; 0: none). */
    int64_t keep_for_next = 0;
    /** Out: the SBUF bytes per partition of this group's stages allocated outside every loop
     *  (which live as long as the group), as the allocator rounds them. */
    int64_t group_lifetime_bytes = 0;
};

/** Selects the instructions of one lowered group; updates the options' allocation cursors. */
std::vector<SelectedInstr> select_instructions(const Halide::Internal::Stmt &s,
                                               SelectOptions &options);

/** Whether `dma` is a load SelectOptions::broadcast_on_pe builds on the PE: one contiguous row
 *  of a float type read from HBM into every partition of an SBUF tile (partition stride 0), at
 *  least SelectOptions::kMinPeBroadcastRow elements long (SelectBroadcast.cpp). */
bool pe_broadcast_candidate(const neff::Instr &dma);

/** The ISA dtype of a Halide type; NHC_EGEN006 for types the NeuronCore cannot hold. */
neff::DType isa_dtype(const Halide::Type &t, const std::string &what);

} // namespace nhc::codegen

#endif
