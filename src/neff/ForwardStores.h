#ifndef NHC_NEFF_FORWARDSTORES_H
#define NHC_NEFF_FORWARDSTORES_H

/** \file
 * Keeps tensors resident in SBUF between groups (issue 16's whole-model move): a load of an
 * intermediate tensor from HBM whose bytes were stored there, earlier in the program, from SBUF
 * tiles that nothing has overwritten since, becomes an on-chip copy of those tiles on GpSimd.
 * Every group stores its output to HBM and the next group loads it back; each of those transfers
 * pays the DMA fixed cost (nc.md:L252, L265) on the chain from one group to the next, where an
 * on-chip copy pays an instruction's (nc.md:L302). When every reader of a scratch tensor is
 * forwarded, its stores are dropped too (those that round a tile to 16 bits once NarrowStores
 * has seen them: drop_unread_stores), and the tensor never crosses HBM.
 *
 * A load is forwarded only when each of its elements was last written by a store from the same
 * SBUF partition it is loaded into (compute engines do not move data across partitions), both
 * sides being rows of contiguous floats cast once at most, by the store or by the load (auto-
 * cast's): the copy then makes that cast, through fp32 as a DMA does (nc.md:L247, L309); and no
 * instruction between that store and the load, in program order, writes the stored SBUF bytes
 * (box overlap, as Footprint.h: conservative); and when each copy starts on a partition where an
 * engine tile of its size may (target::partition_start_allowed; a DMA may land anywhere).
 * Program order is what Hazards.h orders by, so the copy, placed where the load was, waits for
 * the tiles' writers and holds back their next writers, as the load did with the store.
 *
 * A copy that makes no cast need not be made at all when the load's tile is read only whole up
 * to the next instruction that writes any of it (a staging tile has no update: that write
 * begins another tile's life): its readers read the copied tile in its place (the same
 * partitions, another offset), provided nothing writes that tile before the last of them. The
 * consumer of a resident output (sched::SchedulePlan::output_resident) then reads the producer's
 * tiles where they are.
 *
 * A load of a graph input or a scratch tensor whose bytes an earlier load put in SBUF tiles
 * that nothing has overwritten since, the variable not written in between, is forwarded the same
 * way, from those tiles (X read by Q, K and V): the earlier tile holds the bytes rounded to its
 * type, so it serves a load into that same type, or any load when it was not rounded. A load that
 * reads exactly what an earlier one read, into the same partitions, copies its tile whatever the
 * access pattern: attention's mask row, broadcast to every partition once per head. Weights are
 * left to their loads (see forward_stores).
 *
 * GpSimd makes the copies: it otherwise only issues stores (SelectTransfers.cpp). Measured
 * against DVE and ACT at -O2 (bench/README.md): within 0.5% on the dev models and the fp32
 * BERT-base layer, and 4% faster on the bf16 layer (464.3 us against 484.6 and 485.0), where
 * DVE and ACT already carry the epilogues.
 *
 * Assumes program order (groups in sequence, each group's instructions as selected), before
 * instruction scheduling and semaphores.
 */

#include "neff/SelectInstructions.h"

namespace nhc::codegen {

struct ForwardStats {
    int loads_forwarded = 0; ///< loads replaced by on-chip copies
    int copies = 0;          ///< copies they became
    /** forwarded loads whose readers read the tile the copy would have read (no copy) */
    int read_in_place = 0;
    int stores_dropped = 0; ///< stores of tensors no longer read from HBM
    /** loads of inputs and scratch tensors replaced by copies of an earlier load's tiles */
    int repeated_loads_forwarded = 0;
};

/** Forwards stores to loads in `instrs` (see the file comment). `program` names the variables:
 *  only Scratch ones are forwarded. With `drop_unread_stores` false, stores stay even when no
 *  load of their tensor is left: for a window of a program (the autoscheduler's measurements),
 *  whose later groups may still read them. With `read_in_place` false, every forwarded load
 *  becomes copies. */
ForwardStats forward_stores(std::vector<SelectedInstr> &instrs, const neff::Program &program,
                            bool drop_unread_stores = true, bool read_in_place = true);

/** Drops the stores of scratch tensors that no instruction in `instrs` reads from HBM (their
 *  readers all take the tiles on chip) and returns how many; with `casting_too` false, only
 *  the stores that make no cast (a store rounding an fp32 tile to 16 bits is what
 *  neff/NarrowStores.h looks for: those are dropped after it). Only for a whole program: a
 *  window's later groups may read them. */
int drop_unread_stores(std::vector<SelectedInstr> &instrs, const neff::Program &program,
                       bool casting_too);

} // namespace nhc::codegen

#endif
