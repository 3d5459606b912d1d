#ifndef NHC_AUTOSCHEDULER_WORKLOAD_H
#define NHC_AUTOSCHEDULER_WORKLOAD_H

/** \file
 * A group's workload (issue 16): what its schedule depends on, written as canonical text, so
 * that identical groups (the twelve layers of BERT-base) are scheduled once. The text holds the
 * target, each node's operator, attributes, auto-cast and folded input permutations, how each
 * input is wired (a group input, or output j of node i of the group), the type and shape of every
 * value the group reads or writes, which values leave the group and the permutation they are
 * stored in, and the bytes of small
 * constants (shapes, axes, scalars: values an algorithm may fold). Node and value names, the
 * bytes of weights and the values of float attributes other than 0 and +-1 are left out: a
 * schedule does not depend on them (the lowering does: its key adds `literals`).
 */

#include "schedules/Group.h"

#include <map>
#include <string>
#include <vector>

namespace nhc::autosched {

struct Workload {
    std::string text;     ///< the canonical description (the key)
    std::string literals; ///< the exact values of the float attributes `text` writes as `f`
    std::string hash;     ///< 16 hex digits of its FNV-1a 64 hash, for logs and the tuning database
};

/** The workload of a group built from `g` (sched::build_group), whose outputs named in
 *  `output_perm` are stored permuted. */
Workload workload_of(const Graph &g, const sched::Group &group,
                     const std::map<std::string, std::vector<int64_t>> &output_perm,
                     const std::string &target);

} // namespace nhc::autosched

#endif
