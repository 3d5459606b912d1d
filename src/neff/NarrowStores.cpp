#include "neff/NarrowStores.h"

#include "neff/Footprint.h"

#include <algorithm>

namespace nhc::codegen {

using neff::AccessPattern;
using neff::Engine;
using neff::Footprint;
using neff::Instr;
using neff::MemSpace;

namespace {

/** Instructions searched on either side of a store (a bound on compile time, as in
 *  ForwardStores, not a hardware figure). */
constexpr int64_t kMaxDistance = 1 << 16;
/** Writes of a tile's bytes after its store tracked before giving up (the cover test takes the
 *  square of their count; a bound on compile time, not a hardware figure). */
constexpr size_t kMaxPieces = 64;

bool covers(const Footprint &outer, const Footprint &inner) {
    return outer.space == inner.space && outer.first_row <= inner.first_row &&
           inner.end_row <= outer.end_row && outer.begin <= inner.begin && inner.end <= outer.end;
}

Footprint intersection(const Footprint &a, const Footprint &b) {
    Footprint f = a;
    f.first_row = std::max(a.first_row, b.first_row);
    f.end_row = std::min(a.end_row, b.end_row);
    f.begin = std::max(a.begin, b.begin);
    f.end = std::min(a.end, b.end);
    return f;
}

int64_t area(const Footprint &f) {
    return (f.end_row - f.first_row) * (f.end - f.begin);
}

/** Whether the boxes `parts` together cover `box`: on the grid their edges cut `box` into, every
 *  cell lies in one of them. */
bool union_covers(const std::vector<Footprint> &parts, const Footprint &box) {
    std::vector<int64_t> rows = {box.first_row, box.end_row}, bytes = {box.begin, box.end};
    std::vector<Footprint> inside;
    for (const Footprint &p : parts)
        if (p.overlaps(box)) {
            Footprint q = intersection(p, box);
            inside.push_back(q);
            rows.insert(rows.end(), {q.first_row, q.end_row});
            bytes.insert(bytes.end(), {q.begin, q.end});
        }
    std::sort(rows.begin(), rows.end());
    std::sort(bytes.begin(), bytes.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    bytes.erase(std::unique(bytes.begin(), bytes.end()), bytes.end());
    for (size_t r = 0; r + 1 < rows.size(); r++)
        for (size_t b = 0; b + 1 < bytes.size(); b++) {
            Footprint cell = box;
            cell.first_row = rows[r];
            cell.end_row = rows[r + 1];
            cell.begin = bytes[b];
            cell.end = bytes[b + 1];
            bool in = false;
            for (const Footprint &q : inside)
                in = in || covers(q, cell);
            if (!in)
                return false;
        }
    return true;
}

/** Whether `ap` is an SBUF operand of rows of contiguous elements (its box is exact). */
bool contiguous_rows(const AccessPattern &ap) {
    if (ap.space != MemSpace::SBUF)
        return false;
    int64_t run = 1;
    for (auto d = ap.dims.rbegin(); d != ap.dims.rend(); ++d) {
        if (d->num == 1)
            continue;
        if (d->step != run)
            return false;
        run *= d->num;
    }
    return true;
}

/** A store that rounds an fp32 SBUF tile to a 16-bit float in HBM, as a plain DMA. */
bool rounding_store(const Instr &i) {
    return i.op == neff::Opcode::Dma && i.src.space == MemSpace::SBUF &&
           i.dst.space == MemSpace::HBM && i.src.dtype == neff::DType::F32 &&
           (i.dst.dtype == neff::DType::BF16 || i.dst.dtype == neff::DType::F16) &&
           !i.src1.present() && !i.pred.present() && !i.accum.present() && contiguous_rows(i.src);
}

/** An engine instruction writing fp32 rows inside `tile` and nothing else. */
bool narrowable_writer(const SelectedInstr &s, const Footprint &tile) {
    const Instr &i = s.instr;
    return (s.engine == Engine::ACT || s.engine == Engine::DVE || s.engine == Engine::POOL) &&
           i.op != neff::Opcode::Dma && !i.accum.present() && i.dst.dtype == neff::DType::F32 &&
           contiguous_rows(i.dst) && covers(tile, neff::footprint(i.dst));
}

/** The writers of store `si`'s tile since anything read it, or none if the tile cannot be
 *  narrowed: every byte written by a narrowable writer, no two overlapping, no reader between. */
std::vector<int> tile_writers(const std::vector<SelectedInstr> &instrs, int si) {
    const Footprint tile = neff::footprint(instrs[static_cast<size_t>(si)].instr.src);
    std::vector<int> writers;
    std::vector<Footprint> written;
    int64_t covered = 0;
    for (int k = si - 1; k >= 0 && si - k <= kMaxDistance && covered < area(tile); k--) {
        const SelectedInstr &s = instrs[static_cast<size_t>(k)];
        bool reads = false, writes = false;
        neff::for_each_operand(s.instr, [&](const AccessPattern &ap, bool write) {
            if (neff::footprint(ap).overlaps(tile))
                (write ? writes : reads) = true;
        });
        if (reads)
            return {}; // read between its writers and the store (or in place)
        if (!writes)
            continue;
        if (!narrowable_writer(s, tile))
            return {};
        const Footprint box = neff::footprint(s.instr.dst);
        for (const Footprint &w : written)
            if (w.overlaps(box))
                return {}; // partly overwritten before the store: left as it is
        writers.push_back(k);
        written.push_back(box);
        covered += area(box);
    }
    return covered == area(tile) ? writers : std::vector<int>{};
}

/** A copy to `to` that reads fp32 rows inside `tile` (ForwardStores' on-chip copy of the stored
 *  tile): it rounds to `to` as the store does, so it may read the narrowed tile instead. */
bool rounding_copy(const Instr &i, const Footprint &tile, neff::DType to) {
    return i.op == neff::Opcode::TensorCopy && i.dst.dtype == to &&
           i.src.dtype == neff::DType::F32 && contiguous_rows(i.src) &&
           covers(tile, neff::footprint(i.src)) && !i.src1.present() && !i.pred.present() &&
           !i.s0.is_ap && !i.s1.is_ap;
}

/** The instructions after store `si` that read its tile's bytes before a single write covers
 *  what they read (all the writes since, together): the copies that round as the store does (they
 * then read the narrowed tile), in `copies`; false if any other reads them. */
bool readers_after(const std::vector<SelectedInstr> &instrs, int si, std::vector<int> &copies) {
    const Instr &store = instrs[static_cast<size_t>(si)].instr;
    const Footprint tile = neff::footprint(store.src);
    std::vector<Footprint> later_writes;
    const int n = static_cast<int>(instrs.size());
    for (int k = si + 1; k < n; k++) {
        if (k - si > kMaxDistance)
            return false;
        const Instr &i = instrs[static_cast<size_t>(k)].instr;
        bool reads_tile = false;
        std::vector<Footprint> writes;
        neff::for_each_operand(i, [&](const AccessPattern &ap, bool write) {
            Footprint f = neff::footprint(ap);
            if (write) {
                writes.push_back(f);
                return;
            }
            if (!f.overlaps(tile))
                return;
            reads_tile = reads_tile || !union_covers(later_writes, intersection(f, tile));
        });
        if (reads_tile) {
            if (!rounding_copy(i, tile, store.dst.dtype) || !later_writes.empty())
                return false;
            copies.push_back(k);
        }
        for (const Footprint &w : writes)
            if (w.overlaps(tile))
                later_writes.push_back(w);
        if (later_writes.size() > kMaxPieces)
            return false;
        if (!writes.empty() && union_covers(later_writes, tile))
            return true; // every byte of the tile written again
    }
    return true;
}

/** `ap` (fp32 bytes from `base`) as `to`: element e moves from base + 4e to base + 2e. */
void narrow(AccessPattern &ap, int64_t base, neff::DType to) {
    ap.offset = base + (ap.offset - base) / neff::dtype_size(ap.dtype) * neff::dtype_size(to);
    ap.dtype = to;
}

} // namespace

int narrow_stores(std::vector<SelectedInstr> &instrs) {
    int narrowed = 0;
    for (size_t k = 0; k < instrs.size(); k++) {
        Instr &store = instrs[k].instr;
        if (!rounding_store(store))
            continue;
        const int si = static_cast<int>(k);
        std::vector<int> writers = tile_writers(instrs, si), copies;
        if (writers.empty() || !readers_after(instrs, si, copies))
            continue;
        const int64_t base = neff::footprint(store.src).begin;
        const neff::DType to = store.dst.dtype;
        for (int w : writers)
            narrow(instrs[static_cast<size_t>(w)].instr.dst, base, to);
        for (int c : copies)
            narrow(instrs[static_cast<size_t>(c)].instr.src, base, to);
        narrow(store.src, base, to);
        narrowed++;
    }
    return narrowed;
}

} // namespace nhc::codegen
