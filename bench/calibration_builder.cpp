#include "calibration_builder.h"

#include "neff/Assembler.h"
#include "support/Error.h"
#include "target/Target.h"

namespace nhc::bench {

using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;

KernelBuilder::KernelBuilder(const std::string &target, const std::string &name) {
    p_.target = target;
    p_.name = name;
    const auto &t = target::target_by_name(target);
    for (int b = 0; b < t.psum_banks; b++) { // every PSUM bank is a buffer of its own
        buffers_[{int(MemSpace::PSUM), b * t.psum_bank_bytes}] = Buffer{};
    }
}

int KernelBuilder::var(const std::string &name, neff::VarKind kind, neff::DType dtype,
                       std::vector<int64_t> shape) {
    neff::Variable v;
    v.name = name;
    v.kind = kind;
    v.dtype = dtype;
    v.shape = std::move(shape);
    p_.vars.push_back(v);
    return int(p_.vars.size()) - 1;
}

int64_t KernelBuilder::sbuf_alloc(int64_t bytes) {
    const auto &t = target::target_by_name(p_.target);
    int64_t at = sbuf_next_;
    sbuf_next_ += bytes;
    nhc_assert(sbuf_next_ <= t.sbuf_usable_per_partition,
               "kernel '" << p_.name << "' needs " << sbuf_next_ << " SBUF bytes per partition");
    buffers_[{int(MemSpace::SBUF), at}] = Buffer{};
    return at;
}

int64_t KernelBuilder::sbuf_alloc_tiles(int64_t count, int64_t bytes) {
    int64_t first = sbuf_next_;
    for (int64_t i = 0; i < count; i++) {
        sbuf_alloc(bytes);
    }
    return first;
}

AccessPattern KernelBuilder::hbm_tile(int var, int64_t row0, int64_t col0, int rows,
                                      int64_t cols) const {
    const neff::Variable &v = p_.vars[size_t(var)];
    int64_t es = neff::dtype_size(v.dtype), row_bytes = v.shape.at(1) * es;
    AccessPattern ap;
    ap.space = MemSpace::HBM;
    ap.dtype = v.dtype;
    ap.var = var;
    ap.num_partitions = rows;
    ap.partition_step = row_bytes;
    ap.offset = row0 * row_bytes + col0 * es;
    ap.dims = {{es, cols}};
    return ap;
}

AccessPattern KernelBuilder::sbuf(neff::DType dt, int partitions, int64_t offset, int64_t n) {
    AccessPattern ap;
    ap.space = MemSpace::SBUF;
    ap.dtype = dt;
    ap.num_partitions = partitions;
    ap.offset = offset;
    ap.dims = {{1, n}};
    return ap;
}

AccessPattern KernelBuilder::psum(int partitions, int64_t offset, int64_t n) {
    AccessPattern ap = sbuf(neff::DType::F32, partitions, offset, n);
    ap.space = MemSpace::PSUM;
    return ap;
}

KernelBuilder::Buffer *KernelBuilder::buffer_of(const AccessPattern &ap) {
    if (ap.space != MemSpace::SBUF && ap.space != MemSpace::PSUM) {
        return nullptr; // HBM: not tracked (see the header)
    }
    auto it = buffers_.upper_bound({int(ap.space), ap.offset});
    nhc_assert(it != buffers_.begin(), "operand outside every declared buffer");
    --it;
    nhc_assert(it->first.first == int(ap.space), "operand outside every declared buffer");
    return &it->second;
}

void KernelBuilder::need(std::map<int, uint32_t> &waits, int stream, int producer,
                         uint32_t count) const {
    if (producer < 0 || producer == stream || count == 0) {
        return; // nothing written yet, or the same in-order stream
    }
    uint32_t &w = waits[producer];
    w = std::max(w, count);
}

void KernelBuilder::emit(Engine engine, int stream, Instr i,
                         const std::vector<const AccessPattern *> &reads,
                         const AccessPattern *write) {
    std::map<int, uint32_t> waits;
    for (const AccessPattern *r : reads) {
        if (Buffer *b = buffer_of(*r)) {
            need(waits, stream, b->writer_stream, b->writer_count); // RAW
        }
    }
    Buffer *wb = write ? buffer_of(*write) : nullptr;
    if (wb) {
        need(waits, stream, wb->writer_stream, wb->writer_count); // WAW
        for (const auto &[s, c] : wb->readers) {
            need(waits, stream, s, c); // WAR
        }
    }
    auto &done = waited_[int(engine)];
    for (const auto &[producer, value] : waits) {
        if (done[producer] < value) { // in order: an earlier wait of this engine still holds
            i.waits.push_back({uint32_t(producer), value});
            done[producer] = value;
        }
    }
    uint32_t mine = ++count_[stream];
    i.signal = stream;
    for (const AccessPattern *r : reads) {
        if (Buffer *b = buffer_of(*r)) {
            uint32_t &c = b->readers[stream];
            c = std::max(c, mine);
        }
    }
    if (wb) {
        wb->writer_stream = stream;
        wb->writer_count = mine;
        wb->readers.clear();
    }
    p_.stream(engine).push_back(std::move(i));
}

void KernelBuilder::dma(Engine issuer, int queue, const AccessPattern &dst,
                        const AccessPattern &src) {
    Instr i = neff::default_instr(neff::Opcode::Dma);
    i.queue = queue;
    i.dst = dst;
    i.src = src;
    emit(issuer, kQueueBase + queue, i, {&src}, &dst);
}

void KernelBuilder::matmul(const AccessPattern &dst, const AccessPattern &stationary,
                           const AccessPattern &moving, bool accumulate) {
    Instr i = neff::default_instr(neff::Opcode::Matmul);
    i.dst = dst;
    i.src = stationary;
    i.src1 = moving;
    i.flags = accumulate ? neff::kFlagAccumulate : 0;
    // An accumulating matmul also reads its PSUM bank (same engine, so no extra wait).
    emit(Engine::PE, int(Engine::PE), i, {&stationary, &moving}, &dst);
}

void KernelBuilder::tensor_copy(Engine e, const AccessPattern &dst, const AccessPattern &src) {
    Instr i = neff::default_instr(neff::Opcode::TensorCopy);
    i.dst = dst;
    i.src = src;
    emit(e, int(e), i, {&src}, &dst);
}

void KernelBuilder::tensor_tensor(Engine e, neff::AluOp op, const AccessPattern &dst,
                                  const AccessPattern &a, const AccessPattern &b) {
    Instr i = neff::default_instr(neff::Opcode::TensorTensor);
    i.dst = dst;
    i.src = a;
    i.src1 = b;
    i.alu0 = op;
    emit(e, int(e), i, {&a, &b}, &dst);
}

void KernelBuilder::memset(Engine e, const AccessPattern &dst, float value) {
    Instr i = neff::default_instr(neff::Opcode::Memset);
    i.dst = dst;
    i.value = value;
    emit(e, int(e), i, {}, &dst);
}

neff::Program KernelBuilder::finish() {
    p_.layout_hbm();
    return std::move(p_);
}

} // namespace nhc::bench
