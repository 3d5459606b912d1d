#include "neff/TileWeights.h"

#include "neff/Footprint.h"
#include "support/Error.h"
#include "support/Parallel.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace nhc::codegen {

using neff::AccessPattern;
using neff::Instr;
using neff::MemSpace;

namespace {

/** How a weight is loaded: rows of `width` elements, P = `partitions` rows per load. */
struct LoadForm {
    int64_t width = 0, partitions = 0;
};

/** The weight's [rows, cols] and element size. */
struct WeightShape {
    int64_t rows = 0, cols = 0, elem = 0;
};

/** Whether `i` loads whole rows of a column tile of `w`, one per partition from partition 0. */
bool is_tile_load(const Instr &i, const WeightShape &w, LoadForm &form) {
    const AccessPattern &s = i.src, &d = i.dst;
    if (i.op != neff::Opcode::Dma || s.space != MemSpace::HBM || d.space != MemSpace::SBUF ||
        s.dtype != d.dtype || neff::dtype_size(s.dtype) != w.elem || s.dims.size() != 1 ||
        d.dims.size() != 1 || s.dims[0].step != w.elem || d.dims[0].step != 1 ||
        d.start_partition != 0 || d.num_partitions != s.num_partitions ||
        s.partition_step != w.cols * w.elem || d.dims[0].num != s.dims[0].num)
        return false;
    int64_t width = s.dims[0].num, p = s.num_partitions;
    int64_t row0 = s.offset / (w.cols * w.elem), col0 = s.offset % (w.cols * w.elem) / w.elem;
    if (width <= 0 || p <= 0 || w.cols % width != 0 || col0 % width != 0 || row0 % p != 0 ||
        w.rows % p != 0 || s.offset % w.elem != 0)
        return false;
    if (form.width == 0)
        form = {width, p};
    return form.width == width && form.partitions == p;
}

/** Byte position of element (r, c) in the tiled layout. */
int64_t tiled_offset(const WeightShape &w, const LoadForm &f, int64_t r, int64_t c) {
    int64_t chunks = w.rows / f.partitions;
    int64_t tile = c / f.width, p = r % f.partitions, chunk = r / f.partitions;
    return (((tile * f.partitions + p) * chunks + chunk) * f.width + c % f.width) * w.elem;
}

std::vector<uint8_t> tiled_bytes(const std::vector<uint8_t> &from, const WeightShape &w,
                                 const LoadForm &f) {
    std::vector<uint8_t> to(from.size());
    size_t run = size_t(f.width * w.elem);
    for (int64_t r = 0; r < w.rows; r++)
        for (int64_t c = 0; c < w.cols; c += f.width)
            std::memcpy(to.data() + tiled_offset(w, f, r, c),
                        from.data() + (r * w.cols + c) * w.elem, run);
    return to;
}

/** Points a load at the tiled layout: its partition's row of its K-chunk and column tile. */
void retarget(Instr &i, const WeightShape &w, const LoadForm &f) {
    int64_t row0 = i.src.offset / (w.cols * w.elem);
    int64_t col0 = i.src.offset % (w.cols * w.elem) / w.elem;
    i.src.offset = tiled_offset(w, f, row0, col0);
    i.src.partition_step = (w.rows / f.partitions) * f.width * w.elem;
}

/** Whether the load at `b` can be merged into the load at `a` (a < b, both retargeted). */
bool mergeable(const std::vector<SelectedInstr> &instrs, size_t a, size_t b) {
    const Instr &x = instrs[a].instr, &y = instrs[b].instr;
    int64_t bytes = x.dst.dims[0].num * neff::dtype_size(x.dst.dtype);
    if (y.src.var != x.src.var || y.src.partition_step != x.src.partition_step ||
        y.dst.num_partitions != x.dst.num_partitions ||
        y.src.offset != x.src.offset + x.src.dims[0].num * x.src.dims[0].step ||
        y.dst.offset != x.dst.offset + bytes)
        return false;
    neff::Footprint dst = neff::footprint(y.dst);
    std::vector<neff::Footprint> reads, writes;
    for (size_t k = a + 1; k < b; k++) {
        neff::instr_footprints(instrs[k].instr, reads, writes);
        for (const auto *v : {&reads, &writes})
            for (const neff::Footprint &f : *v)
                if (f.overlaps(dst))
                    return false;
    }
    return true;
}

} // namespace

TileWeightStats tile_weights(std::vector<SelectedInstr> &instrs, neff::Program &program,
                             const target::TargetInfo &target, int jobs) {
    TileWeightStats stats;
    // The loads of each weight, and whether every reader is one.
    std::map<int, std::vector<size_t>> loads;
    std::map<int, LoadForm> forms;
    std::map<int, bool> tileable;
    for (size_t k = 0; k < instrs.size(); k++) {
        const Instr &i = instrs[k].instr;
        for (const AccessPattern *ap : {&i.src, &i.src1, &i.dst, &i.pred, &i.accum}) {
            if (ap->space != MemSpace::HBM || ap->var < 0)
                continue;
            const neff::Variable &v = program.vars.at(size_t(ap->var));
            if (v.kind != neff::VarKind::Weight || v.shape.empty())
                continue;
            int64_t cols = v.shape.back();
            WeightShape w{v.num_elements() / cols, cols, neff::dtype_size(v.dtype)};
            bool ok = ap == &i.src && is_tile_load(i, w, forms[ap->var]);
            auto [it, fresh] = tileable.emplace(ap->var, ok);
            it->second = it->second && ok;
            if (ok)
                loads[ap->var].push_back(k);
        }
    }
    std::vector<int> weights;
    for (const auto &[var, ok] : tileable)
        if (ok)
            weights.push_back(var);
    auto shape_of = [&](const neff::Variable &v) {
        int64_t cols = v.shape.back();
        return WeightShape{v.num_elements() / cols, cols, neff::dtype_size(v.dtype)};
    };
    // The bytes, weight by weight on up to `jobs` threads (a copy of every weight).
    for_each_index(weights.size(), jobs, [&](size_t k) {
        neff::Variable &v = program.vars.at(size_t(weights[k]));
        if (!v.bytes().empty())
            v.set_bytes(tiled_bytes(v.bytes(), shape_of(v), forms.at(weights[k])));
    });
    std::vector<bool> merged_away(instrs.size(), false);
    // A run of at least 4 KiB per partition (nc.md:L259) needs this many K-chunks per load.
    int64_t saturating = target.dma.saturating_row_bytes;
    for (int var : weights) {
        WeightShape w = shape_of(program.vars.at(size_t(var)));
        const LoadForm &f = forms.at(var);
        stats.weights++;
        const std::vector<size_t> &ks = loads.at(var);
        for (size_t k : ks)
            retarget(instrs[k].instr, w, f);
        int64_t per_load =
            std::max<int64_t>(1, (saturating + f.width * w.elem - 1) / (f.width * w.elem));
        // Merge each load with the next ones of its run, up to per_load K-chunks.
        for (size_t a = 0; a < ks.size(); a++) {
            if (merged_away[ks[a]])
                continue;
            Instr &head = instrs[ks[a]].instr;
            int64_t chunks = 1;
            for (size_t b = a + 1; b < ks.size() && chunks < per_load; b++) {
                if (merged_away[ks[b]])
                    continue;
                // Loads far apart in program order stay apart (a bound on compile time).
                if (ks[b] - ks[a] > 256 || !mergeable(instrs, ks[a], ks[b]))
                    break;
                // One more K-chunk: the tiled layout puts it right after the head's in each
                // partition, as the destination does.
                head.src.dims[0].num += instrs[ks[b]].instr.src.dims[0].num;
                head.dst.dims[0].num += instrs[ks[b]].instr.dst.dims[0].num;
                merged_away[ks[b]] = true;
                stats.loads_merged++;
                chunks++;
            }
        }
    }
    if (stats.loads_merged > 0) {
        std::vector<SelectedInstr> kept;
        kept.reserve(instrs.size() - size_t(stats.loads_merged));
        for (size_t k = 0; k < instrs.size(); k++)
            if (!merged_away[k])
                kept.push_back(std::move(instrs[k]));
        instrs = std::move(kept);
    }
    return stats;
}

} // namespace nhc::codegen
