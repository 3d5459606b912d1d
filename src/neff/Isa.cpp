#include "neff/Isa.h"

#include "support/Error.h"

#include <cstring>

namespace nhc::neff {

namespace {

template <typename E, size_t N>
bool parse_name(const char *const (&names)[N], const std::string &s, E &out) {
    for (size_t i = 0; i < N; i++) {
        if (s == names[i]) {
            out = static_cast<E>(i);
            return true;
        }
    }
    return false;
}

const char *const kAluNames[kNumAluOps] = {
    "bypass",      "add",        "subtract",    "mult",       "divide",
    "max",         "min",        "pow",         "mod",        "abs_max",
    "abs_min",     "is_equal",   "not_equal",   "is_gt",      "is_ge",
    "is_lt",       "is_le",      "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"};

const char *const kActNames[kNumActFuncs] = {"copy",
                                             "square",
                                             "sigmoid",
                                             "relu",
                                             "prelu",
                                             "gelu",
                                             "gelu_dx",
                                             "gelu_apprx_tanh",
                                             "gelu_apprx_sigmoid",
                                             "gelu_apprx_sigmoid_dx",
                                             "silu",
                                             "silu_dx",
                                             "tanh",
                                             "softplus",
                                             "mish",
                                             "erf",
                                             "erf_dx",
                                             "exp",
                                             "sign",
                                             "abs",
                                             "log",
                                             "sin",
                                             "arctan",
                                             "sqrt",
                                             "rsqrt",
                                             "reciprocal"};

const char *const kEngineNames[kNumEngines] = {"pe", "act", "dve", "pool", "sp"};

const char *const kVarKindNames[4] = {"input", "output", "weight", "scratch"};

using FK = FieldKind;
using E = Engine;

const FieldSpec kDst{"dst", FK::Ap, Slot::Dst, false};
const FieldSpec kSrc{"src", FK::Ap, Slot::Src, false};

/** The schema table: field order here is the order of the text form and the binary encoding. */
const std::vector<OpSchema> &schemas() {
    static const std::vector<OpSchema> table = {
        {Opcode::Nop, "nop", {}, {E::PE, E::ACT, E::DVE, E::POOL, E::SP}},
        {Opcode::Dma,
         "dma",
         {{"queue", FK::Int, Slot::Queue, false},
          kDst,
          kSrc,
          {"index", FK::Ap, Slot::Src1, true}}, // indirect (software DGE): src row per dst row
         {E::SP, E::ACT, E::POOL}},
        {Opcode::Matmul,
         "matmul",
         {kDst,
          {"stationary", FK::Ap, Slot::Src, false},
          {"moving", FK::Ap, Slot::Src1, false},
          {"accumulate", FK::Flag, Slot::FlagAccumulate, true}},
         {E::PE}},
        {Opcode::Transpose, "transpose", {kDst, kSrc}, {E::PE}},
        {Opcode::Activation,
         "activation",
         {kDst,
          kSrc,
          {"func", FK::Func, Slot::Func, false},
          {"scale", FK::Scalar, Slot::S0, true},
          {"bias", FK::Scalar, Slot::S1, true},
          {"alpha", FK::Float, Slot::Value, true},
          {"accum", FK::Ap, Slot::Accum, true}},
         {E::ACT}},
        {Opcode::TensorTensor,
         "tensor_tensor",
         {kDst, kSrc, {"src1", FK::Ap, Slot::Src1, false}, {"op", FK::Alu, Slot::Alu0, false}},
         {E::DVE, E::POOL}},
        {Opcode::TensorScalar,
         "tensor_scalar",
         {kDst,
          kSrc,
          {"op0", FK::Alu, Slot::Alu0, false},
          {"s0", FK::Scalar, Slot::S0, false},
          {"op1", FK::Alu, Slot::Alu1, true},
          {"s1", FK::Scalar, Slot::S1, true},
          {"reverse0", FK::Flag, Slot::FlagReverse0, true},
          {"reverse1", FK::Flag, Slot::FlagReverse1, true}},
         {E::DVE, E::ACT, E::POOL}},
        {Opcode::TensorReduce,
         "tensor_reduce",
         {kDst,
          kSrc,
          {"op", FK::Alu, Slot::Alu0, false},
          {"axes", FK::Int, Slot::Axes, true},
          {"negate", FK::Flag, Slot::FlagNegate, true}},
         {E::DVE}},
        {Opcode::TensorCopy, "tensor_copy", {kDst, kSrc}, {E::DVE, E::ACT, E::POOL}},
        {Opcode::Memset,
         "memset",
         {kDst, {"value", FK::Float, Slot::Value, false}},
         {E::DVE, E::POOL}},
        {Opcode::Iota, "iota", {kDst, {"pattern", FK::Affine, Slot::Pattern, false}}, {E::POOL}},
        {Opcode::AffineSelect,
         "affine_select",
         {kDst,
          kSrc,
          {"pattern", FK::Affine, Slot::Pattern, false},
          {"cmp", FK::Alu, Slot::Alu0, false},
          {"fill", FK::Float, Slot::Value, false}},
         {E::POOL}},
        {Opcode::Select,
         "select",
         {kDst,
          {"pred", FK::Ap, Slot::Pred, false},
          {"on_true", FK::Ap, Slot::Src, false},
          {"on_false", FK::Ap, Slot::Src1, false}},
         {E::DVE}},
        {Opcode::PartitionReduce,
         "partition_reduce",
         {kDst, kSrc, {"op", FK::Alu, Slot::Alu0, false}},
         {E::POOL}},
    };
    return table;
}

} // namespace

bool parse_engine(const std::string &s, Engine &out) {
    return parse_name(kEngineNames, s, out);
}

const char *mem_space_name(MemSpace m) {
    switch (m) {
    case MemSpace::SBUF:
        return "sbuf";
    case MemSpace::PSUM:
        return "psum";
    case MemSpace::HBM:
        return "hbm";
    default:
        return "none";
    }
}

int64_t AccessPattern::free_count() const {
    // Saturating: a NEFF from a stranger may hold any counts (found by tests/fuzz's NEFF target).
    int64_t n = 1;
    for (const auto &d : dims) {
        if (__builtin_mul_overflow(n, d.num, &n)) {
            return INT64_MAX;
        }
    }
    return n;
}

bool AccessPattern::operator==(const AccessPattern &o) const {
    return space == o.space && dtype == o.dtype && var == o.var &&
           start_partition == o.start_partition && num_partitions == o.num_partitions &&
           partition_step == o.partition_step && offset == o.offset && dims == o.dims;
}

bool Scalar::operator==(const Scalar &o) const {
    if (is_ap != o.is_ap) {
        return false;
    }
    return is_ap ? ap == o.ap : std::memcmp(&imm, &o.imm, sizeof imm) == 0;
}

bool Instr::operator==(const Instr &o) const {
    return op == o.op && dst == o.dst && src == o.src && src1 == o.src1 && pred == o.pred &&
           accum == o.accum && s0 == o.s0 && s1 == o.s1 && alu0 == o.alu0 && alu1 == o.alu1 &&
           func == o.func && std::memcmp(&value, &o.value, sizeof value) == 0 &&
           pattern == o.pattern && queue == o.queue && axes == o.axes && flags == o.flags &&
           waits == o.waits && signal == o.signal && name == o.name;
}

const char *alu_op_name(AluOp op) {
    return kAluNames[static_cast<int>(op)];
}
bool parse_alu_op(const std::string &s, AluOp &out) {
    return parse_name(kAluNames, s, out);
}
const char *act_func_name(ActFunc f) {
    return kActNames[static_cast<int>(f)];
}
bool parse_act_func(const std::string &s, ActFunc &out) {
    return parse_name(kActNames, s, out);
}
const char *var_kind_name(VarKind k) {
    return kVarKindNames[static_cast<int>(k)];
}
bool parse_var_kind(const std::string &s, VarKind &out) {
    return parse_name(kVarKindNames, s, out);
}

const OpSchema &opcode_schema(Opcode op) {
    const auto &table = schemas();
    int i = static_cast<int>(op);
    nhc_assert(i >= 0 && i < int(table.size()) && table[i].op == op, "schema table out of order");
    return table[i];
}

const char *opcode_name(Opcode op) {
    return opcode_schema(op).name;
}

bool parse_opcode(const std::string &s, Opcode &out) {
    for (const auto &sc : schemas()) {
        if (s == sc.name) {
            out = sc.op;
            return true;
        }
    }
    return false;
}

bool engine_can_run(Opcode op, Engine e) {
    for (Engine x : opcode_schema(op).engines) {
        if (x == e) {
            return true;
        }
    }
    return false;
}

AccessPattern &slot_ap(Instr &i, Slot s) {
    switch (s) {
    case Slot::Dst:
        return i.dst;
    case Slot::Src:
        return i.src;
    case Slot::Src1:
        return i.src1;
    case Slot::Pred:
        return i.pred;
    case Slot::Accum:
        return i.accum;
    default:
        nhc_assert(false, "slot is not an access pattern");
    }
    return i.dst;
}
const AccessPattern &slot_ap(const Instr &i, Slot s) {
    return slot_ap(const_cast<Instr &>(i), s);
}

Scalar &slot_scalar(Instr &i, Slot s) {
    nhc_assert(s == Slot::S0 || s == Slot::S1, "slot is not a scalar");
    return s == Slot::S0 ? i.s0 : i.s1;
}
const Scalar &slot_scalar(const Instr &i, Slot s) {
    return slot_scalar(const_cast<Instr &>(i), s);
}

AluOp &slot_alu(Instr &i, Slot s) {
    nhc_assert(s == Slot::Alu0 || s == Slot::Alu1, "slot is not an alu op");
    return s == Slot::Alu0 ? i.alu0 : i.alu1;
}
AluOp slot_alu(const Instr &i, Slot s) {
    return slot_alu(const_cast<Instr &>(i), s);
}

int32_t &slot_int(Instr &i, Slot s) {
    nhc_assert(s == Slot::Queue || s == Slot::Axes, "slot is not an integer");
    return s == Slot::Queue ? i.queue : i.axes;
}
int32_t slot_int(const Instr &i, Slot s) {
    return slot_int(const_cast<Instr &>(i), s);
}

uint8_t slot_flag_bit(Slot s) {
    switch (s) {
    case Slot::FlagAccumulate:
        return kFlagAccumulate;
    case Slot::FlagNegate:
        return kFlagNegate;
    case Slot::FlagReverse0:
        return kFlagReverse0;
    case Slot::FlagReverse1:
        return kFlagReverse1;
    default:
        nhc_assert(false, "slot is not a flag");
    }
    return 0;
}

ByteView Variable::bytes() const {
    nhc_assert(!make_bytes, "the bytes of weight '" << name << "' are made as read: read_bytes");
    return {data.get(), data ? data_size : 0};
}

void Variable::read_bytes(size_t offset, size_t size, uint8_t *dst) const {
    nhc_assert(offset + size <= data_size && has_bytes(),
               "bytes " << offset << "+" << size << " of weight '" << name << "' (" << data_size
                        << " bytes)");
    if (make_bytes)
        make_bytes(offset, size, dst);
    else if (size > 0)
        std::memcpy(dst, data.get() + offset, size);
}

void Variable::set_bytes(std::vector<uint8_t> b) {
    auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(b));
    share_bytes(*owned, owned);
}

int64_t Variable::num_elements() const {
    int64_t n = 1;
    for (int64_t d : shape) {
        n *= d;
    }
    return n;
}

int Program::var_index(const std::string &n) const {
    for (size_t i = 0; i < vars.size(); i++) {
        if (vars[i].name == n) {
            return int(i);
        }
    }
    return -1;
}

void Program::layout_hbm() {
    int64_t off = 0;
    for (auto &v : vars) {
        v.hbm_offset = off;
        off += (v.size_bytes() + kHbmAlignment - 1) / kHbmAlignment * kHbmAlignment;
    }
}

int64_t Program::hbm_size() const {
    int64_t end = 0;
    for (const auto &v : vars) {
        end = std::max(end, v.hbm_offset + v.size_bytes());
    }
    return end;
}

} // namespace nhc::neff
