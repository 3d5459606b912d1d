#include "neff/TileWeights.h"

#include "neff/Footprint.h"
#include "support/Error.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

namespace nhc::codegen {

using neff::AccessPattern;
using neff::Instr;
using neff::MemSpace;

namespace {

/** The weight's [rows, cols] and element size. */
struct WeightShape {
    int64_t rows = 0, cols = 0, elem = 0;
};

/** A load's first row and column, and its width. */
struct TileLoad {
    int64_t row0 = 0, col0 = 0, width = 0;
};

/** The column tiles the loads read, in column order (a last tile shifted inward overlaps the one
 *  before it: Halide's split of 50,257 columns into 99 tiles of 508), each stored as
 *  [partition][K-chunk][width] at `base` (elements) in the new layout. */
struct Tiling {
    int64_t partitions = 0, chunks = 0, elements = 0; ///< elements: the new layout's size
    struct Tile {
        int64_t col0 = 0, width = 0, base = 0;
    };
    std::map<int64_t, Tile> tiles; ///< by first column

    int64_t offset(const Tile &t, int64_t r, int64_t c, int64_t elem) const {
        int64_t p = r % partitions, chunk = r / partitions;
        return (t.base + (p * chunks + chunk) * t.width + c - t.col0) * elem;
    }
};

/** Whether `i` loads whole rows of a column range of `w`, one per partition from partition 0,
 *  the first row a multiple of P; if so, where. */
bool is_tile_load(const Instr &i, const WeightShape &w, TileLoad &at) {
    const AccessPattern &s = i.src, &d = i.dst;
    if (i.op != neff::Opcode::Dma || s.space != MemSpace::HBM || d.space != MemSpace::SBUF ||
        s.dtype != d.dtype || neff::dtype_size(s.dtype) != w.elem || s.dims.size() != 1 ||
        d.dims.size() != 1 || s.dims[0].step != w.elem || d.dims[0].step != 1 ||
        d.start_partition != 0 || d.num_partitions != s.num_partitions ||
        s.partition_step != w.cols * w.elem || d.dims[0].num != s.dims[0].num ||
        s.offset % w.elem != 0)
        return false;
    int64_t p = s.num_partitions;
    at = {s.offset / (w.cols * w.elem), s.offset % (w.cols * w.elem) / w.elem, s.dims[0].num};
    return at.width > 0 && p > 0 && at.row0 % p == 0 && w.rows % p == 0 &&
           at.col0 + at.width <= w.cols;
}

/** The tiling of a weight whose loads are `at` (P = `partitions`), when they read column tiles
 *  that cover every column, each tile at one width, consecutive tiles overlapping at most as a
 *  last tile shifted inward does; or nullopt. */
std::optional<Tiling> tiling_of(const std::vector<TileLoad> &at, int64_t partitions,
                                const WeightShape &w) {
    Tiling t;
    t.partitions = partitions;
    t.chunks = w.rows / partitions;
    for (const TileLoad &l : at) {
        auto [it, fresh] = t.tiles.emplace(l.col0, Tiling::Tile{l.col0, l.width, 0});
        if (it->second.width != l.width)
            return std::nullopt;
    }
    int64_t end = 0;
    for (auto &[col0, tile] : t.tiles) {
        bool last = col0 + tile.width == w.cols;
        if (col0 > end || (col0 < end && !last)) // a gap, or an overlap not at the end
            return std::nullopt;
        tile.base = t.elements;
        t.elements += tile.width * w.rows;
        end = col0 + tile.width;
    }
    if (end != w.cols)
        return std::nullopt;
    return t;
}

/** Makes bytes [offset, offset + size) of `from`'s weight in the tiled layout `t`, from the rows
 *  of its [rows, cols] layout: each tile's segments are rows of the tile's columns, in
 *  [partition][K-chunk] order. */
void read_tiled(const neff::Variable &from, const WeightShape &w, const Tiling &t, size_t offset,
                size_t size, uint8_t *dst) {
    const int64_t begin = int64_t(offset), end = int64_t(offset + size);
    for (const auto &[col0, tile] : t.tiles) {
        const int64_t segment = tile.width * w.elem, first = tile.base * w.elem;
        const int64_t last = first + segment * w.rows;
        for (int64_t at = std::max(begin, first); at < std::min(end, last);) {
            int64_t index = (at - first) / segment, within = (at - first) % segment;
            int64_t len = std::min(segment - within, end - at);
            int64_t row = index % t.chunks * t.partitions + index / t.chunks;
            from.read_bytes(size_t((row * w.cols + col0) * w.elem + within), size_t(len),
                            dst + (at - begin));
            at += len;
        }
    }
}

/** Points a load at the tiled layout: its partition's row of its K-chunk and column tile. */
void retarget(Instr &i, const WeightShape &w, const Tiling &t) {
    int64_t row0 = i.src.offset / (w.cols * w.elem);
    int64_t col0 = i.src.offset % (w.cols * w.elem) / w.elem;
    const Tiling::Tile &tile = t.tiles.at(col0);
    i.src.offset = t.offset(tile, row0, col0, w.elem);
    i.src.partition_step = t.chunks * tile.width * w.elem;
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
                             const target::TargetInfo &target) {
    TileWeightStats stats;
    // The loads of each weight, and whether every reader is one.
    auto shape_of = [&](const neff::Variable &v) {
        int64_t cols = v.shape.back();
        return WeightShape{v.num_elements() / cols, cols, neff::dtype_size(v.dtype)};
    };
    std::map<int, std::vector<size_t>> loads;
    std::map<int, std::vector<TileLoad>> places; // of each load, in the order of `loads`
    std::map<int, int64_t> partitions;
    std::map<int, bool> tileable;
    for (size_t k = 0; k < instrs.size(); k++) {
        const Instr &i = instrs[k].instr;
        for (const AccessPattern *ap : {&i.src, &i.src1, &i.dst, &i.pred, &i.accum}) {
            if (ap->space != MemSpace::HBM || ap->var < 0)
                continue;
            const neff::Variable &v = program.vars.at(size_t(ap->var));
            if (v.kind != neff::VarKind::Weight || v.shape.empty() || v.shape.back() <= 0)
                continue;
            TileLoad at;
            bool ok = ap == &i.src && is_tile_load(i, shape_of(v), at);
            int64_t &p = partitions[ap->var];
            ok = ok && (p == 0 || p == i.src.num_partitions);
            if (ok)
                p = i.src.num_partitions;
            auto [it, fresh] = tileable.emplace(ap->var, ok);
            it->second = it->second && ok;
            if (ok) {
                loads[ap->var].push_back(k);
                places[ap->var].push_back(at);
            }
        }
    }
    std::vector<int> weights;
    std::map<int, Tiling> tilings;
    for (const auto &[var, ok] : tileable) {
        if (!ok)
            continue;
        const neff::Variable &v = program.vars.at(size_t(var));
        if (std::optional<Tiling> t = tiling_of(places.at(var), partitions.at(var), shape_of(v))) {
            weights.push_back(var);
            tilings.emplace(var, std::move(*t));
        }
    }
    // The bytes, made in the new layout as they are read (the NEFF writer's pieces): no copy of
    // the weights. A last tile shifted inward stores the columns it shares with the tile before
    // it twice: the variable grows by them, [rows, stored columns].
    std::vector<WeightShape> shapes; // as the loads read them, before a last tile grows them
    for (int var : weights) {
        neff::Variable &v = program.vars.at(size_t(var));
        const WeightShape w = shapes.emplace_back(shape_of(v));
        const Tiling &t = tilings.at(var);
        if (v.has_bytes()) {
            auto from = std::make_shared<const neff::Variable>(v);
            v.make_bytes_when_read(size_t(t.elements * w.elem),
                                   [from, w, t](size_t offset, size_t size, uint8_t *dst) {
                                       read_tiled(*from, w, t, offset, size, dst);
                                   });
        }
        if (t.elements != w.rows * w.cols)
            v.shape = {w.rows, t.elements / w.rows};
    }
    std::vector<bool> merged_away(instrs.size(), false);
    // A run of at least 4 KiB per partition (nc.md:L259) needs this many K-chunks per load.
    int64_t saturating = target.dma.saturating_row_bytes;
    for (size_t n = 0; n < weights.size(); n++) {
        int var = weights[n];
        const WeightShape &w = shapes[n];
        stats.weights++;
        const std::vector<size_t> &ks = loads.at(var);
        for (size_t k : ks)
            retarget(instrs[k].instr, w, tilings.at(var));
        // Merge each load with the next ones of its run, up to the K-chunks that make a
        // saturating run of its tile's rows.
        for (size_t a = 0; a < ks.size(); a++) {
            if (merged_away[ks[a]])
                continue;
            Instr &head = instrs[ks[a]].instr;
            int64_t row_bytes = head.src.dims[0].num * w.elem;
            int64_t per_load = std::max<int64_t>(1, (saturating + row_bytes - 1) / row_bytes);
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
