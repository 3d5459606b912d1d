#include "neff/ForwardStores.h"

#include "neff/Footprint.h"

#include <algorithm>
#include <map>
#include <optional>

namespace nhc::codegen {

using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;

namespace {

/** Instructions between a store and its load that are searched for writes to the stored tiles;
 *  a load further away is left as it is (a bound on compile time, not a hardware figure). */
constexpr int64_t kMaxDistance = 1 << 16;

/** A transfer's operand as rows of contiguous elements: row r on partition first + r (SBUF) or
 *  at byte offset + r * row_step (HBM), `elems` elements each. */
struct Rows {
    int64_t first = 0, rows = 0, offset = 0, row_step = 0, elems = 0;
};

std::optional<Rows> rows_of(const AccessPattern &ap) {
    const bool hbm = ap.space == MemSpace::HBM;
    const int64_t unit = hbm ? neff::dtype_size(ap.dtype) : 1; // HBM steps are bytes
    Rows r{hbm ? 0 : ap.start_partition, ap.num_partitions, ap.offset, hbm ? ap.partition_step : 0,
           1};
    // The free dims, innermost first, must each continue the run of the ones inside them.
    for (auto d = ap.dims.rbegin(); d != ap.dims.rend(); ++d) {
        if (d->num == 1)
            continue;
        if (d->step != unit * r.elems)
            return std::nullopt;
        r.elems *= d->num;
    }
    return r;
}

/** The float types whose casts an engine copy makes as a DMA does, through fp32 (nc.md:L247,
 *  L309; fp8 left out, unchecked). */
bool plain_float(neff::DType t) {
    return t == neff::DType::F32 || t == neff::DType::BF16 || t == neff::DType::F16 ||
           t == neff::DType::TF32;
}

/** Whether `var` is one of the program's intermediate tensors (not an input, output or weight). */
bool is_scratch(const neff::Program &program, int var) {
    return var >= 0 && var < static_cast<int>(program.vars.size()) &&
           program.vars[static_cast<size_t>(var)].kind == neff::VarKind::Scratch;
}

/** A DMA between SBUF and HBM of float types, with no other operand; of one type unless
 *  `may_cast` (a cast through fp32, nc.md:L247, as an engine's copy does, nc.md:L309). */
bool plain_transfer(const Instr &i, MemSpace from, MemSpace to, bool may_cast = false) {
    return i.op == neff::Opcode::Dma && i.src.space == from && i.dst.space == to &&
           (may_cast || i.src.dtype == i.dst.dtype) && plain_float(i.src.dtype) &&
           plain_float(i.dst.dtype) && !i.src1.present() && !i.pred.present() && !i.accum.present();
}

int64_t floor_div(int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

/** Part of a load served by one store: load rows [j0, j1) and load columns [c0, c1) (elements),
 *  and where the store holds them on chip. */
struct Piece {
    int store = -1;
    neff::DType src_type = neff::DType::F32; ///< as the store read it on chip
    int64_t j0 = 0, j1 = 0, c0 = 0, c1 = 0;
    int64_t src_partition = 0, src_offset = 0;
};

/** A store (or an earlier load seen as the store it mirrors: its SBUF tile holds the HBM bytes it
 *  read, as a store's holds those it wrote), by reference: its tile on chip and its bytes in HBM.
 */
struct StoreView {
    const AccessPattern &src; ///< on chip
    const AccessPattern &dst; ///< in HBM
};

/** The piece of load `l` that store `s` wrote; nullopt if they share no element; a piece with
 *  store -1 if they share elements that cannot be forwarded. */
std::optional<Piece> piece_of(const Instr &l, const StoreView &s, int store_index, bool from_load) {
    Piece bad;
    auto lh = rows_of(l.src), ld = rows_of(l.dst), sh = rows_of(s.dst), ss = rows_of(s.src);
    // One cast at most, on either side: the copy makes it, through fp32 as both would. An
    // earlier load's tile holds its own rounding of the bytes: usable if it made none, or the
    // same one as this load (same source, same type).
    bool casts_twice = s.src.dtype != s.dst.dtype && l.src.dtype != l.dst.dtype;
    if (from_load)
        casts_twice = s.src.dtype != s.dst.dtype && s.src.dtype != l.dst.dtype;
    if (!lh || !ld || !sh || !ss || l.src.dtype != s.dst.dtype || casts_twice ||
        lh->elems != ld->elems || lh->rows != ld->rows || sh->elems != ss->elems ||
        sh->rows != ss->rows)
        return bad;
    const int64_t es = neff::dtype_size(l.src.dtype);
    if (lh->rows > 1 && sh->rows > 1 && lh->row_step != sh->row_step)
        return bad;
    const int64_t row_step = sh->rows > 1 ? sh->row_step : lh->row_step;
    // Rows longer than their step would overlap the next one.
    if ((sh->rows > 1 && sh->elems * es > row_step) || (lh->rows > 1 && lh->elems * es > row_step))
        return bad;
    // Load row j meets store row j + shift for the shifts its bytes reach; each such shift must
    // be the one that keeps the partition (an engine copy moves no data across partitions).
    const int64_t d = lh->offset - sh->offset;
    int64_t first_shift = 0, last_shift = 0;
    if (row_step > 0) {
        first_shift = floor_div(d - (sh->elems - 1) * es, row_step);
        last_shift = floor_div(d + (lh->elems - 1) * es, row_step);
    }
    if (last_shift - first_shift > 64)
        return bad;
    const int64_t same_partition = ld->first - ss->first;
    std::optional<Piece> found;
    for (int64_t shift = first_shift; shift <= last_shift; shift++) {
        const int64_t col = d - shift * row_step; // load column 0 at this byte of the store row
        if (col % es != 0)
            return bad;
        const int64_t col_e = col / es;
        Piece p;
        p.store = store_index;
        p.j0 = std::max<int64_t>(0, -shift);
        p.j1 = std::min(lh->rows, sh->rows - shift);
        p.c0 = std::max<int64_t>(0, -col_e);
        p.c1 = std::min(lh->elems, sh->elems - col_e);
        if (p.j0 >= p.j1 || p.c0 >= p.c1)
            continue;
        if (shift != same_partition)
            return bad;
        p.src_type = s.src.dtype;
        p.src_partition = ss->first + p.j0 + shift;
        p.src_offset = ss->offset + (p.c0 + col_e) * neff::dtype_size(s.src.dtype);
        found = p;
    }
    return found;
}

bool pieces_overlap(const Piece &a, const Piece &b) {
    return a.j0 < b.j1 && b.j0 < a.j1 && a.c0 < b.c1 && b.c0 < a.c1;
}

/** Whether an instruction in (from, to) writes the SBUF bytes of `box`. */
bool written_between(const std::vector<SelectedInstr> &instrs, int from, int to,
                     const neff::Footprint &box) {
    for (int k = from + 1; k < to; k++) {
        const Instr &i = instrs[static_cast<size_t>(k)].instr;
        for (const AccessPattern *w : {&i.dst, &i.accum})
            if (w->space == MemSpace::SBUF && neff::footprint(*w).overlaps(box))
                return true;
    }
    return false;
}

AccessPattern sbuf_run(neff::DType t, int64_t partition, int64_t partitions, int64_t offset,
                       int64_t elems) {
    AccessPattern ap;
    ap.space = MemSpace::SBUF;
    ap.dtype = t;
    ap.start_partition = static_cast<int32_t>(partition);
    ap.num_partitions = static_cast<int32_t>(partitions);
    ap.offset = offset;
    ap.dims = {{1, elems}};
    return ap;
}

/** Whether an engine may copy between these tiles: each starts where a tile of its size may
 *  (target::partition_start_allowed; a DMA has no such rule, so a load may land where a copy
 *  cannot). */
bool engine_can_copy(const Instr &c, const target::TargetInfo &t) {
    return target::partition_start_allowed(t, c.src.start_partition, c.src.num_partitions) &&
           target::partition_start_allowed(t, c.dst.start_partition, c.dst.num_partitions);
}

/** The copy of an earlier load's tile that replaces load `li` when that load read the same
 *  bytes the same way (any access pattern: a row broadcast to every partition too) into tiles
 *  of the same type and shape on the same partitions, intact since; or nullopt. */
std::optional<Instr> same_load(const std::vector<SelectedInstr> &instrs, int li,
                               const std::vector<int> &loads, const target::TargetInfo &t) {
    const Instr &l = instrs[static_cast<size_t>(li)].instr;
    for (auto it = loads.rbegin(); it != loads.rend() && li - *it <= kMaxDistance; ++it) {
        const Instr &e = instrs[static_cast<size_t>(*it)].instr;
        if (!(e.src == l.src) || e.dst.dtype != l.dst.dtype ||
            e.dst.start_partition != l.dst.start_partition ||
            e.dst.num_partitions != l.dst.num_partitions || e.dst.dims.size() != l.dst.dims.size())
            continue;
        bool same_shape = true;
        for (size_t d = 0; d < l.dst.dims.size(); d++)
            same_shape = same_shape && e.dst.dims[d].num == l.dst.dims[d].num;
        const neff::Footprint from = neff::footprint(e.dst);
        if (!same_shape || written_between(instrs, *it, li, from) ||
            from.overlaps(neff::footprint(l.dst)))
            continue;
        Instr c;
        c.op = neff::Opcode::TensorCopy;
        c.src = e.dst;
        c.dst = l.dst;
        c.name = l.name;
        if (engine_can_copy(c, t))
            return c;
    }
    return std::nullopt;
}

/** The footprints of each transfer's source and destination, computed once: forwarded() tests
 *  every earlier store (or load) of a variable against each load of it. */
struct TransferBoxes {
    std::vector<neff::Footprint> src, dst;
};

/** The copies that replace load `li`, or none if it cannot be forwarded. `sources` are the
 *  earlier instructions that put the load's bytes in HBM (stores) or on chip (loads, when
 *  `from_loads`: of a variable nothing writes). */
std::vector<Instr> forwarded(const std::vector<SelectedInstr> &instrs, const TransferBoxes &boxes,
                             int li, const std::vector<int> &sources, const target::TargetInfo &t,
                             bool from_loads = false) {
    const Instr &l = instrs[static_cast<size_t>(li)].instr;
    if (from_loads)
        if (std::optional<Instr> copy = same_load(instrs, li, sources, t))
            return {*copy};
    const neff::Footprint want = neff::footprint(l.src);
    std::vector<Piece> pieces;
    // The most recent load first: its tile is the likeliest to be intact.
    std::vector<int> order(sources.begin(), sources.end());
    if (from_loads)
        std::reverse(order.begin(), order.end());
    for (int si : order) {
        const Instr &source = instrs[static_cast<size_t>(si)].instr;
        const StoreView s =
            from_loads ? StoreView{source.dst, source.src} : StoreView{source.src, source.dst};
        const std::vector<neff::Footprint> &in_hbm = from_loads ? boxes.src : boxes.dst;
        if (!in_hbm[static_cast<size_t>(si)].overlaps(want)) // s.dst's footprint
            continue;
        const MemSpace chip = MemSpace::SBUF, hbm = MemSpace::HBM;
        if (!plain_transfer(source, from_loads ? hbm : chip, from_loads ? chip : hbm, true) ||
            li - si > kMaxDistance)
            return {};
        std::optional<Piece> p = piece_of(l, s, si, from_loads);
        if (!p)
            continue;
        if (p->store < 0)
            return {};
        if (std::any_of(pieces.begin(), pieces.end(),
                        [&](const Piece &q) { return pieces_overlap(*p, q); })) {
            if (from_loads)
                continue; // an earlier load of these bytes serves them already
            return {};    // two stores of the same bytes: leave the order to HBM
        }
        pieces.push_back(*p);
    }
    auto ld = rows_of(l.dst);
    int64_t covered = 0;
    for (const Piece &p : pieces)
        covered += (p.j1 - p.j0) * (p.c1 - p.c0);
    if (pieces.empty() || covered != ld->rows * ld->elems)
        return {};
    const int64_t es = neff::dtype_size(l.dst.dtype);
    std::vector<Instr> copies;
    for (const Piece &p : pieces) {
        Instr c;
        c.op = neff::Opcode::TensorCopy;
        c.src = sbuf_run(p.src_type, p.src_partition, p.j1 - p.j0, p.src_offset, p.c1 - p.c0);
        c.dst = sbuf_run(l.dst.dtype, ld->first + p.j0, p.j1 - p.j0, ld->offset + p.c0 * es,
                         p.c1 - p.c0);
        c.name = l.name;
        // A copy onto bytes it reads (the load's tile allocated where the stored one was) would
        // depend on the order in which the engine streams them: left to the DMA.
        const neff::Footprint from = neff::footprint(c.src);
        if (written_between(instrs, p.store, li, from) || from.overlaps(neff::footprint(c.dst)) ||
            !engine_can_copy(c, t))
            return {};
        copies.push_back(c);
    }
    return copies;
}

bool contains(const neff::Footprint &outer, const neff::Footprint &inner) {
    return outer.space == inner.space && outer.var == inner.var &&
           inner.first_row >= outer.first_row && inner.end_row <= outer.end_row &&
           inner.begin >= outer.begin && inner.end <= outer.end;
}

/** A forwarded load whose one copy makes no cast: its tile's readers, up to the next instruction
 *  that writes any of its bytes, read the tile the copy would read instead (same partitions, the
 *  byte offset moved), and the copy goes too. A write to a loaded (staging) tile ends its life:
 *  staging stages have no update, so the bytes belong to another tile, or the stage's next one,
 *  from there on. False, having changed nothing, when a reader reaches outside the tile, the
 *  copied tile is written before a reader, or neither such a write nor the program's end comes
 *  within kMaxDistance. */
bool read_in_place(std::vector<SelectedInstr> &instrs, TransferBoxes &boxes, size_t li,
                   const Instr &copy) {
    if (copy.src.dtype != copy.dst.dtype || copy.src.start_partition != copy.dst.start_partition)
        return false;
    const neff::Footprint tile = neff::footprint(copy.dst), kept = neff::footprint(copy.src);
    const int64_t shift = copy.src.offset - copy.dst.offset;
    std::vector<AccessPattern *> readers;
    auto rewrite = [&](size_t last) {
        for (AccessPattern *r : readers)
            r->offset += shift;
        for (size_t j = li + 1; j <= last; j++) // the transfers' boxes follow their operands
            if (const Instr &d = instrs[j].instr; d.op == neff::Opcode::Dma) {
                boxes.src[j] = neff::footprint(d.src);
                boxes.dst[j] = neff::footprint(d.dst);
            }
        return true;
    };
    bool kept_written = false;
    size_t k = li + 1;
    for (; k < instrs.size() && k - li <= size_t(kMaxDistance); k++) {
        Instr &i = instrs[k].instr;
        std::vector<AccessPattern *> reads = {&i.src, &i.src1, &i.pred};
        for (neff::Scalar *s : {&i.s0, &i.s1})
            if (s->is_ap)
                reads.push_back(&s->ap);
        bool reads_tile = false, ends = false;
        for (AccessPattern *r : reads)
            if (r->present() && r->space == MemSpace::SBUF && neff::footprint(*r).overlaps(tile)) {
                if (!contains(tile, neff::footprint(*r)) || kept_written)
                    return false;
                readers.push_back(r);
                reads_tile = true;
            }
        for (const AccessPattern *w : {&i.dst, &i.accum})
            if (w->present() && w->space == MemSpace::SBUF) {
                neff::Footprint f = neff::footprint(*w);
                // An accumulator is read too; the copied tile is not to be written by a reader.
                if ((w == &i.accum && f.overlaps(tile)) || (f.overlaps(kept) && reads_tile))
                    return false;
                kept_written = kept_written || f.overlaps(kept);
                ends = ends || f.overlaps(tile);
            }
        if (ends)
            return rewrite(k);
    }
    return k == instrs.size() && rewrite(k - 1);
}

} // namespace

ForwardStats forward_stores(std::vector<SelectedInstr> &instrs, const neff::Program &program,
                            bool drop_unread_stores, bool in_place) {
    ForwardStats stats;
    const target::TargetInfo &t = target::target_by_name(program.target);
    auto scratch = [&](int var) { return is_scratch(program, var); };
    // Graph inputs and scratch tensors: an earlier load's tile, while intact, holds their bytes
    // until something writes the variable again. (Weights are left to their loads: ResNet-50's
    // convolutions reload theirs per output tile, and GpSimd's copies of them cost bf16
    // ResNet-50 0.8%, 950.1 -> 957.9 us.)
    auto reloadable = [&](int var) {
        if (var < 0 || var >= static_cast<int>(program.vars.size()))
            return false;
        neff::VarKind kind = program.vars[static_cast<size_t>(var)].kind;
        return kind == neff::VarKind::Input || kind == neff::VarKind::Scratch;
    };
    std::map<int, std::vector<int>> writers; // HBM variable -> indices of its writers
    std::map<int, std::vector<int>> loaders; // HBM variable -> its loads kept since its last write
    TransferBoxes boxes;
    boxes.src.resize(instrs.size());
    boxes.dst.resize(instrs.size());
    for (size_t k = 0; k < instrs.size(); k++)
        if (const Instr &i = instrs[k].instr; i.op == neff::Opcode::Dma) {
            boxes.src[k] = neff::footprint(i.src);
            boxes.dst[k] = neff::footprint(i.dst);
        }
    std::vector<std::vector<Instr>> replacement(instrs.size());
    std::vector<bool> replaced(instrs.size(), false);
    for (size_t k = 0; k < instrs.size(); k++) {
        const Instr &i = instrs[k].instr;
        const int index = static_cast<int>(k);
        // The load at k becomes `copies` when there are any; `count` counts it.
        auto replace = [&](std::vector<Instr> copies, int &count) {
            if (copies.empty())
                return false;
            replaced[k] = true;
            count++;
            if (in_place && copies.size() == 1 && read_in_place(instrs, boxes, k, copies[0])) {
                stats.read_in_place++;
                return true;
            }
            stats.copies += static_cast<int>(copies.size());
            replacement[k] = std::move(copies);
            return true;
        };
        const bool load = plain_transfer(i, MemSpace::HBM, MemSpace::SBUF, true);
        if (load && scratch(i.src.var) && writers.count(i.src.var) &&
            replace(forwarded(instrs, boxes, index, writers[i.src.var], t), stats.loads_forwarded))
            continue;
        if (load && reloadable(i.src.var)) {
            if (loaders.count(i.src.var) &&
                replace(forwarded(instrs, boxes, index, loaders[i.src.var], t, true),
                        stats.repeated_loads_forwarded))
                continue;
            loaders[i.src.var].push_back(index);
        }
        neff::for_each_operand(i, [&](const AccessPattern &ap, bool write) {
            if (ap.space != MemSpace::HBM)
                return;
            if (write) {
                writers[ap.var].push_back(index);
                loaders.erase(ap.var);
            }
        });
    }
    std::vector<SelectedInstr> out;
    out.reserve(instrs.size());
    for (size_t k = 0; k < instrs.size(); k++) {
        if (replaced[k]) {
            for (Instr &c : replacement[k])
                out.push_back({Engine::POOL, std::move(c)});
            continue;
        }
        out.push_back(std::move(instrs[k]));
    }
    instrs = std::move(out);
    // Stores that round a tile stay for now: narrow_stores makes the engines that wrote the tile
    // round instead, which it can only do seeing the store (drop_unread_stores then drops it).
    if (drop_unread_stores)
        stats.stores_dropped = codegen::drop_unread_stores(instrs, program, false);
    return stats;
}

int drop_unread_stores(std::vector<SelectedInstr> &instrs, const neff::Program &program,
                       bool casting_too) {
    std::map<int, int> reads; // HBM variable -> instructions that read it
    for (const SelectedInstr &s : instrs)
        neff::for_each_operand(s.instr, [&](const AccessPattern &ap, bool write) {
            if (ap.space == MemSpace::HBM && !write)
                reads[ap.var]++;
        });
    const size_t before = instrs.size();
    instrs.erase(
        std::remove_if(instrs.begin(), instrs.end(),
                       [&](const SelectedInstr &s) {
                           const Instr &i = s.instr;
                           return plain_transfer(i, MemSpace::SBUF, MemSpace::HBM, casting_too) &&
                                  is_scratch(program, i.dst.var) && reads.count(i.dst.var) == 0;
                       }),
        instrs.end());
    return static_cast<int>(before - instrs.size());
}

} // namespace nhc::codegen
