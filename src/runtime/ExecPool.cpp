/** \file
 * Instructions shared by several engines or specific to GpSimd (neuroncore.md §3.2):
 * tensor_copy, memset, iota, affine_select and partition_reduce.
 */
#include "runtime/Exec.h"

#include "neff/ComputeCost.h"

#include "runtime/AluOps.h"
#include "support/Error.h"

#include <cmath>

namespace nhc::rt {

using neff::AluOp;
using neff::DType;
using neff::Engine;
using neff::MemSpace;

namespace {

/** Evaluates the affine pattern for element f of partition p (int64, then to fp32). */
std::vector<int64_t> affine_row(const neff::Instr &i, const neff::AccessPattern &ap, int p,
                                const Where &w) {
    const neff::Affine &a = i.pattern;
    if (a.steps.size() != ap.dims.size()) {
        user_error("NHC_ERT008", w.str(), " has an affine pattern with ", a.steps.size(),
                   " steps for an operand with ", ap.dims.size(), " free dimensions");
    }
    std::vector<int64_t> out(size_t(ap.free_count()));
    size_t nd = ap.dims.size();
    std::vector<int64_t> idx(nd, 0);
    for (auto &v : out) {
        int64_t s = a.base + a.partition_mult * p; // p counts from the tile's first partition
        for (size_t k = 0; k < nd; k++) {
            s += a.steps[k] * idx[k];
        }
        v = s;
        for (size_t k = nd; k-- > 0;) { // row-major increment
            if (++idx[k] < ap.dims[k].num) {
                break;
            }
            idx[k] = 0;
        }
    }
    return out;
}

} // namespace

ExecInfo exec_tensor_copy(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    check_compute_operand(m, i.src, w, "src");
    require_same_shape(i.dst, i.src, w, "dst", "src");
    // nc.md:L309: bit-exact when dtypes match on DVE/Pool (and ACT on v3, nc.md:L177); ACT on v2
    // casts through fp32.
    bool exact = w.engine != Engine::ACT || m.target().version != target::CoreVersion::V2;
    if (!m.functional()) {
        // timing only
    } else if (exact && i.dst.dtype == i.src.dtype) {
        m.copy_bits(i.dst, i.src);
    } else {
        m.write(i.dst, m.read(i.src));
    }
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    return info;
}

ExecInfo exec_memset(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        return info;
    }
    Tile t;
    t.partitions = i.dst.num_partitions;
    t.free = i.dst.free_count();
    t.v.assign(size_t(t.partitions * t.free), i.value);
    m.write(i.dst, t);
    return info;
}

ExecInfo exec_iota(Machine &m, const neff::Instr &i, const Where &w) {
    require_space(i.dst, {MemSpace::SBUF}, w, "dst"); // nc.md:L312: dst SBUF
    m.check(i.dst, w, "dst", true);
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        affine_row(i, i.dst, 0, w); // the pattern check only
        return info;
    }
    Tile t;
    t.partitions = i.dst.num_partitions;
    t.free = i.dst.free_count();
    t.v.resize(size_t(t.partitions * t.free));
    for (int p = 0; p < t.partitions; p++) {
        std::vector<int64_t> v = affine_row(i, i.dst, p, w);
        for (int64_t f = 0; f < t.free; f++) {
            t.row(p)[f] = float(v[size_t(f)]);
        }
    }
    m.write(i.dst, t);
    return info;
}

ExecInfo exec_affine_select(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    check_compute_operand(m, i.src, w, "src");
    require_same_shape(i.dst, i.src, w, "dst", "src");
    if (i.alu0 < AluOp::IsEqual || i.alu0 > AluOp::IsLe) {
        user_error("NHC_ERT018", w.str(), " compares with ", neff::alu_op_name(i.alu0),
                   ": expected is_equal, not_equal, is_gt, is_ge, is_lt or is_le");
    }
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        affine_row(i, i.src, 0, w); // the pattern check only
        return info;
    }
    Tile t = m.read(i.src);
    for (int p = 0; p < t.partitions; p++) {
        std::vector<int64_t> v = affine_row(i, i.src, p, w);
        for (int64_t f = 0; f < t.free; f++) {
            bool keep = alu(i.alu0, float(v[size_t(f)]), 0.0f) != 0;
            t.row(p)[f] = keep ? t.row(p)[f] : i.value;
        }
    }
    m.write(i.dst, t);
    return info;
}

ExecInfo exec_partition_reduce(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    check_compute_operand(m, i.src, w, "src");
    require_reduce_op(i, w);
    if (i.dst.num_partitions != 1 || i.dst.free_count() != i.src.free_count()) {
        user_error("NHC_ERT008", w.str(), " writes dst [", i.dst.num_partitions, " x ",
                   i.dst.free_count(), "]: reducing [", i.src.num_partitions, " x ",
                   i.src.free_count(), "] across partitions gives [1 x ", i.src.free_count(), "]");
    }
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        return info;
    }
    Tile x = m.read(i.src), out;
    out.partitions = 1;
    out.free = x.free;
    out.v.assign(x.row(0), x.row(0) + x.free);
    for (int p = 1; p < x.partitions; p++) {
        for (int64_t f = 0; f < x.free; f++) {
            out.v[size_t(f)] = alu(i.alu0, out.v[size_t(f)], x.row(p)[f]);
        }
    }
    if (i.alu0 == AluOp::AbsMax) {
        for (auto &v : out.v) {
            v = std::fabs(v);
        }
    }
    m.write(i.dst, out);
    return info;
}

} // namespace nhc::rt
