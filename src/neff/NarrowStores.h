#ifndef NHC_NEFF_NARROWSTORES_H
#define NHC_NEFF_NARROWSTORES_H

/** \file
 * Rounds on the engines instead of in the DMA (issue 16's whole-model moves, -O2 and -O3): a
 * store that rounds an fp32 SBUF tile to a 16-bit float in HBM (auto-cast's narrow matmul
 * operands) moves 4 bytes per element, as a DMA cast reads the larger type (nc.md:L247). When
 * the tile's bytes were last written by engine instructions (ACT, DVE, GpSimd) whose outputs lie
 * inside it and that nothing else reads, those instructions write the 16-bit type instead, which
 * an engine rounds as a DMA does, through fp32 (nc.md:L247, L309), and the store moves 2 bytes
 * per element. The values are the same.
 *
 * Checked in program order (conservative box overlaps, Footprint.h): before the store, every
 * byte of the tile is written by such instructions since anything read it; no instruction
 * between the first of them and the store reads the tile; and after the store, nothing reads
 * the tile's bytes before a single write covers what it reads, but copies that round to the
 * same type (ForwardStores' on-chip copies of the stored tile), which then read the narrowed
 * tile. The narrowed tile starts where the fp32 one did and takes half its bytes.
 *
 * Assumes program order (groups in sequence, each group's instructions as selected), before
 * instruction scheduling and semaphores; runs after ForwardStores (its copies are readers).
 */

#include "neff/SelectInstructions.h"

namespace nhc::codegen {

/** Narrows the stores it can; returns how many. */
int narrow_stores(std::vector<SelectedInstr> &instrs);

} // namespace nhc::codegen

#endif
