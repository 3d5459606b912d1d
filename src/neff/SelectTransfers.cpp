// Instruction selection, part two (see SelectInstructions.h): the nests that move data or
// multiply: DMA (HBM <-> SBUF, HBM -> HBM, with casts and peeling of nests that do not fit one
// descriptor), matmul (PSUM accumulation over K chunks) and PE transposes.

#include "neff/SelectorState.h"

#include "neff/Footprint.h"

#include "support/Error.h"

#include <sstream>

namespace nhc::codegen {

using namespace Halide::Internal;
using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;
using neff::Opcode;

namespace {

AccessPattern hbm_ap(const Buffer &b, const Affine &a, const IterSpace &it) {
    AccessPattern ap;
    ap.space = MemSpace::HBM;
    ap.dtype = b.dtype;
    ap.var = b.var;
    int64_t es = neff::dtype_size(b.dtype);
    ap.offset = b.hbm_offset + a.base * es;
    ap.num_partitions = it.p >= 0 ? static_cast<int32_t>(it.loops[it.p].extent) : 1;
    ap.partition_step = it.p >= 0 ? a.strides[it.p] * es : 0;
    for (int j : it.free())
        ap.dims.push_back({a.strides[j] * es, it.loops[j].extent});
    if (ap.dims.empty())
        ap.dims.push_back({es, 1});
    return ap;
}

/** Merges adjacent free loops that every access walks as one (stride_outer = stride_inner*ext). */
void coalesce(IterSpace &it, std::vector<Affine *> accesses) {
    for (int j = static_cast<int>(it.loops.size()) - 2; j >= 0; j--) {
        if (j == it.p || j + 1 == it.p)
            continue;
        bool ok = true;
        for (Affine *a : accesses)
            ok = ok && a->strides[j] == a->strides[j + 1] * it.loops[j + 1].extent;
        if (!ok)
            continue;
        it.loops[j].extent *= it.loops[j + 1].extent;
        it.loops[j].name += "*" + it.loops[j + 1].name;
        it.loops.erase(it.loops.begin() + j + 1);
        for (Affine *a : accesses) {
            a->strides[j] = a->strides[j + 1];
            a->strides.erase(a->strides.begin() + j + 1);
        }
        if (it.p > j)
            it.p--;
    }
}

/** Merges the free dims of a DMA's two sides that both walk as one run (outer step = inner step
 *  x inner count on each side), after dropping dims of one element. coalesce() merges loops
 *  adjacent in the nest; this also merges free dims that the partition loop separates there
 *  (heads h and their elements d of [s, h, d] loaded with s on partitions: rows of h x d
 *  elements, not h rows of d), which the DMA then moves as one longer row per partition (the
 *  DMA cost by row size, nc.md:L255-259). The elements each side walks, and their order, are
 *  unchanged. */
void merge_contiguous_dims(AccessPattern &a, AccessPattern &b) {
    auto drop_units = [](const AccessPattern &ap) {
        std::vector<neff::Dim> kept;
        for (const neff::Dim &d : ap.dims)
            if (d.num != 1)
                kept.push_back(d);
        return kept;
    };
    std::vector<neff::Dim> da = drop_units(a), db = drop_units(b);
    if (da.size() != db.size() || da.size() < 2)
        return;
    for (int i = static_cast<int>(da.size()) - 2; i >= 0; i--) {
        size_t in = static_cast<size_t>(i) + 1, out = static_cast<size_t>(i);
        if (da[out].step != da[in].step * da[in].num || db[out].step != db[in].step * db[in].num)
            continue;
        for (std::vector<neff::Dim> *d : {&da, &db}) {
            (*d)[in].num *= (*d)[out].num;
            d->erase(d->begin() + i);
        }
    }
    a.dims = std::move(da);
    b.dims = std::move(db);
}

/** A copy nest with loop j fixed at `value` (one DMA of a peeled loop): the nest without that
 *  loop, and the source index at that value. */
std::pair<Nest, Halide::Expr> fix_loop(const Nest &n, size_t j, int64_t value,
                                       const Halide::Expr &src_index) {
    Nest step = n;
    const std::string name = n.loops[j].name;
    step.loops.erase(step.loops.begin() + static_cast<std::ptrdiff_t>(j));
    Halide::Expr v(static_cast<int>(value));
    step.index = simplify(substitute(name, v, n.index));
    return {step, simplify(substitute(name, v, src_index))};
}

const char *const kTableRow = "__nhc_table_row";

/** An index whose row is read from an on-chip buffer (a gather): the index with that row as the
 *  variable kTableRow, and the load of the row. The clamps and casts around the load are dropped:
 *  they bound Halide's region of the table, and the indirect DMA checks each row instead. */
class ExtractTableRow : public IRMutator {
public:
    const Load *row = nullptr;
    int rows_found = 0;

private:
    using IRMutator::visit;
    static bool reads_memory(const Halide::Expr &e) {
        struct FindLoad : IRVisitor {
            bool found = false;
            using IRVisitor::visit;
            void visit(const Load *) override { found = true; }
        } find;
        e.accept(&find);
        return find.found;
    }
    Halide::Expr visit(const Load *op) override {
        row = op;
        rows_found++;
        return Variable::make(Halide::Int(32), kTableRow);
    }
    Halide::Expr visit(const Min *op) override {
        return reads_memory(op->a) && is_const(op->b) ? mutate(op->a) : IRMutator::visit(op);
    }
    Halide::Expr visit(const Max *op) override {
        return reads_memory(op->a) && is_const(op->b) ? mutate(op->a) : IRMutator::visit(op);
    }
    Halide::Expr visit(const Cast *op) override {
        return op->type.is_int_or_uint() && reads_memory(op->value) ? mutate(op->value)
                                                                    : IRMutator::visit(op);
    }
};

} // namespace

const Load *as_load(const Halide::Expr &e) {
    Halide::Expr cur = e;
    while (const Cast *c = cur.as<Cast>())
        cur = c->value;
    return cur.as<Load>();
}

void Selector::check_hbm_bounds(const Nest &n, const AccessPattern &ap, const Buffer &b) const {
    if (b.hbm_bytes < 0)
        return;
    int64_t bytes = b.hbm_bytes;
    neff::Footprint f = neff::footprint(ap);
    f.begin -= b.hbm_offset; // relative to the tensor, which may start inside its variable
    f.end -= b.hbm_offset;
    if (f.begin >= 0 && f.end <= bytes)
        return;
    fail("NHC_EGEN019", n,
         "the copy " + std::string(n.dst == b.name ? "writes" : "reads") + " bytes [" +
             std::to_string(f.begin) + ", " + std::to_string(f.end) + ") of '" + b.name +
             "', which has " + std::to_string(bytes) +
             ": the schedule computes a stage beyond its tensor (a split whose factor exceeds "
             "its loop's extent with ShiftInwards, or a RoundUp tail that does not divide it); "
             "split by at most the extent, or use TailStrategy::GuardWithIf");
}

void Selector::select_indirect_dma(const Nest &n, const std::string &table_name,
                                   const Halide::Expr &src_index) {
    ExtractTableRow extract;
    Halide::Expr index = extract.mutate(src_index);
    const Buffer &dst = buffer(n.dst), &table = buffer(table_name);
    std::vector<Loop> with_row = n.loops;
    with_row.push_back({kTableRow, 0, 1});
    std::optional<Affine> ta = affine_index(index, with_row);
    if (extract.rows_found != 1 || !ta) {
        affine(table_name, src_index, n); // NHC_EGEN008 names the access, when not affine
        std::ostringstream os;
        os << src_index;
        fail("NHC_EGEN008", n,
             "the access to '" + table_name + "' at " + os.str().substr(0, 200) +
                 " reads rows chosen at run time, but not one row per index an indirect DMA "
                 "can take");
    }
    if (dst.space != MemSpace::SBUF)
        fail("NHC_EGEN008", n,
             "the access to '" + table_name +
                 "' reads a row chosen at run time (a gather), which an indirect DMA writes only "
                 "into SBUF: compute this stage in SBUF");
    const Buffer &rows = buffer(extract.row->name);
    // A stage a schedule leaves outside SBUF is refused before (NHC_EGEN002, NHC_EGEN012), and
    // Gather.cpp computes the rows as int32.
    nhc_assert(rows.space == MemSpace::SBUF && rows.dtype == neff::DType::I32,
               "the rows of a gather are not an int32 stage in SBUF: " << rows.name);
    Affine da = affine(n.dst, n.index, n), ia = affine(rows.name, extract.row->index, n);
    IterSpace it{n.loops, -1};
    for (int j = 0; j < static_cast<int>(it.loops.size()); j++)
        if (walks_partitions(dst, da, j, it.loops[j]))
            it.p = j;
    // One index per destination partition: a loop that moves the index other than the
    // partition loop (an outer loop over tiles of indices) is peeled into separate DMAs.
    for (int j = 0; j < static_cast<int>(n.loops.size()); j++) {
        if (j == it.p || ia.strides[j] == 0)
            continue;
        const Loop &l = n.loops[size_t(j)];
        for (int64_t v = l.min; v < l.min + l.extent; v++) {
            auto [step, step_src] = fix_loop(n, size_t(j), v, src_index);
            select_indirect_dma(step, table_name, step_src);
        }
        return;
    }
    int64_t es = neff::dtype_size(table.dtype);
    int64_t row_elems = ta->strides.back();
    ta->strides.pop_back();
    std::vector<Affine *> accesses = {&da, &*ta};
    coalesce(it, accesses);
    Instr ins;
    ins.op = Opcode::Dma;
    ins.dst = onchip_ap(dst, da, it, n, "destination");
    ins.src = hbm_ap(table, *ta, it);
    ins.src.num_partitions = static_cast<int32_t>(table.hbm_bytes / (row_elems * es));
    ins.src.partition_step = row_elems * es;
    // The index walks the destination's partitions; a single row (no partition loop left, as
    // for one token) has one index on one partition.
    IterSpace index_space{{}, -1};
    Affine by_partition{ia.base, {}};
    if (it.p >= 0) {
        index_space = IterSpace{{n.loops[size_t(it.p)]}, 0};
        by_partition.strides.push_back(ia.strides[size_t(it.p)]);
    }
    ins.src1 = onchip_ap(rows, by_partition, index_space, n, "index");
    check_hbm_bounds(n, ins.src, table);
    // Software DGE: GpSimd generates the descriptors of an indirect DMA (nc.md:L270), so it is
    // issued from Pool, on Pool's queues.
    ins.queue = opt_.dma_queues + next_store_queue_;
    next_store_queue_ = (next_store_queue_ + 1) % opt_.dma_queues;
    emit(Engine::POOL, ins);
}

void Selector::select_dma(const Nest &n, const std::string &src_name,
                          const Halide::Expr &src_index) {
    const Buffer &dst = buffer(n.dst), &src = buffer(src_name);
    if (src.space == MemSpace::HBM && !affine_index(src_index, n.loops)) {
        select_indirect_dma(n, src_name, src_index);
        return;
    }
    if (dst.space == MemSpace::PSUM || src.space == MemSpace::PSUM)
        fail("NHC_EGEN011", n, "DMA cannot read or write PSUM; copy through SBUF");
    Affine da = affine(n.dst, n.index, n), sa = affine(src_name, src_index, n);
    IterSpace it{n.loops, -1};
    // The partition loop is the one that walks the on-chip side's partitions; for HBM -> HBM the
    // outermost loop plays that role.
    const Buffer &chip = dst.space != MemSpace::HBM ? dst : src;
    const Affine &ca = dst.space != MemSpace::HBM ? da : sa;
    for (int j = 0; j < static_cast<int>(it.loops.size()); j++)
        if (walks_partitions(chip, ca, j, it.loops[j]))
            it.p = j;
    // HBM -> HBM: the rows are the longest loop that fits the partition limit, since a transfer
    // is spread over one DMA engine per 8 rows (target DmaParams::partitions_per_engine).
    if (chip.space == MemSpace::HBM && !it.loops.empty()) {
        if (split_hbm_copy(n, src_name, src_index))
            return;
        it.p = 0;
        for (int j = 0; j < static_cast<int>(it.loops.size()); j++)
            if (it.loops[j].extent <= opt_.target->partitions &&
                (it.loops[it.p].extent > opt_.target->partitions ||
                 it.loops[j].extent > it.loops[it.p].extent))
                it.p = j;
    }
    coalesce(it, {&da, &sa});
    bool too_many_dims =
        static_cast<int>(it.loops.size()) - (it.p >= 0 ? 1 : 0) > neff::kMaxFreeDims;
    bool too_many_rows = it.p >= 0 && it.loops[it.p].extent > opt_.target->partitions;
    if ((too_many_dims || too_many_rows) && !it.loops.empty()) {
        // Peel the outermost loop into separate DMAs.
        const Loop &l = n.loops.front();
        for (int64_t v = l.min; v < l.min + l.extent; v++) {
            auto [step, step_src] = fix_loop(n, 0, v, src_index);
            select_dma(step, src_name, step_src);
        }
        return;
    }
    Instr ins;
    ins.op = Opcode::Dma;
    ins.dst =
        dst.space == MemSpace::HBM ? hbm_ap(dst, da, it) : onchip_ap(dst, da, it, n, "destination");
    ins.src =
        src.space == MemSpace::HBM ? hbm_ap(src, sa, it) : onchip_ap(src, sa, it, n, "source");
    for (const auto &[ap, b] : {std::make_pair(&ins.dst, &dst), std::make_pair(&ins.src, &src)})
        if (b->space == MemSpace::HBM)
            check_hbm_bounds(n, *ap, *b);
    merge_contiguous_dims(ins.dst, ins.src);
    if (select_pe_broadcast(ins))
        return;
    // Loads are issued from SP and stores from Pool (idle otherwise): a store waits for the
    // compute that produced its tile, and on SP that wait would hold back the next tile's loads.
    // Each issuing engine has queues of its own, so that a queue completes in program order
    // (the semaphore pass relies on it).
    bool store = dst.space == MemSpace::HBM;
    if (store && ins.src.space == MemSpace::SBUF) { // a later group may read the tile in place
        neff::Footprint f = neff::footprint(ins.src);
        sbuf_.mark_stored(f.begin, f.end);
    }
    int &next = store ? next_store_queue_ : next_queue_;
    ins.queue = (store ? opt_.dma_queues : 0) + next;
    next = (next + 1) % opt_.dma_queues;
    emit(store ? Engine::POOL : Engine::SP, ins);
}

bool Selector::split_hbm_copy(const Nest &n, const std::string &src_name,
                              const Halide::Expr &src_index) {
    int64_t rows = opt_.target->partitions;
    for (const Loop &l : n.loops)
        if (l.extent <= rows)
            return false;
    if (n.loops.size() == 1) {
        // One long run: rows x columns, the most rows within the limit that divide it (a
        // prime length stays one row), instead of one row per element.
        const Loop &l = n.loops[0];
        int64_t r = rows;
        while (l.extent % r != 0)
            r--;
        Nest split = n;
        std::string outer = l.name + ".row", inner = l.name + ".col";
        Halide::Expr at = Variable::make(Halide::Int(32), outer) * static_cast<int>(l.extent / r) +
                          Variable::make(Halide::Int(32), inner) + static_cast<int>(l.min);
        split.loops = {{outer, 0, r}, {inner, 0, l.extent / r}};
        split.index = simplify(substitute(l.name, at, n.index));
        split.value = simplify(substitute(l.name, at, n.value));
        select_dma(split, src_name, simplify(substitute(l.name, at, src_index)));
        return true;
    }
    // The outermost loop as the rows, in balanced chunks within the limit (rather than one DMA
    // per row, and per element of a row longer than the limit).
    const Loop &l = n.loops.front();
    int64_t chunks = (l.extent + rows - 1) / rows, size = (l.extent + chunks - 1) / chunks;
    for (int64_t start = 0; start < l.extent; start += size) {
        Nest chunk = n;
        chunk.loops.front().min = l.min + start;
        chunk.loops.front().extent = std::min(size, l.extent - start);
        select_dma(chunk, src_name, src_index);
    }
    return true;
}

/** The nest with its outermost loop fixed at `value`. */
static Nest peel_outermost(const Nest &n, int64_t value) {
    Nest inner = n;
    Loop l = inner.loops.front();
    inner.loops.erase(inner.loops.begin());
    Halide::Expr v(static_cast<int>(value));
    inner.index = simplify(substitute(l.name, v, n.index));
    inner.value = simplify(substitute(l.name, v, n.value));
    return inner;
}

void Selector::select_matmul(const Nest &n) {
    // Accumulation loops outside the instruction (K chunks of a perfect nest) are unrolled into
    // one matmul per chunk, accumulating in PSUM; so are batch loops, and all but the innermost
    // of several loops over the accumulator's partitions (M split in two inside one nest). An
    // instruction takes M, N and K, or M and two N loops and K when M is outermost (a
    // convolution's rows and columns).
    Affine acc_index = affine(n.dst, n.index, n);
    int accumulation_loops = 0, partition_loops = 0;
    for (size_t j = 0; j < n.loops.size(); j++) {
        accumulation_loops += acc_index.strides[j] == 0 ? 1 : 0;
        partition_loops +=
            walks_partitions(buffer(n.dst), acc_index, static_cast<int>(j), n.loops[j]) ? 1 : 0;
    }
    bool rows_and_columns = n.loops.size() == 4 && partition_loops == 1 &&
                            walks_partitions(buffer(n.dst), acc_index, 0, n.loops.front());
    if (accumulation_loops > 1 || partition_loops > 1 ||
        (n.loops.size() > 3 && !rows_and_columns)) {
        const Loop &l = n.loops.front();
        for (int64_t i = l.min; i < l.min + l.extent; i++)
            select_matmul(peel_outermost(n, i));
        return;
    }
    // acc[i] = acc[i] + a * b, either operand order.
    const Add *add = n.value.as<Add>();
    const Load *self = add ? add->a.as<Load>() : nullptr;
    const Mul *mul = add ? add->b.as<Mul>() : nullptr;
    if (add && !(self && self->name == n.dst)) {
        self = add->b.as<Load>();
        mul = add->a.as<Mul>();
    }
    const Load *x = mul ? as_load(mul->a) : nullptr, *y = mul ? as_load(mul->b) : nullptr;
    if (!self || self->name != n.dst || !x || !y)
        fail("NHC_EGEN012", n, "a PSUM stage must be a matmul accumulation acc += a * b");
    Affine da = affine(n.dst, n.index, n), xa = affine(x->name, x->index, n),
           ya = affine(y->name, y->index, n);
    // Loop roles from the destination: K has stride 0 (innermost), M walks the destination's
    // partitions, N its free axes (one, or several: a convolution's output rows and columns).
    // M or N may be absent (extent 1 loops are dropped).
    const Buffer &acc = buffer(n.dst);
    int k = -1, m = -1;
    std::vector<int> ns;
    for (int j = 0; j < static_cast<int>(n.loops.size()); j++) {
        if (da.strides[j] == 0)
            k = k < 0 ? j : -2; // a second contraction loop is not one instruction
        else if (walks_partitions(acc, da, j, n.loops[j]))
            m = j;
        else
            ns.push_back(j);
    }
    // No contraction loop: K = 1 (a convolution of one input channel; extent-1 loops drop).
    bool unit_k = k == -1;
    if ((!unit_k && k != static_cast<int>(n.loops.size()) - 1) ||
        (m >= 0 && !ns.empty() && m > ns[0]))
        fail("NHC_EGEN012", n,
             "a matmul nest needs loops M (partitions), N (free) and K "
             "(contraction, innermost), in that order");
    auto stride = [](const Affine &a, int j) { return j < 0 ? int64_t(0) : a.strides[j]; };
    auto varies_with_n = [&](const Affine &a) {
        for (int j : ns)
            if (a.strides[j] != 0)
                return true;
        return false;
    };
    // The stationary operand varies with M (not N), the moving one with N (not M).
    bool x_stationary = !varies_with_n(xa) && stride(ya, m) == 0;
    const Load *st = x_stationary ? x : y, *mv = x_stationary ? y : x;
    Affine sa = x_stationary ? xa : ya, ma = x_stationary ? ya : xa;
    if (varies_with_n(sa) || stride(ma, m) != 0)
        fail("NHC_EGEN012", n, "each matmul operand must vary with only one of M and N");
    Loop one{"unit", 0, 1};
    Loop lk = unit_k ? one : n.loops[k], lm = m >= 0 ? n.loops[m] : one;
    IterSpace dst_it{{lm}, 0}, st_it{{lk, lm}, 0}, mv_it{{lk}, 0};
    Affine d2{da.base, {stride(da, m)}};
    Affine s2{sa.base, {stride(sa, k), stride(sa, m)}}, m2{ma.base, {stride(ma, k)}};
    int64_t N = 1;
    for (int j : ns) {
        dst_it.loops.push_back(n.loops[j]);
        mv_it.loops.push_back(n.loops[j]);
        d2.strides.push_back(da.strides[j]);
        m2.strides.push_back(ma.strides[j]);
        N *= n.loops[j].extent;
    }
    if (ns.empty()) {
        dst_it.loops.push_back(one);
        mv_it.loops.push_back(one);
        d2.strides.push_back(0);
        m2.strides.push_back(0);
    }
    int64_t K = lk.extent, M = lm.extent;
    for (const Load *operand : {st, mv})
        if (buffer(operand->name).space != MemSpace::SBUF)
            fail("NHC_EGEN011", n,
                 "matmul operand '" + operand->name +
                     "' is not in SBUF; the PE reads its operands from SBUF: stage it in SBUF "
                     "(store_in(SBUF)) first");
    Instr ins;
    ins.op = Opcode::Matmul;
    ins.dst = onchip_ap(buffer(n.dst), d2, dst_it, n, "accumulator");
    ins.src = onchip_ap(buffer(st->name), s2, st_it, n, "stationary operand");
    ins.src1 = onchip_ap(buffer(mv->name), m2, mv_it, n, "moving operand");
    // The operands' partitions (<= 128, NHC_EGEN003, walked linearly, NHC_EGEN010) and the PSUM
    // bank (NHC_EGEN004) bound every tile.
    nhc_assert(K <= opt_.target->pe_rows && M <= opt_.target->pe_cols &&
                   N <= opt_.target->matmul_max_moving,
               "matmul tile K=" << K << " M=" << M << " N=" << N << " passed the staging checks");
    if (!matmul_overwrites(n, ins.dst))
        ins.flags |= neff::kFlagAccumulate;
    emit(Engine::PE, ins);
}

bool Selector::matmul_overwrites(const Nest &n, const AccessPattern &dst) {
    PsumZeroed &z = psum_zeroed_[n.dst];
    if (!z.pending)
        return false;
    neff::Footprint box = neff::footprint(dst);
    // Exact bytes when they list in few runs, else the box's range (an over-approximation, so
    // a split it cannot prove disjoint is refused, never miscomputed).
    constexpr int64_t kMaxRuns = 4096;
    neff::ByteIntervals bytes =
        neff::byte_intervals(dst, kMaxRuns).value_or(neff::ByteIntervals{{box.begin, box.end}});
    bool meets = false, inside = false;
    for (const PsumZeroed::Region &r : z.written) {
        if (r.first_row >= box.end_row || box.first_row >= r.end_row ||
            !neff::intervals_meet(r.bytes, bytes))
            continue;
        meets = true;
        inside = inside || (r.first_row <= box.first_row && box.end_row <= r.end_row &&
                            neff::intervals_cover(r.bytes, bytes));
    }
    if (meets && !inside)
        fail("NHC_EGEN012", n,
             "a matmul into an accumulator zeroed for it covers part of a region an earlier "
             "matmul wrote and part of one none did: each matmul of a tile must write the "
             "same columns as the earlier ones into them, or new ones");
    if (!meets)
        z.written.push_back({box.first_row, box.end_row, std::move(bytes)});
    return !meets;
}

void Selector::select_transpose(const Nest &n, const std::string &src_name,
                                const Halide::Expr &src_index) {
    // dst[p, f] (PSUM) = src[f, p] (SBUF): the destination's partition loop walks the source's
    // free axis and its free loop walks the source's partitions.
    const Buffer &dst = buffer(n.dst), &src = buffer(src_name);
    Affine da = affine(n.dst, n.index, n), sa = affine(src_name, src_index, n);
    int p = -1, f = -1;
    for (int j = 0; j < static_cast<int>(n.loops.size()); j++) {
        bool dst_walk = walks_partitions(dst, da, j, n.loops[j]);
        if ((dst_walk && p >= 0) || (!dst_walk && f >= 0)) {
            // A second loop over one side's partitions (a split of it inside the nest): one
            // transpose per iteration of the outermost loop.
            const Loop &l = n.loops.front();
            for (int64_t i = l.min; i < l.min + l.extent; i++) {
                Halide::Expr v(static_cast<int>(i));
                select_transpose(peel_outermost(n, i), src_name,
                                 simplify(substitute(l.name, v, src_index)));
            }
            return;
        }
        if (dst_walk)
            p = j;
        else if (walks_partitions(src, sa, j, n.loops[j]))
            f = j;
        else
            fail("NHC_EGEN012", n,
                 "a PSUM copy of an SBUF tile must be a 2-D transpose (the "
                 "destination's partitions walk the source's free axis)");
    }
    // A side of extent 1 has no loop (extent-1 loops are dropped): stand in a unit loop.
    Loop unit{"unit", 0, 1};
    Loop lp = p >= 0 ? n.loops[p] : unit, lf = f >= 0 ? n.loops[f] : unit;
    auto stride = [](const Affine &a, int j, int64_t fallback) {
        return j >= 0 ? a.strides[j] : fallback;
    };
    IterSpace dst_it{{lp, lf}, 0}, src_it{{lf, lp}, 0};
    Affine d2{da.base, {stride(da, p, 0), stride(da, f, 0)}};
    Affine s2{sa.base, {stride(sa, f, 0), stride(sa, p, 0)}};
    Instr ins;
    ins.op = Opcode::Transpose;
    ins.dst = onchip_ap(dst, d2, dst_it, n, "destination");
    ins.src = onchip_ap(src, s2, src_it, n, "source");
    emit(Engine::PE, ins);
}

} // namespace nhc::codegen
