#ifndef NHC_NEFF_INSERTSEMAPHORES_H
#define NHC_NEFF_INSERTSEMAPHORES_H

/** \file
 * Orders selected instructions into per-engine streams and synchronises them (DESIGN.md §6):
 * every compute engine and every DMA queue counts its completed instructions in a semaphore of
 * its own; an instruction waits for the count that covers the last writer of every region it
 * reads or writes (RAW, WAW) and for the readers of every region it overwrites (WAR), as
 * HazardTracker (Hazards.h) finds them. Instructions of one compute engine run in order, so they
 * never wait on each other; transfers of one DMA queue only start and complete in order and may
 * move data at the same time on different DMA engines, so a transfer does wait for the earlier
 * transfers of its queue whose bytes it shares (the simulator's race detector holds it to that).
 */

#include "neff/SelectInstructions.h"

namespace nhc::codegen {

/** Semaphore of an engine's own completions, and of DMA queue q (see the file comment). */
uint32_t engine_semaphore(neff::Engine e);
uint32_t dma_queue_semaphore(int queue);

/** Appends the instructions to the program's streams with waits and signals. */
void insert_semaphores(std::vector<SelectedInstr> &instrs, neff::Program &program);

} // namespace nhc::codegen

#endif
