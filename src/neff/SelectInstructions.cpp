#include "neff/SelectorState.h"

#include "neff/Footprint.h"
#include "neff/ScheduleInstructions.h"
#include "support/Error.h"
#include "target/CostModel.h"

namespace nhc::codegen {

using namespace Halide::Internal;
using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;
using neff::Opcode;

neff::DType isa_dtype(const Halide::Type &t, const std::string &what) {
    if (t == Halide::Float(32))
        return neff::DType::F32;
    if (t == Halide::Float(16))
        return neff::DType::F16;
    if (t == Halide::BFloat(16))
        return neff::DType::BF16;
    if (t == Halide::Int(32))
        return neff::DType::I32;
    if (t == Halide::UInt(32))
        return neff::DType::U32;
    if (t == Halide::Int(16))
        return neff::DType::I16;
    if (t == Halide::UInt(16))
        return neff::DType::U16;
    if (t == Halide::Int(8))
        return neff::DType::I8;
    if (t == Halide::UInt(8) || t.is_bool())
        return neff::DType::U8;
    std::ostringstream os;
    os << t;
    user_error("NHC_EGEN006", what, " has type ", os.str(),
               ", which the NeuronCore engines cannot hold (64-bit types are not supported)");
}

std::vector<int> IterSpace::free() const {
    std::vector<int> f;
    for (int j = 0; j < static_cast<int>(loops.size()); j++)
        if (j != p)
            f.push_back(j);
    return f;
}

Selector::Selector(const SelectOptions &o)
    : opt_(o), sbuf_(o.target->sbuf_usable_per_partition, kSbufGranule),
      psum_(int64_t(o.target->psum_banks) * o.target->psum_bank_bytes, o.target->psum_bank_bytes) {
    sbuf_.resume(o.sbuf_history);
    psum_.resume(o.psum_history);
    for (const auto &[offset, bytes] : o.reserved_sbuf)
        sbuf_.reserve(offset, bytes);
    if (o.keep_for_next > 0)
        sbuf_.reserve_for_next(o.keep_for_next);
    for (const auto &[name, h] : o.hbm) {
        Buffer b;
        b.name = name;
        b.space = MemSpace::HBM;
        b.dtype = h.dtype;
        b.var = h.var;
        b.hbm_bytes = h.bytes;
        b.hbm_offset = h.offset;
        buffers_[name] = b;
    }
}

void Selector::fail(const std::string &code, const Nest &n, const std::string &what) const {
    std::string loops;
    for (const Loop &l : n.loops)
        loops += (loops.empty() ? "" : ", ") + l.name + "[" + std::to_string(l.extent) + "]";
    user_error(code, "node '", opt_.node_name, "', stage '", n.dst, "' (loops ",
               loops.empty() ? std::string("none") : loops, "): ", what);
}

Halide::Expr Selector::subst(const Halide::Expr &e) const {
    return simplify(substitute_in_all_lets(substitute(env_, e)));
}

int64_t Selector::constant(const Halide::Expr &e, const std::string &what) const {
    Halide::Expr s = subst(e);
    const int64_t *v = as_const_int(s);
    // Shapes are static and every input and output buffer has constant bounds (Group.cpp).
    nhc_assert(v, "node '" << opt_.node_name << "': " << what << " is not constant: " << s);
    return *v;
}

const Buffer &Selector::buffer(const std::string &name) const {
    auto it = buffers_.find(name);
    nhc_assert(it != buffers_.end(),
               "buffer '" << name << "' is not bound in node " << opt_.node_name);
    return it->second;
}

void Selector::emit(Engine e, Instr i) {
    i.name = opt_.node_name;
    queued_ns_[static_cast<int>(e)] += estimated_ns(*opt_.target, e, i);
    out_.push_back({e, std::move(i), opt_.pe_critical_path && e == Engine::PE});
}

Engine Selector::lighter_engine(int64_t n) const {
    target::CostQuery q;
    q.kind = target::CostQuery::Kind::Activation;
    q.n = n;
    q.engine = Engine::ACT;
    double act = queued_ns_[static_cast<int>(Engine::ACT)] + target::compute_ns(*opt_.target, q);
    q.kind = target::CostQuery::Kind::TensorScalar;
    q.engine = Engine::DVE;
    double dve = queued_ns_[static_cast<int>(Engine::DVE)] + target::compute_ns(*opt_.target, q);
    return act < dve ? Engine::ACT : Engine::DVE;
}

std::optional<Engine> Selector::named_engine(const std::string &stage) const {
    auto it = opt_.engines.find(stage);
    return it == opt_.engines.end() ? std::nullopt : std::optional<Engine>(it->second);
}

Engine Selector::vector_engine(const std::string &stage, const Instr &i) const {
    if (named_engine(stage) != Engine::POOL)
        return Engine::DVE;
    bool pool_op =
        i.op == Opcode::TensorScalar || i.op == Opcode::TensorCopy || i.op == Opcode::Memset;
    for (const AccessPattern *ap : {&i.dst, &i.src, &i.src1, &i.s0.ap, &i.s1.ap})
        pool_op = pool_op && (!ap->present() || ap->space == neff::MemSpace::SBUF);
    return pool_op ? Engine::POOL : Engine::DVE;
}

bool Selector::accumulate_into_last_activation(const AccessPattern &src, const AccessPattern &dst) {
    if (out_.empty())
        return false;
    SelectedInstr &last = out_.back();
    if (last.engine != Engine::ACT || last.instr.op != Opcode::Activation ||
        last.instr.accum.present() || !(last.instr.dst == src) ||
        dst.num_partitions != src.num_partitions || dst.free_count() != 1)
        return false;
    queued_ns_[static_cast<int>(Engine::ACT)] -=
        estimated_ns(*opt_.target, Engine::ACT, last.instr);
    last.instr.accum = dst;
    queued_ns_[static_cast<int>(Engine::ACT)] +=
        estimated_ns(*opt_.target, Engine::ACT, last.instr);
    return true;
}

bool Selector::drop_memset(const neff::AccessPattern &dst, float value) {
    if (out_.empty())
        return false;
    const SelectedInstr &last = out_.back();
    if (last.instr.op != Opcode::Memset || !(last.instr.dst == dst) || last.instr.value != value)
        return false;
    queued_ns_[static_cast<int>(last.engine)] -=
        estimated_ns(*opt_.target, last.engine, last.instr);
    out_.pop_back();
    // The instruction that replaces it is this nest's: checked with the nest's own.
    nest_first_ = std::min(nest_first_, out_.size());
    return true;
}

void Selector::walk(const Stmt &s) {
    if (const auto *op = s.as<LetStmt>()) {
        env_[op->name] = subst(op->value);
        walk(op->body);
        env_.erase(op->name);
    } else if (const auto *op = s.as<Block>()) {
        walk(op->first);
        walk(op->rest);
    } else if (const auto *op = s.as<ProducerConsumer>()) {
        walk(op->body);
    } else if (const auto *op = s.as<Allocate>()) {
        visit_allocate(op);
    } else if (const auto *op = s.as<For>()) {
        visit_for(op);
    } else if (s.as<Store>()) {
        Nest n;
        nhc_assert(collect_nest(s, n), "a lone store must form a nest");
        select_nest(n);
    } else if (const auto *op = s.as<AssertStmt>()) {
        // Halide's checks: of the buffers' pointers and shapes (true by construction, though
        // not decidable here) and of the bounds a schedule gave its stages, constants once the
        // loops are unrolled. One that is false is a schedule Halide would refuse at run time
        // (a split that computes a stage beyond the bound a script gave it); the NEFF has no
        // such checks, and would compute the wrong values.
        if (is_const_zero(subst(op->condition)))
            user_error("NHC_EGEN020", "node '", opt_.node_name,
                       "': the schedule fails a check of Halide's lowering: ", op->message,
                       " (a split or a compute level that makes a stage exceed an explicit bound, "
                       "or a tile larger than its buffer)");
    } else if (const auto *op = s.as<IfThenElse>()) {
        // A split's tail guard (GuardWithIf that Halide did not peel into a loop of its own):
        // its loop is not one instruction, so every loop it names is unrolled and fixed here.
        Halide::Expr c = subst(remove_likelies(op->condition));
        nhc_assert(is_const(c), "node '" << opt_.node_name << "': a guard " << c
                                         << " that the unrolled loops do not decide");
        if (is_const_one(c))
            walk(op->then_case);
        else if (op->else_case.defined())
            walk(op->else_case);
    } else if (s.as<Free>()) {
        // handled at the end of its Allocate's body
    } else if (const auto *op = s.as<Evaluate>()) {
        nhc_assert(is_const(op->value), "unexpected side effect in node " << opt_.node_name);
    } else {
        nhc_assert(false, "node '" << opt_.node_name << "': unexpected statement " << s);
    }
}

void Selector::visit_allocate(const Allocate *op) {
    Buffer b;
    b.name = op->name;
    b.dtype = isa_dtype(op->type, "stage '" + op->name + "'");
    if (auto st = opt_.stored_as.find(op->name); st != opt_.stored_as.end())
        b.dtype = st->second;
    if (op->memory_type == Halide::MemoryType::VTCM)
        b.space = MemSpace::SBUF;
    else if (op->memory_type == Halide::MemoryType::LockedCache)
        b.space = MemSpace::PSUM;
    else
        user_error("NHC_EGEN002", "node '", opt_.node_name, "', stage '", op->name,
                   "' is stored in neither SBUF nor PSUM; every stage between HBM input and "
                   "output must be placed on chip (store_in)");
    std::vector<int64_t> ext;
    for (const Halide::Expr &e : op->extents)
        ext.push_back(constant(e, "extent of stage '" + op->name + "'"));
    // The schedule declares the partition dim (and its split); without a hint the last
    // (outermost) dim is on partitions.
    auto hint = opt_.partition_dim.find(op->name);
    int pd = ext.empty() ? -1 : static_cast<int>(ext.size()) - 1;
    if (hint != opt_.partition_dim.end())
        pd = std::min(hint->second, pd);
    auto split = opt_.partition_split.find(op->name);
    b.extents = ext;
    b.pd = pd;
    b.psplit = split != opt_.partition_split.end() && pd >= 0 && ext[pd] > split->second
                   ? split->second
                   : 0;
    b.partitions = pd < 0 ? 1 : (b.psplit > 0 ? b.psplit : ext[pd]);
    b.row_elems = 1;
    for (int d = 0; d < static_cast<int>(ext.size()); d++)
        if (d != pd)
            b.row_elems *= ext[d];
    if (b.psplit > 0)
        b.row_elems *= b.chunks();
    if (b.partitions > opt_.target->partitions)
        user_error("NHC_EGEN003", "node '", opt_.node_name, "', stage '", op->name, "' spans ",
                   b.partitions, " partitions; an on-chip tile has at most ",
                   opt_.target->partitions, " (split the partition dimension)");
    int64_t bytes = b.row_elems * neff::dtype_size(b.dtype);
    OnChipAllocator &alloc = b.space == MemSpace::SBUF ? sbuf_ : psum_;
    if (b.space == MemSpace::PSUM && bytes > opt_.target->psum_bank_bytes)
        user_error("NHC_EGEN004", "node '", opt_.node_name, "', stage '", op->name, "' needs ",
                   bytes, " bytes per partition in PSUM; a PSUM tile must fit one ",
                   opt_.target->psum_bank_bytes, "-byte bank");
    // A resident stage's tiles each keep a region of their own past the group.
    bool kept = b.space == MemSpace::SBUF && opt_.resident.count(op->name) != 0;
    int64_t fixed = kept ? -1 : next_fixed_buffer(op->name, alloc, bytes);
    // A stage allocated outside every loop lives as long as the group (a weight, a broadcast
    // built once): it takes the region the previous group kept for it, when there is one.
    bool group_lifetime = !kept && fixed < 0 && b.space == MemSpace::SBUF && repeat_depth_ == 0;
    b.offset = fixed >= 0       ? fixed
               : kept           ? alloc.allocate_high(bytes)
               : group_lifetime ? alloc.allocate_group_lifetime(bytes)
                                : alloc.allocate(bytes);
    if (group_lifetime && b.offset >= 0)
        group_lifetime_bytes_ += alloc.region_bytes(b.offset);
    if (b.offset < 0)
        user_error("NHC_EGEN005", "node '", opt_.node_name, "', stage '", op->name, "' needs ",
                   bytes, " more bytes per partition of ", mem_space_name(b.space),
                   ", which is full (", alloc.capacity(), " bytes per partition)");
    buffers_[op->name] = b;
    if (b.space == MemSpace::PSUM)
        psum_zeroed_[op->name] = PsumZeroed();
    walk(op->body);
    if (kept)
        kept_sbuf_.push_back({b.offset, alloc.region_bytes(b.offset)});
    else if (fixed < 0)
        alloc.release(b.offset);
    buffers_.erase(op->name);
}

int64_t Selector::next_fixed_buffer(const std::string &stage, OnChipAllocator &alloc,
                                    int64_t bytes) {
    auto count = opt_.buffers.find(stage);
    if (count == opt_.buffers.end())
        return -1;
    FixedBuffers &fb = fixed_[stage];
    if (fb.offsets.empty()) {
        fb.bytes = bytes;
        fb.alloc = &alloc;
        for (int i = 0; i < count->second; i++) {
            int64_t at = alloc.allocate(bytes);
            if (at < 0)
                user_error("NHC_EGEN005", "node '", opt_.node_name, "', stage '", stage,
                           "': ", count->second, " buffers of ", bytes,
                           " bytes per partition do not fit ", "in what is free of its memory (",
                           alloc.capacity(), " bytes per partition); ask for fewer buffers");
            fb.offsets.push_back(at);
        }
    }
    if (bytes > fb.bytes)
        return -1; // a tile larger than the first (tiles of unequal sizes) gets its own region
    return fb.offsets[fb.next++ % fb.offsets.size()];
}

void Selector::release_fixed_buffers() {
    for (auto &[stage, fb] : fixed_)
        for (int64_t at : fb.offsets)
            fb.alloc->release(at);
    fixed_.clear();
}

std::optional<Loop> Selector::widened_loop(const std::string &name, const Halide::Expr &min,
                                           const Halide::Expr &extent,
                                           const std::vector<Loop> &enclosing) const {
    // The loop's range over every iteration of the enclosing loops of the nest: its least min
    // and its greatest end. Only a widened reduction's store takes it (collect_nest).
    Scope<Interval> scope = loop_ranges(enclosing);
    Interval lo = bounds_of_expr_in_scope(min, scope);
    Interval hi = bounds_of_expr_in_scope(simplify(min + extent), scope);
    if (!lo.has_lower_bound() || !hi.has_upper_bound())
        return std::nullopt;
    Halide::Expr first_e = simplify(lo.min), end_e = simplify(hi.max); // as_const_int points in
    const int64_t *first = as_const_int(first_e), *end = as_const_int(end_e);
    if (!first || !end || *end <= *first)
        return std::nullopt;
    return Loop{name, *first, *end - *first};
}

bool Selector::collect_nest(const Stmt &s, Nest &n) const {
    std::vector<std::pair<std::string, Halide::Expr>> lets;
    Stmt cur = s;
    bool widened = false; // a loop's bounds taken over the nest's enclosing loops
    while (true) {
        if (const auto *f = cur.as<For>()) {
            // An unrolled loop is no dimension of an instruction: each iteration is its own
            // (LowerGroup leaves it to be unrolled here); the caller unrolls the outer loops.
            if (f->for_type == ForType::Unrolled)
                return false;
            // A loop whose bounds depend on an enclosing loop of the nest (a reduction's tail
            // chunk, GuardWithIf) is no dimension of one instruction: the caller unrolls the
            // outermost loop and collects again.
            Halide::Expr min = f->min, extent = f->extent;
            for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
                min = substitute(it->first, it->second, min);
                extent = substitute(it->first, it->second, extent);
            }
            if (!n.loops.empty() && !(as_const_int(subst(min)) && as_const_int(subst(extent)))) {
                std::optional<Loop> l = widened_loop(f->name, subst(min), subst(extent), n.loops);
                if (!l)
                    return false;
                n.loops.push_back(*l);
                widened = true;
                cur = f->body;
                continue;
            }
            Loop l{f->name, constant(min, "loop min"), constant(extent, "loop extent")};
            n.loops.push_back(l);
            cur = f->body;
        } else if (const auto *l = cur.as<LetStmt>()) {
            lets.emplace_back(l->name, l->value);
            cur = l->body;
        } else {
            break;
        }
    }
    const Store *st = cur.as<Store>();
    if (!st || (widened && !opt_.widened_reductions.count(st->name)))
        return false;
    Halide::Expr index = st->index, value = st->value;
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
        index = substitute(it->first, it->second, index);
        value = substitute(it->first, it->second, value);
    }
    n.dst = st->name;
    n.index = subst(index);
    n.value = subst(value);
    // Loops of extent 1 are not dimensions of the instruction.
    std::vector<Loop> kept;
    for (const Loop &l : n.loops) {
        if (l.extent == 1) {
            n.index = simplify(substitute(l.name, Halide::Expr(static_cast<int>(l.min)), n.index));
            n.value = simplify(substitute(l.name, Halide::Expr(static_cast<int>(l.min)), n.value));
        } else {
            kept.push_back(l);
        }
    }
    n.loops = kept;
    return true;
}

void Selector::visit_for(const For *op) {
    Nest n;
    if (collect_nest(Stmt(op), n)) {
        select_nest(n);
        return;
    }
    // Not one instruction: a repeat loop, unrolled into the instruction stream.
    int64_t min = constant(op->min, "min of loop " + op->name);
    int64_t extent = constant(op->extent, "extent of loop " + op->name);
    repeat_depth_++;
    for (int64_t i = min; i < min + extent; i++) {
        env_[op->name] = Halide::Expr(static_cast<int>(i));
        walk(op->body);
    }
    repeat_depth_--;
    env_.erase(op->name);
}

Affine Selector::affine(const std::string &buf, const Halide::Expr &index, const Nest &n) const {
    std::optional<Affine> a = affine_index(index, n.loops);
    if (!a) {
        // A clamp that the nest's loop ranges decide (Halide's min(kr + 4 kq, mo) over the
        // chunks of a guarded split once kq and mo are unrolled): simplified within them.
        a = affine_index(simplify(index, true, loop_ranges(n.loops)), n.loops);
    }
    if (!a) {
        std::ostringstream os;
        os << index;
        fail("NHC_EGEN008", n,
             "the access to '" + buf + "' at " + os.str().substr(0, 200) +
                 " is not affine in the loops");
    }
    return *a;
}

void Selector::select_nest(const Nest &n) {
    nest_first_ = out_.size();
    select_nest_instructions(n);
    check_partition_starts(n, nest_first_);
}

void Selector::check_partition_starts(const Nest &n, size_t first) const {
    // The engines address a tile of P partitions only from an aligned start (neuroncore.md L230;
    // the runtime refuses it as NHC_ERT005): refuse the schedule here, where the stage and its
    // loops can be named. DMAs reach any partition.
    for (size_t k = first; k < out_.size(); k++) {
        const Instr &i = out_[k].instr;
        if (i.op == Opcode::Dma)
            continue;
        neff::for_each_operand(i, [&](const AccessPattern &ap, bool) {
            if (ap.space == MemSpace::HBM ||
                target::partition_start_allowed(*opt_.target, ap.start_partition,
                                                ap.num_partitions))
                return;
            fail("NHC_EGEN018", n,
                 std::string(neff::opcode_name(i.op)) + " would address " +
                     std::to_string(ap.num_partitions) + " partition(s) from partition " +
                     std::to_string(ap.start_partition) +
                     ", which the engines cannot (a tile of that size starts at a multiple of " +
                     std::to_string(
                         target::partition_start_alignment(*opt_.target, ap.num_partitions)) +
                     "): keep the partition loop inside the instruction, or split it so that "
                     "each tile starts aligned");
        });
    }
}

void Selector::select_nest_instructions(const Nest &n) {
    if (select_bounded_copy(n))
        return;
    const Buffer &dst = buffer(n.dst);
    const Load *src = as_load(n.value);
    if (src && (dst.space == MemSpace::HBM || buffer(src->name).space == MemSpace::HBM)) {
        select_dma(n, src->name, src->index);
        return;
    }
    if (dst.space == MemSpace::HBM)
        fail("NHC_EGEN011", n, "an HBM output must be a plain copy of an on-chip stage");
    if (dst.space == MemSpace::PSUM) {
        if (is_const_zero(n.value)) {
            psum_zeroed_[n.dst] = PsumZeroed{true, {}}; // folded into the matmuls (overwrite)
            return;
        }
        if (src && buffer(src->name).space == MemSpace::SBUF) {
            select_transpose(n, src->name, src->index);
            return;
        }
        select_matmul(n);
        return;
    }
    select_compute(*this, n);
}

AccessPattern Selector::temp_tile(const IterSpace &it, const Nest &n) {
    int64_t row = 1;
    for (int j : it.free())
        row *= it.loops[j].extent;
    int64_t off = sbuf_.allocate(row * 4);
    if (off < 0)
        fail("NHC_EGEN005", n,
             "no SBUF left for a temporary of " + std::to_string(row * 4) + " bytes per partition");
    temps_.push_back(off);
    AccessPattern ap;
    ap.space = MemSpace::SBUF;
    ap.dtype = neff::DType::F32;
    ap.offset = off;
    ap.num_partitions = it.p >= 0 ? static_cast<int32_t>(it.loops[it.p].extent) : 1;
    int64_t step = row;
    for (int j : it.free()) {
        step /= it.loops[j].extent;
        ap.dims.push_back({step, it.loops[j].extent});
    }
    if (ap.dims.empty())
        ap.dims.push_back({1, 1});
    return ap;
}

void Selector::release_temps() {
    for (int64_t off : temps_)
        sbuf_.release(off);
    temps_.clear();
}

std::vector<SelectedInstr> select_instructions(const Stmt &s, SelectOptions &options) {
    Selector sel(options);
    sel.walk(s);
    sel.release_fixed_buffers();
    options.sbuf_history = sel.sbuf_history();
    options.psum_history = sel.psum_history();
    options.group_lifetime_bytes = sel.group_lifetime_bytes();
    options.kept_sbuf = sel.kept_sbuf();
    return sel.take();
}

} // namespace nhc::codegen
