/** \file
 * Vector and scalar engine instructions (neuroncore.md §1.4, §3.2): activation, tensor_tensor,
 * tensor_scalar, tensor_reduce and select. All arithmetic is fp32; results are rounded to the
 * destination dtype by Machine::write.
 */
#include "runtime/Exec.h"

#include "neff/ComputeCost.h"

#include "runtime/AluOps.h"
#include "support/Error.h"

#include <cmath>

namespace nhc::rt {

using neff::AluOp;
using neff::DType;
using neff::Engine;
using neff::MemSpace;

namespace {

void require_alu(AluOp op, const Where &w, const char *field) {
    if (!alu_supported(op)) {
        user_error("NHC_ERT012", w.str(), " uses ", field, "=", neff::alu_op_name(op),
                   ": bitvec operators are not implemented in the simulator yet");
    }
}

void require_not_both_psum(const neff::AccessPattern &a, const neff::AccessPattern &b,
                           const Where &w, const char *fa, const char *fb) {
    // nc.md:L226: two-input instructions may not take both inputs from PSUM [ISA].
    if (a.space == MemSpace::PSUM && b.space == MemSpace::PSUM) {
        user_error("NHC_ERT009", w.str(), " reads both ", fa, " and ", fb,
                   " from psum: at most one input may be in psum");
    }
}

} // namespace

ExecInfo exec_activation(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    check_compute_operand(m, i.src, w, "src");
    require_same_shape(i.dst, i.src, w, "dst", "src");
    int P = i.src.num_partitions;
    // nc.md:L173: bias is a [P,1] operand on v2; v3 also allows a scalar.
    if (!i.s1.is_ap && i.s1.imm != 0 && m.target().version == target::CoreVersion::V2) {
        user_error("NHC_ERT018", w.str(), " has an immediate bias ", i.s1.imm, ": ",
                   m.target().name, " takes the bias from a [P, 1] operand");
    }
    std::vector<float> scale = scalar_values(m, i.s0, P, w, "scale");
    std::vector<float> bias = scalar_values(m, i.s1, P, w, "bias");
    if (i.accum.present()) {
        check_compute_operand(m, i.accum, w, "accum");
        if (i.accum.num_partitions != P || i.accum.free_count() != 1) {
            user_error("NHC_ERT008", w.str(), " accumulates into [", i.accum.num_partitions, " x ",
                       i.accum.free_count(), "]: expected [", P, " x 1]");
        }
    }
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        return info;
    }
    Tile x = m.read(i.src);
    Tile acc;
    acc.partitions = P;
    acc.free = 1;
    acc.v.assign(size_t(P), 0.0f);
    for (int p = 0; p < P; p++) {
        float *row = x.row(p);
        for (int64_t f = 0; f < x.free; f++) {
            float in = row[f] * scale[p]; // two fp32 roundings: multiply, then add
            in = in + bias[p];
            row[f] = activation(i.func, in, i.value);
            acc.v[p] += row[f];
        }
    }
    m.write(i.dst, x);
    if (i.accum.present()) {
        m.write(i.accum, acc);
    }
    return info;
}

ExecInfo exec_tensor_tensor(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    check_compute_operand(m, i.src, w, "src");
    check_compute_operand(m, i.src1, w, "src1");
    require_not_both_psum(i.src, i.src1, w, "src", "src1");
    require_same_shape(i.dst, i.src, w, "dst", "src");
    require_same_shape(i.dst, i.src1, w, "dst", "src1");
    require_alu(i.alu0, w, "op");
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        return info;
    }
    Tile a = m.read(i.src), b = m.read(i.src1);
    for (size_t k = 0; k < a.v.size(); k++) {
        a.v[k] = alu(i.alu0, a.v[k], b.v[k]);
    }
    m.write(i.dst, a);
    return info;
}

ExecInfo exec_tensor_scalar(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    check_compute_operand(m, i.src, w, "src");
    require_same_shape(i.dst, i.src, w, "dst", "src");
    require_alu(i.alu0, w, "op0");
    require_alu(i.alu1, w, "op1");
    if (w.engine == Engine::ACT) {
        // nc.md:L302: tensor_scalar on ACT supports only mult and add.
        for (AluOp op : {i.alu0, i.alu1}) {
            if (op != AluOp::Mult && op != AluOp::Add && op != AluOp::Bypass) {
                user_error("NHC_ERT018", w.str(), " uses ", neff::alu_op_name(op),
                           ": tensor_scalar on act supports only mult and add");
            }
        }
    }
    int P = i.src.num_partitions;
    std::vector<float> s0 = scalar_values(m, i.s0, P, w, "s0");
    std::vector<float> s1 = scalar_values(m, i.s1, P, w, "s1");
    bool r0 = i.has(neff::kFlagReverse0), r1 = i.has(neff::kFlagReverse1);
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        return info;
    }
    Tile x = m.read(i.src);
    for (int p = 0; p < P; p++) {
        float *row = x.row(p);
        for (int64_t f = 0; f < x.free; f++) {
            float v = r0 ? alu(i.alu0, s0[p], row[f]) : alu(i.alu0, row[f], s0[p]);
            if (i.alu1 != AluOp::Bypass) {
                v = r1 ? alu(i.alu1, s1[p], v) : alu(i.alu1, v, s1[p]);
            }
            row[f] = v;
        }
    }
    m.write(i.dst, x);
    return info;
}

ExecInfo exec_tensor_reduce(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    check_compute_operand(m, i.src, w, "src");
    require_reduce_op(i, w);
    int nd = int(i.src.dims.size());
    int axes = i.axes == 0 ? nd : i.axes;
    if (axes < 1 || axes > nd) {
        user_error("NHC_ERT008", w.str(), " reduces ", i.axes, " trailing axes of a source with ",
                   nd, " free dimensions");
    }
    int64_t inner = 1;
    for (int k = nd - axes; k < nd; k++) {
        inner *= i.src.dims[k].num;
    }
    int64_t outer = i.src.free_count() / inner;
    if (i.dst.num_partitions != i.src.num_partitions || i.dst.free_count() != outer) {
        user_error("NHC_ERT008", w.str(), " writes dst [", i.dst.num_partitions, " x ",
                   i.dst.free_count(), "]: reducing [", i.src.num_partitions, " x ",
                   i.src.free_count(), "] over ", inner, " elements gives [", i.src.num_partitions,
                   " x ", outer, "]");
    }
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        return info;
    }
    Tile x = m.read(i.src), out;
    out.partitions = x.partitions;
    out.free = outer;
    out.v.resize(size_t(x.partitions * outer));
    for (int p = 0; p < x.partitions; p++) {
        for (int64_t o = 0; o < outer; o++) {
            const float *in = x.row(p) + o * inner;
            float acc = in[0]; // sequential fp32 accumulation
            for (int64_t k = 1; k < inner; k++) {
                acc = alu(i.alu0, acc, in[k]);
            }
            if (i.alu0 == AluOp::AbsMax) {
                acc = std::fabs(acc);
            }
            out.row(p)[o] = i.has(neff::kFlagNegate) ? -acc : acc;
        }
    }
    m.write(i.dst, out);
    return info;
}

ExecInfo exec_select(Machine &m, const neff::Instr &i, const Where &w) {
    check_compute_operand(m, i.dst, w, "dst");
    check_compute_operand(m, i.pred, w, "pred");
    check_compute_operand(m, i.src, w, "on_true");
    check_compute_operand(m, i.src1, w, "on_false");
    require_not_both_psum(i.pred, i.src, w, "pred", "on_true"); // nc.md:L310
    require_same_shape(i.dst, i.pred, w, "dst", "pred");
    require_same_shape(i.dst, i.src, w, "dst", "on_true");
    require_same_shape(i.dst, i.src1, w, "dst", "on_false");
    ExecInfo info;
    info.cost = neff::compute_query(m.target(), w.engine, i);
    if (!m.functional()) {
        return info;
    }
    Tile pr = m.read(i.pred), a = m.read(i.src), b = m.read(i.src1);
    for (size_t k = 0; k < a.v.size(); k++) {
        a.v[k] = pr.v[k] != 0 ? a.v[k] : b.v[k];
    }
    m.write(i.dst, a);
    return info;
}

} // namespace nhc::rt
