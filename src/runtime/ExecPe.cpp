/** \file
 * Tensor engine: matmul and transpose (neuroncore.md §1.3).
 * matmul: dst[M, N] (PSUM, fp32) = stationary[K, M].T @ moving[K, N], with K on partitions,
 * K <= 128, M <= 128, N <= 512 (one PSUM bank); accumulate adds into PSUM in fp32. The product
 * runs through Eigen in fp32.
 * transpose: dst[F, P] (PSUM) = src[P, F]. On NeuronCore-v2 it is a matmul with the identity,
 * so a NaN or Inf in a source column turns its whole output row into NaN and -0 becomes +0
 * (nc.md:L125); v3's transpose mode is bit-exact (nc.md:L126-127).
 */
#include "runtime/Exec.h"

#include "neff/ComputeCost.h"

#include "support/Error.h"

#include <Eigen/Core>

#include <cmath>
#include <limits>

namespace nhc::rt {

using neff::DType;
using neff::MemSpace;
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {

bool is_fp32_like(DType t) {
    return t == DType::F32 || t == DType::TF32;
}

void check_matmul_dtypes(const neff::Instr &i, const Where &w) {
    for (const auto *ap : {&i.src, &i.src1}) {
        if (!neff::dtype_is_float(ap->dtype)) {
            user_error("NHC_ERT010", w.str(), " reads ", neff::dtype_name(ap->dtype),
                       ": the PE takes fp8, bf16, fp16, tf32 or fp32 (nc.md §1.3)");
        }
    }
    // nc.md:L116: tf32/fp32 must pair with tf32/fp32 [ISA].
    if (is_fp32_like(i.src.dtype) != is_fp32_like(i.src1.dtype)) {
        user_error("NHC_ERT010", w.str(), " mixes ", neff::dtype_name(i.src.dtype), " and ",
                   neff::dtype_name(i.src1.dtype), ": fp32/tf32 must pair with fp32/tf32");
    }
    if (i.dst.dtype != DType::F32) {
        user_error("NHC_ERT010", w.str(), " writes ", neff::dtype_name(i.dst.dtype),
                   " to psum: matmul output is fp32");
    }
}

void check_limit(const Where &w, const char *what, int64_t value, int64_t limit) {
    if (value > limit) {
        user_error("NHC_ERT011", w.str(), " has ", what, " ", value, ": at most ", limit);
    }
}

} // namespace

ExecInfo exec_matmul(Machine &m, const neff::Instr &i, const Where &w) {
    const auto &t = m.target();
    require_space(i.dst, {MemSpace::PSUM}, w, "dst");
    require_space(i.src, {MemSpace::SBUF}, w, "stationary");
    require_space(i.src1, {MemSpace::SBUF}, w, "moving");
    int64_t k = i.src.num_partitions, mm = i.src.free_count(), n = i.src1.free_count();
    check_limit(w, "K (contraction partitions)", k, t.pe_rows);
    check_limit(w, "stationary free size M", mm, t.pe_cols);
    check_limit(w, "moving free size N", n, t.matmul_max_moving);
    for (auto [ap, f] : {std::pair{&i.dst, "dst"}, {&i.src, "stationary"}, {&i.src1, "moving"}}) {
        m.check(*ap, w, f, true);
    }
    check_matmul_dtypes(i, w);
    if (i.src1.num_partitions != k) {
        user_error("NHC_ERT008", w.str(), " has stationary K = ", k,
                   " and moving K = ", i.src1.num_partitions, ": the contraction sizes must match");
    }
    if (i.dst.num_partitions != mm || i.dst.free_count() != n) {
        user_error("NHC_ERT008", w.str(), " writes dst [", i.dst.num_partitions, " x ",
                   i.dst.free_count(), "]: expected [", mm, " x ", n, "]");
    }
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    info.flops = target::matmul_flops(k, mm, n);
    bool fp8 = i.src.dtype == DType::FP8E4M3 || i.src.dtype == DType::FP8E5M2;
    info.peak_flops_per_ns = t.pe_peak_flops_per_ns(info.cost.fp32_matmul, fp8);
    if (!m.functional()) {
        return info;
    }
    Tile s = m.read(i.src), mv = m.read(i.src1);
    Eigen::Map<const RowMajor> S(s.v.data(), k, mm), MV(mv.v.data(), k, n);
    Tile out;
    out.partitions = int(mm);
    out.free = n;
    out.v.resize(size_t(mm * n));
    Eigen::Map<RowMajor> R(out.v.data(), mm, n);
    R.noalias() = S.transpose() * MV;
    if (i.has(neff::kFlagAccumulate)) {
        Tile old = m.read(i.dst);
        Eigen::Map<const RowMajor> O(old.v.data(), mm, n);
        R = O + R;
    }
    m.write(i.dst, out);
    return info;
}

ExecInfo exec_transpose(Machine &m, const neff::Instr &i, const Where &w) {
    const auto &t = m.target();
    require_space(i.dst, {MemSpace::PSUM}, w, "dst");
    require_space(i.src, {MemSpace::SBUF}, w, "src");
    m.check(i.dst, w, "dst", true);
    m.check(i.src, w, "src", true);
    int64_t p = i.src.num_partitions, f = i.src.free_count();
    check_limit(w, "source free size", f, t.pe_cols); // nc.md:L297 tile <= [128, 128]
    if (i.dst.num_partitions != f || i.dst.free_count() != p) {
        user_error("NHC_ERT008", w.str(), " writes dst [", i.dst.num_partitions, " x ",
                   i.dst.free_count(), "]: the transpose of [", p, " x ", f, "] is [", f, " x ", p,
                   "]");
    }
    bool same = i.dst.dtype == i.src.dtype;
    if (i.dst.dtype != DType::F32 && !(t.pe_transpose_exact && same)) {
        user_error("NHC_ERT010", w.str(), " writes ", neff::dtype_name(i.dst.dtype),
                   ": the PE transpose writes fp32 (or the source dtype on NeuronCore-v3)");
    }
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        return info;
    }
    Tile in = m.read(i.src), out;
    out.partitions = int(f);
    out.free = p;
    out.v.resize(size_t(p * f));
    for (int64_t c = 0; c < f; c++) {
        bool poisoned = false;
        for (int64_t r = 0; r < p && !t.pe_transpose_exact; r++) {
            poisoned |= !std::isfinite(in.row(int(r))[c]);
        }
        for (int64_t r = 0; r < p; r++) {
            float x = in.row(int(r))[c];
            // v2: sum of x*1 and zeros: -0 + 0 = +0; a non-finite value poisons the row.
            out.row(int(c))[r] = poisoned ? std::numeric_limits<float>::quiet_NaN()
                                          : (t.pe_transpose_exact ? x : x + 0.0f);
        }
    }
    m.write(i.dst, out);
    return info;
}

} // namespace nhc::rt
