#ifndef NHC_NEFF_ISA_H
#define NHC_NEFF_ISA_H

/** \file
 * The instruction set of neuron-halide-cc's NEFFs, modelled on the NKI ISA semantics
 * (neuroncore.md §3). An instruction lives in the stream of one engine, may wait on semaphores
 * and may signal one when it completes. Operands are access patterns (AccessPattern) on SBUF, PSUM
 * or an HBM variable.
 *
 * Every opcode has a schema (the list of its fields, see opcode_schema()), which drives the text
 * assembler, the binary encoding and the checks, so that adding an instruction means adding one
 * row. Enum values are part of the binary encoding: append only.
 */

#include "neff/DType.h"
#include "support/ByteView.h"
#include "target/Target.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nhc::neff {

using Engine = target::EngineKind;
constexpr int kNumEngines = target::kNumEngines;
bool parse_engine(const std::string &s, Engine &out);

enum class MemSpace : uint8_t { None = 0, SBUF = 1, PSUM = 2, HBM = 3 };
const char *mem_space_name(MemSpace m);

/** One free dimension: `num` elements, `step` apart (elements on chip, bytes in HBM). */
struct Dim {
    int64_t step = 0;
    int64_t num = 1;
    bool operator==(const Dim &o) const { return step == o.step && num == o.num; }
};

/** An operand. Its logical shape is [num_partitions, dims[0].num, ..., dims[k].num].
 *  - SBUF/PSUM: partitions [start_partition, start_partition + num_partitions); `offset` is the
 *    byte address inside each partition; dim steps are in elements (as in NKI, nc.md:L231).
 *  - HBM: variable `var`, `offset` bytes into it; row p starts at offset + p * partition_step;
 *    dim steps are in bytes (DMA descriptors are byte based, neuron-compiler.md §4.2).
 *  At most 4 free dims (nc.md:L231). */
struct AccessPattern {
    MemSpace space = MemSpace::None;
    DType dtype = DType::F32;
    int32_t var = -1;
    int32_t start_partition = 0;
    int32_t num_partitions = 0;
    int64_t partition_step = 0;
    int64_t offset = 0;
    std::vector<Dim> dims;

    bool present() const { return space != MemSpace::None; }
    /** Elements per partition (product of the free dims). */
    int64_t free_count() const;
    bool operator==(const AccessPattern &o) const;
};
constexpr int kMaxFreeDims = 4;

/** ALU operators (nc.md §3.3). */
enum class AluOp : uint8_t {
    Bypass,
    Add,
    Subtract,
    Mult,
    Divide,
    Max,
    Min,
    Pow,
    Mod,
    AbsMax,
    AbsMin,
    IsEqual,
    NotEqual,
    IsGt,
    IsGe,
    IsLt,
    IsLe,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    ShiftLeft,
    ShiftRight
};
constexpr int kNumAluOps = 25;
const char *alu_op_name(AluOp op);
bool parse_alu_op(const std::string &s, AluOp &out);

/** ScalarE activation functions (nc.md §3.4). */
enum class ActFunc : uint8_t {
    Copy,
    Square,
    Sigmoid,
    Relu,
    Prelu,
    Gelu,
    GeluDx,
    GeluApprxTanh,
    GeluApprxSigmoid,
    GeluApprxSigmoidDx,
    Silu,
    SiluDx,
    Tanh,
    Softplus,
    Mish,
    Erf,
    ErfDx,
    Exp,
    Sign,
    Abs,
    Log,
    Sin,
    Arctan,
    Sqrt,
    Rsqrt,
    Reciprocal
};
constexpr int kNumActFuncs = 26;
const char *act_func_name(ActFunc f);
bool parse_act_func(const std::string &s, ActFunc &out);

/** An fp32 immediate or a per-partition [P, 1] operand. */
struct Scalar {
    bool is_ap = false;
    float imm = 0;
    AccessPattern ap;
    bool operator==(const Scalar &o) const;
};

/** value(p, i0..ik) = base + partition_mult * p + sum_j steps[j] * i_j (iota, affine_select). */
struct Affine {
    int64_t base = 0;
    int64_t partition_mult = 0;
    std::vector<int64_t> steps;
    bool operator==(const Affine &o) const {
        return base == o.base && partition_mult == o.partition_mult && steps == o.steps;
    }
};

struct SemWait {
    uint32_t sem = 0;
    uint32_t value = 0;
    bool operator==(const SemWait &o) const { return sem == o.sem && value == o.value; }
};

enum class Opcode : uint8_t {
    Nop,
    Dma,
    Matmul,
    Transpose,
    Activation,
    TensorTensor,
    TensorScalar,
    TensorReduce,
    TensorCopy,
    Memset,
    Iota,
    AffineSelect,
    Select,
    PartitionReduce
};
constexpr int kNumOpcodes = 14;
const char *opcode_name(Opcode op);
bool parse_opcode(const std::string &s, Opcode &out);

enum InstrFlag : uint8_t {
    kFlagAccumulate = 1, ///< matmul: add into PSUM instead of overwriting
    kFlagNegate = 2,     ///< tensor_reduce: negate the result
    kFlagReverse0 = 4,   ///< tensor_scalar: s0 op0 data instead of data op0 s0
    kFlagReverse1 = 8,   ///< tensor_scalar: s1 op1 x instead of x op1 s1
};

struct Instr {
    Opcode op = Opcode::Nop;
    AccessPattern dst, src, src1, pred, accum;
    Scalar s0, s1; ///< tensor_scalar operands; activation scale (s0) and bias (s1)
    AluOp alu0 = AluOp::Bypass, alu1 = AluOp::Bypass;
    ActFunc func = ActFunc::Copy;
    float value = 0; ///< memset value, affine_select fill, prelu alpha
    Affine pattern;
    int32_t queue = 0; ///< DMA queue
    int32_t axes = 0;  ///< tensor_reduce: trailing free axes reduced (0 = all)
    uint8_t flags = 0;
    std::vector<SemWait> waits;
    int32_t signal = -1; ///< semaphore incremented at completion, -1 = none
    std::string name;    ///< source name (ONNX node) for traces and messages

    bool has(InstrFlag f) const { return (flags & f) != 0; }
    bool operator==(const Instr &o) const;
};

/** Field kinds and slots of the schema. */
enum class FieldKind : uint8_t { Ap, Scalar, Alu, Func, Float, Affine, Int, Flag };
enum class Slot : uint8_t {
    Dst,
    Src,
    Src1,
    Pred,
    Accum,
    S0,
    S1,
    Alu0,
    Alu1,
    Func,
    Value,
    Pattern,
    Queue,
    Axes,
    FlagAccumulate,
    FlagNegate,
    FlagReverse0,
    FlagReverse1
};
struct FieldSpec {
    const char *key;
    FieldKind kind;
    Slot slot;
    bool optional;
};
struct OpSchema {
    Opcode op;
    const char *name;
    std::vector<FieldSpec> fields;
    std::vector<Engine> engines; ///< engines that can execute it
};
const OpSchema &opcode_schema(Opcode op);
bool engine_can_run(Opcode op, Engine e);

/** Slot accessors used by the schema-driven code. */
AccessPattern &slot_ap(Instr &i, Slot s);
const AccessPattern &slot_ap(const Instr &i, Slot s);
Scalar &slot_scalar(Instr &i, Slot s);
const Scalar &slot_scalar(const Instr &i, Slot s);
AluOp &slot_alu(Instr &i, Slot s);
AluOp slot_alu(const Instr &i, Slot s);
int32_t &slot_int(Instr &i, Slot s);
int32_t slot_int(const Instr &i, Slot s);
uint8_t slot_flag_bit(Slot s);

enum class VarKind : uint8_t { Input = 0, Output = 1, Weight = 2, Scratch = 3 };
const char *var_kind_name(VarKind k);
bool parse_var_kind(const std::string &s, VarKind &out);

/** A tensor in HBM. Weights carry their bytes. */
struct Variable {
    std::string name;
    VarKind kind = VarKind::Scratch;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    int64_t hbm_offset = 0;
    /** An ONNX bool tensor, held as u8 0 or 1 (the engines have no bool type): the runtime takes
     *  and gives such an input or output as bool, one byte per element as ONNX and NumPy store
     *  it. Recorded in def.json as "element_type": "bool". */
    bool holds_bool = false;
    /** Weights only: their bytes, immutable and shared, and their size. The compiler points
     *  them at the graph's constants (a shared_ptr aliasing the HostTensor, whose bytes may in
     *  turn be the mapped model file's), so a model's weights are not copied between the front
     *  end and the NEFF: one copy fewer of BERT-base's 438 MB. */
    std::shared_ptr<const uint8_t> data;
    size_t data_size = 0;
    /** Writes bytes [offset, offset + size) of a weight to `dst`; safe on several threads. */
    using ByteMaker = std::function<void(size_t offset, size_t size, uint8_t *dst)>;
    /** Weights only, instead of `data`: bytes made as they are read, for a weight the compiler
     *  converts or lays out anew (graph/AutoCast, TileWeights) without a copy of it, so that the
     *  NEFF writer makes each piece as it writes it and no copy of the whole model is held. */
    ByteMaker make_bytes;

    /** The weight's bytes (empty if it has none, as when read for timing only); not for a weight
     *  whose bytes are made as read (read_bytes takes both). */
    ByteView bytes() const;
    /** Whether the weight has bytes, held or made as read. */
    bool has_bytes() const { return data != nullptr || make_bytes != nullptr; }
    /** Bytes [offset, offset + size) of the weight's data_size, held or made, into `dst`. */
    void read_bytes(size_t offset, size_t size, uint8_t *dst) const;
    /** Bytes kept alive by `keeper`. */
    void share_bytes(ByteView b, std::shared_ptr<const void> keeper) {
        data = std::shared_ptr<const uint8_t>(std::move(keeper), b.data());
        data_size = b.size();
        make_bytes = nullptr;
    }
    /** `size` bytes that `maker` makes as they are read. */
    void make_bytes_when_read(size_t size, ByteMaker maker) {
        data.reset();
        data_size = size;
        make_bytes = std::move(maker);
    }
    void set_bytes(std::vector<uint8_t> b);
    int64_t num_elements() const;
    int64_t size_bytes() const { return num_elements() * dtype_size(dtype); }
};

/** A whole program for one NeuronCore: what a NEFF holds. */
struct Program {
    std::string target = "trn1";
    std::string name = "model";
    std::vector<Variable> vars;
    std::array<std::vector<Instr>, kNumEngines> streams;
    std::map<std::string, std::string> options; ///< compiler options recorded in info.json
    /** False when read without the weights' bytes (ReadOptions::weights): timing only. */
    bool weights_loaded = true;

    /** Index of the variable with this name, or -1. */
    int var_index(const std::string &name) const;
    /** Assigns HBM offsets in variable order, each aligned to kHbmAlignment. */
    void layout_hbm();
    int64_t hbm_size() const;
    std::vector<Instr> &stream(Engine e) { return streams[static_cast<int>(e)]; }
    const std::vector<Instr> &stream(Engine e) const { return streams[static_cast<int>(e)]; }
};
/** Alignment of variables in our HBM layout (a NEFF format choice, not a hardware number). */
constexpr int64_t kHbmAlignment = 64;

} // namespace nhc::neff

#endif
