#include "driver/LoweringCache.h"

namespace nhc {

codegen::LoweredGroup LoweringCache::lowered(const sched::Group &grp, const std::string &workload,
                                             const sched::SchedulePlan &plan,
                                             const std::function<codegen::LoweredGroup()> &lower) {
    std::string key = workload + "plan " + plan.describe() + "\n";
    std::vector<std::string> values = sched::hbm_values(grp);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
        lowered_++;
        codegen::LoweredGroup lg = lower();
        entries_.emplace(key, Entry{lg, values});
        return lg;
    }
    reused_++;
    return codegen::rebound(it->second.lowered, it->second.values, values);
}

} // namespace nhc
