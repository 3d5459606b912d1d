#include "runtime/Machine.h"

#include "runtime/Numerics.h"
#include "support/Error.h"

#include <cstring>

namespace nhc::rt {

using neff::AccessPattern;
using neff::MemSpace;

std::string Where::str() const {
    std::string s =
        std::string(target::engine_name(engine)) + " instruction " + std::to_string(index);
    if (instr) {
        s += std::string(" (") + neff::opcode_name(instr->op);
        if (!instr->name.empty()) {
            s += " '" + instr->name + "'";
        }
        s += ")";
    }
    return s;
}

Machine::Machine(const target::TargetInfo &t, const neff::Program &p, bool functional)
    : t_(t), p_(p), functional_(functional) {
    int64_t hbm = p.hbm_size();
    if (hbm > t.hbm_bytes_per_core) {
        user_error("NHC_ERT017", "program '", p.name, "' needs ", hbm, " bytes of HBM, ", t.name,
                   " has ", t.hbm_bytes_per_core, " per NeuronCore");
    }
    if (!functional_) {
        return; // timing only: no values, so no memory (a full-size matmul has 256 MiB of HBM)
    }
    sbuf_.assign(size_t(t.partitions) * t.sbuf_usable_per_partition, 0);
    psum_.assign(size_t(t.partitions) * t.psum_bytes_per_partition, 0);
    hbm_.assign(size_t(hbm), 0);
    for (size_t i = 0; i < p.vars.size(); i++) {
        if (p.vars[i].kind == neff::VarKind::Weight) {
            if (p.vars[i].has_bytes())
                p.vars[i].read_bytes(0, p.vars[i].data_size, hbm_var(int(i)));
        }
    }
}

void Machine::check(const AccessPattern &ap, const Where &w, const char *field,
                    bool compute) const {
    if (ap.space == MemSpace::HBM || !ap.present()) {
        return; // HBM bounds are checked at load (validate_hbm_bounds)
    }
    const char *mem = neff::mem_space_name(ap.space);
    // In 64 bits: a NEFF from a stranger may hold any 32-bit values.
    const int64_t end_partition = int64_t(ap.start_partition) + ap.num_partitions;
    if (ap.num_partitions < 1 || ap.start_partition < 0 || end_partition > t_.partitions) {
        user_error("NHC_ERT005", w.str(), " operand ", field, " uses partitions [",
                   ap.start_partition, ", ", end_partition, ") of ", mem,
                   ": expected a range inside [0, ", t_.partitions, ")");
    }
    if (compute && !target::partition_start_allowed(t_, ap.start_partition, ap.num_partitions)) {
        user_error("NHC_ERT005", w.str(), " operand ", field, " starts at partition ",
                   ap.start_partition, " with ", ap.num_partitions,
                   " partitions: a tile of that size must start at a multiple of ",
                   ap.num_partitions > t_.partitions / 2   ? t_.partitions
                   : ap.num_partitions > t_.partitions / 4 ? t_.partitions / 2
                                                           : t_.partitions / 4);
    }
    int64_t esize = neff::dtype_size(ap.dtype), lo = ap.offset, hi = ap.offset;
    // Checked: the offsets, steps and counts of a NEFF from a stranger may be any 64-bit values.
    auto refuse_span = [&] {
        user_error(ap.space == MemSpace::SBUF ? "NHC_ERT004" : "NHC_ERT006", w.str(), " operand ",
                   field, " spans more bytes than 64 bits count, far past ", mem);
    };
    for (const auto &d : ap.dims) {
        if (d.num < 1) {
            user_error("NHC_ERT008", w.str(), " operand ", field, " has a dimension of ", d.num,
                       " elements");
        }
        int64_t span = 0;
        if (__builtin_mul_overflow(d.step, d.num - 1, &span) ||
            __builtin_mul_overflow(span, esize, &span) ||
            __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
            refuse_span();
    }
    if (__builtin_add_overflow(hi, esize, &hi))
        refuse_span();
    if (ap.space == MemSpace::SBUF && (lo < 0 || hi > t_.sbuf_usable_per_partition)) {
        user_error("NHC_ERT004", w.str(), " operand ", field, " touches sbuf bytes [", lo, ", ", hi,
                   ") of each partition: ", t_.name, " has ", t_.sbuf_usable_per_partition,
                   " usable bytes per partition");
    }
    if (ap.space == MemSpace::PSUM) {
        if (lo < 0 || hi > t_.psum_bytes_per_partition) {
            user_error("NHC_ERT006", w.str(), " operand ", field, " touches psum bytes [", lo, ", ",
                       hi, ") of each partition: psum has ", t_.psum_bytes_per_partition);
        }
        if (lo / t_.psum_bank_bytes != (hi - 1) / t_.psum_bank_bytes) {
            user_error("NHC_ERT006", w.str(), " operand ", field, " crosses a psum bank: bytes [",
                       lo, ", ", hi, ") span banks ", lo / t_.psum_bank_bytes, " and ",
                       (hi - 1) / t_.psum_bank_bytes, " (", t_.psum_bank_bytes, " bytes per bank)");
        }
    }
}

uint8_t *Machine::row_base(const AccessPattern &ap, int p) {
    return const_cast<uint8_t *>(static_cast<const Machine *>(this)->row_base(ap, p));
}

const uint8_t *Machine::row_base(const AccessPattern &ap, int p) const {
    nhc_assert(functional_, "data access on a timing-only machine");
    switch (ap.space) {
    case MemSpace::SBUF:
        return sbuf_.data() + int64_t(ap.start_partition + p) * t_.sbuf_usable_per_partition;
    case MemSpace::PSUM:
        return psum_.data() + int64_t(ap.start_partition + p) * t_.psum_bytes_per_partition;
    case MemSpace::HBM:
        return hbm_var(ap.var) + int64_t(p) * ap.partition_step;
    default:
        nhc_assert(false, "access to an absent operand");
    }
    return nullptr;
}

Tile Machine::read(const AccessPattern &ap) const {
    Tile t;
    t.partitions = ap.num_partitions;
    t.free = ap.free_count();
    t.v.resize(size_t(t.partitions) * t.free);
    for (int p = 0; p < t.partitions; p++) {
        const uint8_t *base = row_base(ap, p);
        float *out = t.row(p);
        if (ap.dtype == neff::DType::F32) {
            for_each_offset(ap,
                            [&](int64_t i, int64_t off) { std::memcpy(out + i, base + off, 4); });
        } else if (ap.dtype == neff::DType::BF16) { // the common matmul input: a shift
            for_each_offset(ap, [&](int64_t i, int64_t off) {
                uint16_t b;
                std::memcpy(&b, base + off, 2);
                out[i] = bf16_to_f32(b);
            });
        } else {
            for_each_offset(
                ap, [&](int64_t i, int64_t off) { out[i] = load_elem(ap.dtype, base + off); });
        }
    }
    return t;
}

void Machine::write(const AccessPattern &ap, const Tile &t) {
    nhc_assert(t.partitions == ap.num_partitions && t.free == ap.free_count(),
               "tile shape does not match the destination");
    for (int p = 0; p < t.partitions; p++) {
        uint8_t *base = row_base(ap, p);
        const float *in = t.row(p);
        for_each_offset(ap,
                        [&](int64_t i, int64_t off) { store_elem(ap.dtype, base + off, in[i]); });
    }
}

std::vector<uint8_t> Machine::gather_bytes(const AccessPattern &ap) const {
    size_t esize = size_t(neff::dtype_size(ap.dtype));
    std::vector<uint8_t> out(size_t(ap.num_partitions) * size_t(ap.free_count()) * esize);
    uint8_t *o = out.data();
    for (int p = 0; p < ap.num_partitions; p++) {
        const uint8_t *base = row_base(ap, p);
        for_each_offset(ap, [&](int64_t, int64_t off) {
            std::memcpy(o, base + off, esize);
            o += esize;
        });
    }
    return out;
}

void Machine::scatter_bytes(const AccessPattern &ap, const std::vector<uint8_t> &bytes) {
    size_t esize = size_t(neff::dtype_size(ap.dtype));
    nhc_assert(bytes.size() == size_t(ap.num_partitions) * size_t(ap.free_count()) * esize,
               "scatter of " << bytes.size() << " bytes to a mismatched operand");
    const uint8_t *in = bytes.data();
    for (int p = 0; p < ap.num_partitions; p++) {
        uint8_t *base = row_base(ap, p);
        for_each_offset(ap, [&](int64_t, int64_t off) {
            std::memcpy(base + off, in, esize);
            in += esize;
        });
    }
}

void Machine::copy_bits(const AccessPattern &dst, const AccessPattern &src) {
    std::vector<uint8_t> b = gather_bytes(src);
    if (src.num_partitions == 1 && dst.num_partitions > 1) {
        std::vector<uint8_t> row = std::move(b);
        b.clear();
        for (int p = 0; p < dst.num_partitions; p++) {
            b.insert(b.end(), row.begin(), row.end());
        }
    }
    scatter_bytes(dst, b);
}

} // namespace nhc::rt
