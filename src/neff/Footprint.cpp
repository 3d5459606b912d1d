#include "neff/Footprint.h"

namespace nhc::neff {

std::optional<ByteIntervals> byte_intervals(const AccessPattern &ap, int64_t max_runs) {
    int64_t es = dtype_size(ap.dtype);
    bool hbm = ap.space == MemSpace::HBM;
    std::vector<Dim> dims; // in bytes, outermost first
    if (hbm && ap.num_partitions > 1)
        dims.push_back({ap.partition_step, ap.num_partitions});
    for (const Dim &d : ap.dims)
        dims.push_back({hbm ? d.step : d.step * es, d.num});
    int64_t run = es; // contiguous innermost bytes
    while (!dims.empty() && (dims.back().step == run || dims.back().num == 1)) {
        run *= dims.back().step == run ? dims.back().num : 1;
        dims.pop_back();
    }
    int64_t rows = 1;
    for (const Dim &d : dims)
        rows *= d.num;
    if (rows > max_runs)
        return std::nullopt;
    ByteIntervals out;
    out.reserve(static_cast<size_t>(rows));
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t r = 0; r < rows; r++) {
        int64_t start = ap.offset;
        for (size_t d = 0; d < dims.size(); d++)
            start += idx[d] * dims[d].step;
        out.emplace_back(start, start + run);
        for (size_t d = dims.size(); d-- > 0;) { // odometer, innermost first
            if (++idx[d] < dims[d].num)
                break;
            idx[d] = 0;
        }
    }
    std::sort(out.begin(), out.end());
    ByteIntervals merged;
    for (const auto &iv : out) {
        if (!merged.empty() && iv.first <= merged.back().second)
            merged.back().second = std::max(merged.back().second, iv.second);
        else
            merged.push_back(iv);
    }
    return merged;
}

bool intervals_meet(const ByteIntervals &a, const ByteIntervals &b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (a[i].first < b[j].second && b[j].first < a[i].second)
            return true;
        (a[i].second <= b[j].second ? i : j)++;
    }
    return false;
}

bool intervals_cover(const ByteIntervals &outer, const ByteIntervals &inner) {
    size_t i = 0;
    for (const auto &iv : inner) {
        while (i < outer.size() && outer[i].second <= iv.first)
            i++;
        if (i == outer.size() || outer[i].first > iv.first || outer[i].second < iv.second)
            return false;
    }
    return true;
}

} // namespace nhc::neff
