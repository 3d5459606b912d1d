/** \file
 * DMA copies (neuroncore.md §2.3, §3.2 dma_copy): HBM<->SBUF, SBUF<->SBUF and HBM<->HBM, with up
 * to 4-D access patterns, a dtype cast through fp32 when the dtypes differ (nc.md:L440), and a
 * partition broadcast when the source has one partition (or an HBM row step of 0). DMA engines
 * do not reach PSUM (nc.md:L327: "HBM/SBUF both ends").
 */
#include "runtime/Exec.h"

#include "support/Error.h"

#include <algorithm>

namespace nhc::rt {

using neff::AccessPattern;
using neff::MemSpace;

namespace {

/** Contiguous chunks per partition row: the innermost run of unit-stride elements. */
int64_t chunks_per_row(const AccessPattern &ap) {
    if (ap.dims.empty()) {
        return 1;
    }
    const neff::Dim &in = ap.dims.back();
    int64_t unit = ap.space == MemSpace::HBM ? neff::dtype_size(ap.dtype) : 1;
    int64_t run = in.step == unit ? in.num : 1;
    return ap.free_count() / run;
}

} // namespace

ExecInfo exec_dma(Machine &m, const neff::Instr &i, const Where &w) {
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
    if (!m.functional()) {
        // timing only: nothing moves
    } else if (i.dst.dtype == i.src.dtype) {
        m.copy_bits(i.dst, i.src);
    } else {
        Tile t = m.read(i.src);
        Tile out;
        out.partitions = i.dst.num_partitions;
        out.free = i.dst.free_count();
        for (int p = 0; p < (broadcast ? out.partitions : 1); p++) {
            out.v.insert(out.v.end(), t.v.begin(), t.v.end()); // same order, new row shape
        }
        m.write(i.dst, out);
    }
    ExecInfo info;
    info.is_dma = true;
    // A cast goes src -> fp32 -> dst (nc.md:L247): the engines read every source element at its
    // own size, so a transfer is charged the larger of the two sides (a broadcast source row is
    // read once per destination partition).
    int64_t src_bytes = nd * neff::dtype_size(i.src.dtype);
    int64_t dst_bytes = nd * neff::dtype_size(i.dst.dtype);
    info.dma.bytes = std::max(src_bytes, dst_bytes);
    info.dma.hbm_bytes = (i.src.space == MemSpace::HBM ? src_bytes : 0) +
                         (i.dst.space == MemSpace::HBM ? dst_bytes : 0);
    info.dma.chunks =
        int64_t(i.dst.num_partitions) * std::max(chunks_per_row(i.src), chunks_per_row(i.dst));
    const AccessPattern &sb = i.dst.space == MemSpace::SBUF ? i.dst : i.src;
    info.dma.partitions = sb.space == MemSpace::SBUF ? sb.num_partitions : 1;
    info.dma.first_partition = sb.space == MemSpace::SBUF ? sb.start_partition : 0;
    return info;
}

} // namespace nhc::rt
