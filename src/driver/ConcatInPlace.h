#ifndef NHC_DRIVER_CONCATINPLACE_H
#define NHC_DRIVER_CONCATINPLACE_H

/** \file
 * Concat inputs computed in place. A Concat along an axis with only units before it ([1, C, H,
 * W] along the channels, as a UNet joins its skip tensor to the upsampled path) has each input as
 * one contiguous block of its output, so the group that computes an input can store it straight
 * into that block, and the Concat copies nothing for it: the skip tensor crosses HBM once
 * instead of being stored, loaded and stored again. An input qualifies when a compiled group
 * computes it (not a view, a Transpose written into its reader's layout, another Concat or an
 * Im2Col), it is neither a graph input nor output, it has the Concat's storage type, and every
 * other node reading it reads its bytes as they are (no view of it, no Concat or Im2Col copy of
 * it), so that the block's offset is all its readers need.
 */

#include "graph/Graph.h"
#include "graph/ValueIndex.h"

#include <map>
#include <set>
#include <string>

namespace nhc {

struct InPlace {
    std::string concat_output; ///< the value whose bytes hold it
    int64_t offset = 0;        ///< bytes into that value
};

/** value -> where it is computed in place, for the Concats of `g` (`values`: who computes and
 *  reads each value); `taken` are values that already have their bytes elsewhere (graph inputs
 *  and outputs, views, transposed outputs). */
std::map<std::string, InPlace> place_concat_inputs(const Graph &g, const ValueIndex &u,
                                                   const std::set<std::string> &taken);

} // namespace nhc

#endif
