#include "driver/LoweringCache.h"

#include "support/Error.h"

namespace nhc {

namespace {

/** A group's HBM values in a fixed order: its inputs, then its outputs. */
std::vector<std::string> hbm_values(const sched::Group &grp) {
    std::vector<std::string> values;
    for (const sched::GroupInput &in : grp.inputs)
        values.push_back(in.value);
    for (const sched::GroupOutput &out : grp.outputs)
        values.push_back(out.value);
    return values;
}

} // namespace

codegen::LoweredGroup LoweringCache::lowered(const sched::Group &grp, const std::string &workload,
                                             const sched::SchedulePlan &plan,
                                             const std::function<codegen::LoweredGroup()> &lower) {
    std::string key = workload + "plan " + plan.describe() + "\n";
    std::vector<std::string> values = hbm_values(grp);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
        lowered_++;
        codegen::LoweredGroup lg = lower();
        entries_.emplace(key, Entry{lg, values});
        return lg;
    }
    reused_++;
    const Entry &first = it->second;
    nhc_assert(first.values.size() == values.size(), "groups of one workload with "
                                                         << first.values.size() << " and "
                                                         << values.size() << " HBM values");
    std::map<std::string, std::string> rebound; // the first group's value -> this group's
    for (size_t i = 0; i < values.size(); i++) {
        auto [at, fresh] = rebound.emplace(first.values[i], values[i]);
        nhc_assert(fresh || at->second == values[i],
                   "value '" << first.values[i] << "' is two values of a group of its workload");
    }
    codegen::LoweredGroup lg = first.lowered;
    for (auto &[buffer, value] : lg.hbm_buffers) {
        auto v = rebound.find(value);
        nhc_assert(v != rebound.end(), "HBM buffer '" << buffer << "' of value '" << value
                                                      << "' is not among its group's values");
        value = v->second;
    }
    return lg;
}

} // namespace nhc
