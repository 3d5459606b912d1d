/** \file
 * DMA copies (neuroncore.md §2.3, §3.2 dma_copy): HBM<->SBUF, SBUF<->SBUF and HBM<->HBM, with up
 * to 4-D access patterns, a dtype cast through fp32 when the dtypes differ (nc.md:L440), and a
 * partition broadcast when the source has one partition (or an HBM row step of 0). DMA engines
 * do not reach PSUM (nc.md:L327: "HBM/SBUF both ends").
 */
#include "runtime/Exec.h"

#include "neff/DmaCost.h"

#include "support/Error.h"

#include <algorithm>
#include <cstring>

namespace nhc::rt {

using neff::AccessPattern;
using neff::MemSpace;

namespace {

/** Copies src to dst (same element count), casting through fp32 when the dtypes differ. */
void copy_elements(Machine &m, const AccessPattern &dst, const AccessPattern &src, bool broadcast) {
    if (dst.dtype == src.dtype) {
        m.copy_bits(dst, src);
        return;
    }
    Tile t = m.read(src);
    Tile out;
    out.partitions = dst.num_partitions;
    out.free = dst.free_count();
    for (int p = 0; p < (broadcast ? out.partitions : 1); p++) {
        out.v.insert(out.v.end(), t.v.begin(), t.v.end()); // same order, new row shape
    }
    m.write(dst, out);
}

/** The indirect form: dst [P, F] in SBUF, index [P, 1] i32 in SBUF on dst's partitions, src an
 *  HBM table of src.num_partitions rows of F elements. */
void exec_indirect(Machine &m, const neff::Instr &i, const Where &w) {
    const AccessPattern &index = i.src1;
    require_space(i.dst, {MemSpace::SBUF}, w, "dst");
    require_space(i.src, {MemSpace::HBM}, w, "src");
    require_space(index, {MemSpace::SBUF}, w, "index");
    m.check(i.dst, w, "dst", false);
    m.check(index, w, "index", false);
    if (index.dtype != neff::DType::I32) {
        user_error("NHC_ERT010", w.str(), " operand index is ", neff::dtype_name(index.dtype),
                   ": an indirect DMA takes i32 row indices");
    }
    if (index.num_partitions != i.dst.num_partitions || index.free_count() != 1 ||
        index.start_partition != i.dst.start_partition ||
        i.src.free_count() != i.dst.free_count()) {
        user_error("NHC_ERT008", w.str(), " gathers src rows of ", i.src.free_count(),
                   " elements into dst [", i.dst.num_partitions, " x ", i.dst.free_count(),
                   "] with index [", index.num_partitions, " x ", index.free_count(),
                   "]: expected one index per dst partition, on the same partitions, and rows "
                   "of dst's size");
    }
    if (!m.functional()) {
        return; // timing only: no index values to follow
    }
    std::vector<uint8_t> rows = m.gather_bytes(index); // one i32 per partition
    for (int p = 0; p < i.dst.num_partitions; p++) {
        int32_t row;
        std::memcpy(&row, rows.data() + size_t(p) * sizeof row, sizeof row);
        if (row < 0 || row >= i.src.num_partitions) {
            user_error("NHC_ERT020", w.str(), " reads row ", row, " of a table of ",
                       i.src.num_partitions, " rows (index partition ", index.start_partition + p,
                       "): an out-of-bounds indirect copy");
        }
        AccessPattern from = i.src, to = i.dst;
        from.offset += int64_t(row) * i.src.partition_step;
        from.num_partitions = 1;
        to.start_partition += p;
        to.num_partitions = 1;
        copy_elements(m, to, from, false);
    }
}

/** The direct form: an element stream from src to dst. */
void exec_direct(Machine &m, const neff::Instr &i, const Where &w) {
    require_space(i.dst, {MemSpace::SBUF, MemSpace::HBM}, w, "dst");
    require_space(i.src, {MemSpace::SBUF, MemSpace::HBM}, w, "src");
    m.check(i.dst, w, "dst", false);
    m.check(i.src, w, "src", false);
    // A DMA moves an element stream: both sides must hold the same number of elements, in
    // their own (partition, free...) row-major order; or src is one row broadcast to every
    // destination partition.
    int64_t ns = int64_t(i.src.num_partitions) * i.src.free_count();
    int64_t nd = int64_t(i.dst.num_partitions) * i.dst.free_count();
    bool broadcast = i.src.num_partitions == 1 && i.dst.num_partitions > 1 &&
                     i.src.free_count() == i.dst.free_count();
    if (ns != nd && !broadcast) {
        user_error("NHC_ERT008", w.str(), " copies src [", i.src.num_partitions, " x ",
                   i.src.free_count(), "] to dst [", i.dst.num_partitions, " x ",
                   i.dst.free_count(), "]: element counts must match (or src be one row)");
    }
    if (m.functional()) { // timing only: nothing moves
        copy_elements(m, i.dst, i.src, broadcast);
    }
}

} // namespace

ExecInfo exec_dma(Machine &m, const neff::Instr &i, const Where &w) {
    if (i.src1.present()) {
        exec_indirect(m, i, w);
    } else {
        exec_direct(m, i, w);
    }
    ExecInfo info;
    info.is_dma = true;
    info.dma = neff::dma_query(i);
    return info;
}

} // namespace nhc::rt
