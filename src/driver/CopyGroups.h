#ifndef NHC_DRIVER_COPYGROUPS_H
#define NHC_DRIVER_COPYGROUPS_H

/** \file
 * Groups that only move data between HBM tensors, emitted as DMA instructions directly (no
 * Halide lowering): a flat copy (a view whose output is a graph output), Concat (each input into
 * its slice, through SBUF in tiles of all the partitions: an HBM -> HBM transfer has no SBUF
 * side to spread over the DMA engines, and one engine moves it, target::dma_split) and
 * graph/ConvIm2Col's Im2Col (a zero fill, then one DMA per image, channel and kernel tap).
 */

#include "graph/Graph.h"
#include "neff/SelectInstructions.h"

#include <functional>
#include <string>
#include <vector>

namespace nhc::codegen_copies {

/** Where the copies go: the graph, the program (variables), the HBM variable of a value, and
 *  the selected instructions to append to. With a target and the SBUF allocation the groups
 *  carry (their history and the regions kept resident), Concat stages its copies through SBUF;
 *  without, it copies HBM -> HBM. */
struct CopyTarget {
    const Graph &graph;
    neff::Program &program;
    std::function<int(const std::string &)> var;
    std::vector<codegen::SelectedInstr> &out;
    const target::TargetInfo *target = nullptr;
    codegen::AllocationHistory *sbuf_history = nullptr;
    std::vector<std::pair<int64_t, int64_t>> reserved_sbuf = {};
    /** Concat inputs already computed in the output (driver/ConcatInPlace.h): not copied. */
    std::function<bool(const std::string &)> in_place = {};
};

void flat_copy(const CopyTarget &t, int from_var, int to_var, const std::string &name);
void concat(const CopyTarget &t, const Node &n);
void im2col(const CopyTarget &t, const Node &n);

} // namespace nhc::codegen_copies

#endif
