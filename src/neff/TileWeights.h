#ifndef NHC_NEFF_TILEWEIGHTS_H
#define NHC_NEFF_TILEWEIGHTS_H

/** \file
 * Lays matmul weights out in HBM in the order the program loads them, so that their loads move
 * long contiguous rows (issue 16's whole-model move, -O2 and -O3).
 *
 * A weight [K, N] stored row-major is staged with K on partitions, one K-chunk of P rows at a
 * time: each load moves one row of the weight (or of a column tile of it) per partition. A DMA's
 * rate falls with its contiguous run per partition (nc.md:L256-259: full at 4 KiB and above;
 * target::dma_row_efficiency): BERT-base's 768-wide bf16 weights load in 1.5 KiB rows, at 56%.
 * Compile-time constants can be stored in any order, so each weight whose every load has that
 * form is stored as [column tile][partition][K-chunk][tile width]: partition p's rows of all
 * K-chunks are then adjacent, and loads of consecutive K-chunks into adjacent SBUF bytes merge
 * into one transfer of rows of several chunks, enough of them for a 4 KiB run (fewer transfers
 * too, each paying the fixed cost of nc.md:L252).
 *
 * A weight is re-laid out only when every instruction that reads it is such a load: HBM to SBUF
 * in the weight's own type, P partitions from partition 0, each partition one row of a column
 * tile, the first row a multiple of P, all loads of one P, K a multiple of P, and the tiles
 * covering the columns, each at one width. The last tile may be narrower, or shifted inward to
 * end at the last column (Halide's split of GPT-2's 50,257-word head into 99 tiles of 508): the
 * columns it shares with the tile before are then stored twice, and the weight grows by them. Two
 * loads merge only when the later one's destination follows the earlier one's in every
 * partition, reads the next K-chunk of the same column tile, and nothing between them in program
 * order touches the later one's destination bytes; the merged load takes the earlier one's place.
 *
 * Assumes program order (before instruction scheduling and semaphores), as ForwardStores does.
 */

#include "neff/SelectInstructions.h"
#include "target/Target.h"

namespace nhc::codegen {

struct TileWeightStats {
    int weights = 0;      ///< weights re-laid out
    int loads_merged = 0; ///< loads folded into an earlier one
};

/** Re-lays out the weights of `program` whose loads allow it, and merges their loads (see the
 *  file comment); a weight's bytes are then made in the new layout as they are read
 *  (neff::Variable::make_bytes), not copied. */
TileWeightStats tile_weights(std::vector<SelectedInstr> &instrs, neff::Program &program,
                             const target::TargetInfo &target);

} // namespace nhc::codegen

#endif
