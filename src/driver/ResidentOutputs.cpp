#include "driver/ResidentOutputs.h"

#include "graph/ValueIndex.h"
#include "support/Error.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

namespace nhc {

ResidentOutputs::ResidentOutputs(const Graph &g, const ValueIndex &values,
                                 const std::vector<std::vector<const Node *>> &groups) {
    std::map<const Node *, size_t> group_of; // looked up only, never iterated
    for (size_t i = 0; i < groups.size(); i++)
        for (const Node *n : groups[i])
            group_of[n] = i;
    // The last group that reads `value`, looking through nodes without a group (views).
    std::function<size_t(const std::string &, size_t)> last_reading = [&](const std::string &value,
                                                                          size_t last) {
        for (const Node *r : values.consumers_of(value)) {
            auto it = group_of.find(r);
            if (it != group_of.end())
                last = std::max(last, it->second);
            else
                for (const std::string &out : r->outputs)
                    last = last_reading(out, last);
        }
        return last;
    };
    for (size_t i = 0; i < groups.size(); i++) {
        size_t last = i;
        for (const Node *n : groups[i])
            for (const std::string &out : n->outputs)
                last = last_reading(out, last);
        last_reader_.push_back(last);
    }
}

bool ResidentOutputs::may_keep(size_t i) const {
    nhc_assert(i < last_reader_.size(), "group " << i << " out of range");
    return last_reader_[i] == i + 1;
}

std::vector<ResidentOutputs::Region> ResidentOutputs::reserved() const {
    std::vector<Region> all;
    for (const Kept &k : kept_)
        all.insert(all.end(), k.regions.begin(), k.regions.end());
    return all;
}

void ResidentOutputs::keep(size_t i, const std::vector<Region> &regions) {
    if (!regions.empty())
        kept_.push_back({last_reader_.at(i), regions});
}

void ResidentOutputs::compiled(size_t i) {
    kept_.erase(
        std::remove_if(kept_.begin(), kept_.end(), [&](const Kept &k) { return k.until <= i; }),
        kept_.end());
}

} // namespace nhc
