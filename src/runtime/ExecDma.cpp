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

namespace nhc::rt {

using neff::AccessPattern;
using neff::MemSpace;

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
    info.dma = neff::dma_query(i);
    return info;
}

} // namespace nhc::rt
