#include "neff/ComputeCost.h"

#include <algorithm>
#include <cstdlib>

namespace nhc::neff {

namespace {

using Kind = target::CostQuery::Kind;

/** The operand-dependent parts of a query (N, P, PSUM, 16-bit, strides) over dst, src, src1
 *  and pred; nc.md:L232: an inner stride above fast_stride_bytes halves the access rate. */
target::CostQuery base_query(const target::TargetInfo &t, Engine e, const Instr &i, Kind kind,
                             int64_t n) {
    target::CostQuery q;
    q.kind = kind;
    q.engine = e;
    q.n = n;
    q.partitions = i.dst.num_partitions;
    q.all_16bit_sbuf = true;
    for (const AccessPattern *ap : {&i.dst, &i.src, &i.src1, &i.pred}) {
        if (!ap->present())
            continue;
        q.psum_operand |= ap->space == MemSpace::PSUM;
        q.all_16bit_sbuf &= ap->space == MemSpace::SBUF && dtype_is_16bit_float(ap->dtype);
        int64_t inner = ap->dims.empty() ? 1 : ap->dims.back().step;
        q.contiguous &= inner == 1 || ap->free_count() == 1;
        // |inner| * size > limit, without the product (a stranger's step may be any int64).
        int64_t limit = t.fast_stride_bytes / dtype_size(ap->dtype);
        q.wide_stride |= inner > limit || inner < -limit;
    }
    return q;
}

bool bf16_add_mult_or_subtract(const Instr &i) {
    bool simple = i.alu0 == AluOp::Add || i.alu0 == AluOp::Mult || i.alu0 == AluOp::Subtract;
    return simple && i.src.dtype == DType::BF16 && i.src1.dtype == DType::BF16;
}

} // namespace

target::CostQuery compute_query(const target::TargetInfo &t, Engine e, const Instr &i) {
    target::CostQuery q;
    switch (i.op) {
    case Opcode::Nop:
    case Opcode::Dma:
        return q; // Kind::Nop
    case Opcode::Matmul:
        q = base_query(t, e, i, Kind::Matmul, i.src1.free_count());
        q.stationary_free = i.src.free_count();
        // nc.md:L80, L142, L422: tf32 runs at the bf16 rate; only an fp32 operand is 4x slower.
        q.fp32_matmul = i.src.dtype == DType::F32 || i.src1.dtype == DType::F32;
        return q;
    case Opcode::Transpose:
        q = base_query(t, e, i, Kind::Transpose, i.src.free_count());
        q.partitions = i.src.num_partitions;
        q.fp32_matmul = i.src.dtype == DType::F32; // tf32 at the bf16 rate (nc.md:L80)
        return q;
    case Opcode::Activation:
        q = base_query(t, e, i, Kind::Activation, i.src.free_count());
        q.accumulate = i.accum.present();
        return q;
    case Opcode::TensorTensor:
        q = base_query(t, e, i, Kind::TensorTensor, i.src.free_count());
        // nc.md:L301: bf16 add/mult/subtract contiguous in SBUF runs in one pass.
        q.cheap_variant = bf16_add_mult_or_subtract(i) && q.all_16bit_sbuf && q.contiguous;
        return q;
    case Opcode::TensorScalar:
        return base_query(t, e, i, Kind::TensorScalar, i.src.free_count());
    case Opcode::TensorReduce:
        q = base_query(t, e, i, Kind::TensorReduce, i.src.free_count());
        // nc.md:L306: N/2 for bf16 in/out with add or max.
        q.cheap_variant = i.src.dtype == DType::BF16 && i.dst.dtype == DType::BF16 &&
                          (i.alu0 == AluOp::Add || i.alu0 == AluOp::Max);
        return q;
    case Opcode::TensorCopy:
        return base_query(t, e, i, Kind::TensorCopy, i.src.free_count());
    case Opcode::Memset:
        q = base_query(t, e, i, Kind::Memset, i.dst.free_count());
        q.cheap_variant = i.value == 0 && dtype_is_16bit_float(i.dst.dtype); // nc.md:L311
        return q;
    case Opcode::Iota:
        return base_query(t, e, i, Kind::Iota, i.dst.free_count());
    case Opcode::AffineSelect:
        return base_query(t, e, i, Kind::AffineSelect, i.src.free_count());
    case Opcode::Select:
        return base_query(t, e, i, Kind::Select, i.dst.free_count());
    case Opcode::PartitionReduce:
        q = base_query(t, e, i, Kind::PartitionReduce, i.src.free_count());
        q.partitions = i.src.num_partitions;
        return q;
    }
    return q;
}

void shared_ports(const target::TargetInfo &t, Engine e, const Instr &i, std::vector<int> &ports,
                  std::vector<Footprint> &reads, std::vector<Footprint> &writes) {
    if (i.op == Opcode::Dma || i.op == Opcode::Nop)
        return;
    bool sbuf_port = t.dve_pool_share_sbuf_port && (e == Engine::DVE || e == Engine::POOL);
    bool psum_port = e == Engine::DVE || e == Engine::ACT;
    if (!sbuf_port && !psum_port)
        return;
    instr_footprints(i, reads, writes);
    bool sbuf_used = false;
    for (const auto *v : {&reads, &writes})
        for (const Footprint &fp : *v) {
            sbuf_used |= fp.space == MemSpace::SBUF;
            if (!psum_port || fp.space != MemSpace::PSUM)
                continue;
            int64_t lo = 0, hi = t.psum_banks - 1;
            if (t.dve_act_psum_contention_per_bank) {
                lo = fp.begin / t.psum_bank_bytes;
                hi = std::min<int64_t>(hi, (fp.end - 1) / t.psum_bank_bytes);
            }
            for (int64_t b = lo; b <= hi; b++)
                ports.push_back(1 + static_cast<int>(b));
        }
    if (sbuf_port && sbuf_used)
        ports.push_back(0);
}

} // namespace nhc::neff
