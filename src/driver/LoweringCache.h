#ifndef NHC_DRIVER_LOWERINGCACHE_H
#define NHC_DRIVER_LOWERINGCACHE_H

/** \file
 * Halide lowering done once per workload and plan (issue 16: "identical workloads are scheduled
 * once"). BERT-base's twelve layers are twelve copies of the same seven groups; lowering a group
 * through Halide is most of code generation's time, and its result depends only on what the
 * group's workload text states (autoscheduler/Workload.h: operators, attributes, shapes, types,
 * wiring, small constants, target) with its float attributes' exact values (Workload::literals)
 * and on the plan its default schedule was built from. A later
 * group with the same workload and plan takes the first one's lowered Stmt as it is: its stage
 * and buffer names are the first group's, which is harmless because they are internal to the
 * Stmt (instructions carry the group's own node name), and only the map from HBM buffers to
 * graph values is rebound, input for input and output for output, to the later group's values.
 * Groups scheduled by a --schedule block are always lowered: a block names its nodes' stages.
 */

#include "neff/LowerGroup.h"
#include "schedules/SchedulePlan.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nhc {

class LoweringCache {
public:
    /** The lowering of `grp`, whose workload text and literals are `workload` and whose default
     *  schedule was built from `plan`: rebound from the first group of that workload and plan,
     *  or `lower()` for the first. */
    codegen::LoweredGroup lowered(const sched::Group &grp, const std::string &workload,
                                  const sched::SchedulePlan &plan,
                                  const std::function<codegen::LoweredGroup()> &lower);
    int lowered_count() const { return lowered_; }
    int reused_count() const { return reused_; }

private:
    struct Entry {
        codegen::LoweredGroup lowered;
        std::vector<std::string> values; ///< the first group's inputs, then its outputs
    };
    std::map<std::string, Entry> entries_; ///< by workload text and plan
    int lowered_ = 0, reused_ = 0;
};

} // namespace nhc

#endif
