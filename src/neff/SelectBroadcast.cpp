// Instruction selection, a load broadcast over the partitions (a row read with a partition
// stride of 0) built on the PE: the row loaded into one partition, then per PSUM bank of it a
// matmul of a ones row by it (K = 1: every output partition gets the row) and a copy out of
// PSUM into the destination. The DMA then moves the row once instead of once per partition.

#include "neff/SelectorState.h"

#include <algorithm>

namespace nhc::codegen {

using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;
using neff::Opcode;

namespace {

AccessPattern row_ap(MemSpace space, neff::DType dtype, int32_t partitions, int64_t offset,
                     int64_t elems) {
    AccessPattern ap;
    ap.space = space;
    ap.dtype = dtype;
    ap.num_partitions = partitions;
    ap.offset = offset;
    ap.dims = {{1, elems}};
    return ap;
}

} // namespace

bool pe_broadcast_candidate(const Instr &dma) {
    const AccessPattern &s = dma.src, &d = dma.dst;
    if (dma.op != Opcode::Dma || s.space != MemSpace::HBM || d.space != MemSpace::SBUF ||
        s.partition_step != 0 || d.num_partitions < 2 || s.dims.size() != 1 || d.dims.size() != 1)
        return false;
    int64_t es = neff::dtype_size(s.dtype), F = s.dims[0].num;
    return s.dims[0].step == es && d.dims[0].step == 1 && d.dims[0].num == F &&
           F >= SelectOptions::kMinPeBroadcastRow &&
           (s.dtype == neff::DType::F32 || s.dtype == neff::DType::BF16 ||
            s.dtype == neff::DType::F16);
}

bool Selector::select_pe_broadcast(const Instr &dma) {
    if (!opt_.broadcast_on_pe || !pe_broadcast_candidate(dma))
        return false;
    const AccessPattern &s = dma.src, &d = dma.dst;
    int64_t es = neff::dtype_size(s.dtype), F = s.dims[0].num;
    // Released with the nest's other temporaries (release_temps); a full SBUF or PSUM leaves
    // the load to the DMA.
    int64_t row_off = sbuf_.allocate(F * es);
    if (row_off >= 0)
        temps_.push_back(row_off);
    int64_t ones_off = row_off < 0 ? -1 : sbuf_.allocate(d.num_partitions * es);
    if (ones_off >= 0)
        temps_.push_back(ones_off);
    int64_t bank = opt_.target->matmul_max_moving;
    int64_t psum_off = ones_off < 0 ? -1 : psum_.allocate(std::min(bank, F) * 4);
    if (psum_off < 0)
        return false;
    Instr load = dma;
    load.dst = row_ap(MemSpace::SBUF, s.dtype, 1, row_off, F);
    load.src.num_partitions = 1;
    load.queue = next_queue_;
    next_queue_ = (next_queue_ + 1) % opt_.dma_queues;
    emit(Engine::SP, load);
    Instr ones;
    ones.op = Opcode::Memset;
    ones.dst = row_ap(MemSpace::SBUF, s.dtype, 1, ones_off, d.num_partitions);
    ones.value = 1.0f;
    emit(Engine::POOL, ones);
    int64_t ed = neff::dtype_size(d.dtype);
    for (int64_t c = 0; c < F; c += bank) {
        // A bank of its own where one is free (the pieces then overlap), else the first one.
        int64_t w = std::min(bank, F - c), own = c == 0 ? -1 : psum_.allocate(w * 4);
        Instr mm;
        mm.op = Opcode::Matmul;
        mm.dst = row_ap(MemSpace::PSUM, neff::DType::F32, d.num_partitions,
                        own >= 0 ? own : psum_off, w);
        mm.src = ones.dst; // stationary [K = 1, M = partitions]
        mm.src1 = row_ap(MemSpace::SBUF, s.dtype, 1, row_off + c * es, w); // moving [1, w]
        emit(Engine::PE, mm);
        Instr cp;
        cp.dst = d;
        cp.dst.offset += c * ed;
        cp.dst.dims = {{1, w}};
        cp.src = mm.dst;
        Engine e = lighter_engine(w);
        if (e == Engine::ACT) {
            cp.op = Opcode::Activation;
            cp.func = neff::ActFunc::Copy;
            cp.s0.imm = 1.0f;
        } else {
            cp.op = Opcode::TensorCopy;
        }
        emit(e, cp);
        if (own >= 0)
            psum_.release(own);
    }
    psum_.release(psum_off);
    return true;
}

} // namespace nhc::codegen
