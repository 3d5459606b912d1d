#include "runtime/Exec.h"

#include "runtime/AluOps.h"

#include "support/Error.h"

#include <cstdlib>

namespace nhc::rt {

using neff::AccessPattern;
using neff::Engine;
using neff::MemSpace;
using neff::Opcode;

ExecInfo execute_instr(Machine &m, const neff::Instr &i, const Where &w) {
    switch (i.op) {
    case Opcode::Nop:
        return ExecInfo{};
    case Opcode::Dma:
        return exec_dma(m, i, w);
    case Opcode::Matmul:
        return exec_matmul(m, i, w);
    case Opcode::Transpose:
        return exec_transpose(m, i, w);
    case Opcode::Activation:
        return exec_activation(m, i, w);
    case Opcode::TensorTensor:
        return exec_tensor_tensor(m, i, w);
    case Opcode::TensorScalar:
        return exec_tensor_scalar(m, i, w);
    case Opcode::TensorReduce:
        return exec_tensor_reduce(m, i, w);
    case Opcode::TensorCopy:
        return exec_tensor_copy(m, i, w);
    case Opcode::Memset:
        return exec_memset(m, i, w);
    case Opcode::Iota:
        return exec_iota(m, i, w);
    case Opcode::AffineSelect:
        return exec_affine_select(m, i, w);
    case Opcode::Select:
        return exec_select(m, i, w);
    case Opcode::PartitionReduce:
        return exec_partition_reduce(m, i, w);
    }
    nhc_assert(false, "unknown opcode " << int(i.op));
    return ExecInfo{};
}

void require_space(const AccessPattern &ap, std::initializer_list<MemSpace> allowed, const Where &w,
                   const char *field) {
    std::string names;
    for (MemSpace s : allowed) {
        if (ap.space == s) {
            return;
        }
        names += (names.empty() ? "" : " or ") + std::string(neff::mem_space_name(s));
    }
    user_error("NHC_ERT009", w.str(), " operand ", field, " is in ", neff::mem_space_name(ap.space),
               ": expected ", names);
}

void require_same_shape(const AccessPattern &a, const AccessPattern &b, const Where &w,
                        const char *fa, const char *fb) {
    if (a.num_partitions != b.num_partitions || a.free_count() != b.free_count()) {
        user_error("NHC_ERT008", w.str(), " operands ", fa, " [", a.num_partitions, " x ",
                   a.free_count(), "] and ", fb, " [", b.num_partitions, " x ", b.free_count(),
                   "] differ in shape");
    }
}

void check_compute_operand(const Machine &m, const AccessPattern &ap, const Where &w,
                           const char *field) {
    if (w.engine == Engine::POOL) {
        // nc.md:L184: GpSimd cannot access PSUM.
        require_space(ap, {MemSpace::SBUF}, w, field);
    } else {
        require_space(ap, {MemSpace::SBUF, MemSpace::PSUM}, w, field);
    }
    m.check(ap, w, field, /*compute=*/true);
}

void require_reduce_op(const neff::Instr &i, const Where &w) {
    if (!is_reduce_op(i.alu0))
        user_error("NHC_ERT018", w.str(), " reduces with ", neff::alu_op_name(i.alu0),
                   ": expected add, subtract, mult, max, min, abs_max or a logical op");
}

std::vector<float> scalar_values(const Machine &m, const neff::Scalar &s, int partitions,
                                 const Where &w, const char *field) {
    if (!s.is_ap) {
        return std::vector<float>(size_t(partitions), s.imm);
    }
    check_compute_operand(m, s.ap, w, field);
    if (s.ap.num_partitions != partitions || s.ap.free_count() != 1) {
        user_error("NHC_ERT008", w.str(), " operand ", field, " is [", s.ap.num_partitions, " x ",
                   s.ap.free_count(), "]: expected [", partitions, " x 1]");
    }
    if (!m.functional()) {
        return std::vector<float>(size_t(partitions), 0.0f); // timing only: checked, not read
    }
    return m.read(s.ap).v;
}

} // namespace nhc::rt
