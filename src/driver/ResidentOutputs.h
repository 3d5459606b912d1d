#ifndef NHC_DRIVER_RESIDENTOUTPUTS_H
#define NHC_DRIVER_RESIDENTOUTPUTS_H

/** \file
 * Outputs kept in SBUF for their readers (sched::SchedulePlan::output_resident, a whole-model
 * move of -O3): the SBUF regions a group's output tiles keep after the group, which the groups
 * compiled after it leave alone until the last group that reads the output has been compiled
 * (through views, which have no group of their own). Each group's instruction selection is
 * given the regions kept at that point (codegen::SelectOptions::reserved_sbuf); the loads of
 * the kept tiles then find them intact, and their readers read them where they are, or copy
 * them (neff/ForwardStores.h).
 */

#include "graph/Graph.h"
#include "graph/ValueIndex.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace nhc {

class ResidentOutputs {
public:
    using Region = std::pair<int64_t, int64_t>; ///< offset, bytes per partition

    /** `groups`: every group in compile order, each its nodes; `values`: who computes and reads
     *  each value of `g`. */
    ResidentOutputs(const Graph &g, const ValueIndex &values,
                    const std::vector<std::vector<const Node *>> &groups);

    /** Whether group `i`'s outputs are read by later groups, all of them the next one: kept
     *  longer, the tiles would take SBUF from the groups in between, and change their best
     *  plans (the BERT-base layer at batch 8: Q, K and V kept for attention lost its Q/K
     *  transposes' plan, 364.1 -> 390.2 us). */
    bool may_keep(size_t i) const;
    /** The regions kept when the next group is compiled. */
    std::vector<Region> reserved() const;
    /** Group `i` kept `regions` for its outputs' readers. */
    void keep(size_t i, const std::vector<Region> &regions);
    /** Group `i` has been compiled: the regions no later group reads are free again. */
    void compiled(size_t i);

private:
    struct Kept {
        size_t until; ///< the last group that reads them
        std::vector<Region> regions;
    };
    std::vector<size_t> last_reader_; ///< per group: the last group reading its outputs (or itself)
    std::vector<Kept> kept_;
};

} // namespace nhc

#endif
