#ifndef NHC_NEFF_DMACOST_H
#define NHC_NEFF_DMACOST_H

/** \file
 * What a DMA instruction asks of the DMA engines (target::DmaQuery): the bytes they move, the
 * HBM bytes, the descriptors and the partitions that choose the engines. One definition for the
 * simulator, which charges it, and the compiler's list scheduler, which estimates with it.
 */

#include "neff/Isa.h"
#include "target/CostModel.h"

namespace nhc::neff {

/** The cost query of DMA instruction `i` (its operands' element counts must match). */
target::DmaQuery dma_query(const Instr &i);

} // namespace nhc::neff

#endif
