#include "neff/DmaCost.h"

#include <algorithm>

namespace nhc::neff {

namespace {

/** Contiguous chunks per partition row: the innermost run of unit-stride elements. */
int64_t chunks_per_row(const AccessPattern &ap) {
    if (ap.dims.empty())
        return 1;
    const Dim &in = ap.dims.back();
    int64_t unit = ap.space == MemSpace::HBM ? dtype_size(ap.dtype) : 1;
    int64_t run = in.step == unit ? in.num : 1;
    return ap.free_count() / run;
}

} // namespace

target::DmaQuery dma_query(const Instr &i) {
    target::DmaQuery q;
    int64_t nd = int64_t(i.dst.num_partitions) * i.dst.free_count();
    // A cast goes src -> fp32 -> dst (nc.md:L247): the engines read every source element at its
    // own size, so a transfer is charged the larger of the two sides (a broadcast source row is
    // read once per destination partition).
    int64_t src_bytes = nd * dtype_size(i.src.dtype);
    int64_t dst_bytes = nd * dtype_size(i.dst.dtype);
    q.bytes = std::max(src_bytes, dst_bytes);
    q.hbm_bytes = (i.src.space == MemSpace::HBM ? src_bytes : 0) +
                  (i.dst.space == MemSpace::HBM ? dst_bytes : 0);
    q.chunks =
        int64_t(i.dst.num_partitions) * std::max(chunks_per_row(i.src), chunks_per_row(i.dst));
    const AccessPattern &sb = i.dst.space == MemSpace::SBUF ? i.dst : i.src;
    q.partitions = sb.space == MemSpace::SBUF ? sb.num_partitions : 1;
    q.first_partition = sb.space == MemSpace::SBUF ? sb.start_partition : 0;
    return q;
}

} // namespace nhc::neff
