// Elementwise, reduction and memset nests (see SelectInstructions.h): an expression is lowered
// bottom-up, one engine instruction per operation, through dense fp32 SBUF temporaries; the last
// instruction writes the stage's own tile. Engines compute in fp32 and round on write, so casts
// between floating types need no instruction of their own.

#include "neff/SelectorState.h"

#include "algorithms/Algorithm.h"

#include "support/Error.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace nhc::codegen {

using namespace Halide::Internal;
using neff::AccessPattern;
using neff::AluOp;
using neff::Engine;
using neff::Instr;
using neff::Opcode;

namespace {

struct Operand {
    bool is_imm = false;
    float imm = 0;
    AccessPattern ap;
    bool per_partition = false; ///< constant along every free loop: usable as a [P,1] scalar
};

class ComputeSelector {
public:
    ComputeSelector(Selector &s, const Nest &n, IterSpace it, AccessPattern dst)
        : s_(s), n_(n), it_(std::move(it)), dst_(std::move(dst)) {}

    /** Lowers `e` and writes it into the destination tile. */
    void store(const Halide::Expr &e) {
        Operand r = lower(e, &dst_);
        if (r.ap.present() && r.ap == dst_ && !r.is_imm)
            return; // the last operation already wrote the destination
        if (r.is_imm) {
            Instr i;
            i.op = Opcode::Memset;
            i.dst = dst_;
            i.value = r.imm;
            emit_vector(i);
            return;
        }
        copy(r.ap, dst_);
    }

    /** `e` as a tile over the whole iteration space (materialized if it is an immediate). */
    AccessPattern tile(const Halide::Expr &e) {
        Operand o = lower(e, nullptr);
        if (!o.is_imm)
            return o.ap;
        AccessPattern t = temp();
        Instr i;
        i.op = Opcode::Memset;
        i.dst = t;
        i.value = o.imm;
        emit_vector(i);
        return t;
    }

private:
    AccessPattern temp() {
        AccessPattern t = s_.temp_tile(it_, n_);
        t.start_partition = dst_.start_partition; // engines keep data on its partitions
        return t;
    }

    Operand load(const Load *l) {
        const Buffer &b = s_.buffer(l->name);
        if (b.space == neff::MemSpace::HBM)
            s_.fail("NHC_EGEN011", n_,
                    "'" + l->name +
                        "' is read from HBM by a compute "
                        "instruction; stage it in SBUF first");
        Affine a = s_.affine(l->name, l->index, n_);
        Operand o;
        o.ap = s_.onchip_ap(b, a, it_, n_, "operand");
        o.per_partition = true;
        for (int j : it_.free())
            o.per_partition = o.per_partition && a.strides[j] == 0;
        return o;
    }

    static neff::Scalar scalar_of(const Operand &o) {
        neff::Scalar sc;
        if (o.is_imm) {
            sc.imm = o.imm;
            return sc;
        }
        sc.is_ap = true;
        sc.ap = o.ap;
        sc.ap.dims = {{1, 1}};
        return sc;
    }

    Operand result(const AccessPattern *into) {
        Operand o;
        o.ap = into ? *into : temp();
        return o;
    }

    // Single-input work that ACT can do as well as DVE goes to whichever of the two has less
    // queued (ACT computes func(in * scale + bias), neuroncore.md L172-175): copies, products
    // with a scalar (scale), sums with a [P,1] operand (bias; trn1 takes no immediate bias) and
    // squares. Only between floating types: ACT reads through fp32 (L179).
    bool on_act(const AccessPattern &src, const AccessPattern &dst) const {
        return neff::dtype_is_float(src.dtype) && neff::dtype_is_float(dst.dtype) &&
               prefers_act(dst.free_count());
    }

    /** Whether work of `n` elements that ACT can do goes to ACT: the engine the schedule names
     *  for the stage (hint engine), else the lighter of ACT and DVE. */
    bool prefers_act(int64_t n) const {
        if (std::optional<Engine> named = s_.named_engine(n_.dst))
            return *named == Engine::ACT;
        return s_.lighter_engine(n) == Engine::ACT;
    }

    /** Emits `i`, an instruction DVE can run, on DVE or the engine the schedule names. */
    void emit_vector(const Instr &i) { s_.emit(s_.vector_engine(n_.dst, i), i); }

    static neff::Scalar one() {
        neff::Scalar sc;
        sc.imm = 1.0f;
        return sc;
    }

    void emit_act(neff::ActFunc f, const AccessPattern &src, const AccessPattern &dst,
                  const neff::Scalar &scale, const neff::Scalar &bias) {
        Instr i;
        i.op = Opcode::Activation;
        i.func = f;
        i.src = src;
        i.dst = dst;
        i.s0 = scale;
        i.s1 = bias;
        s_.emit(Engine::ACT, i);
    }

    /** `x op y` on ACT when it has that form and ACT is the lighter engine, else nullopt. A
     *  [P,1] subtrahend becomes a bias through a [P,1] negation (64 cycles against a full row,
     *  neuroncore.md L160). */
    std::optional<Operand> binary_on_act(AluOp op, const Operand &x, const Operand &y,
                                         bool same_operand, const AccessPattern *into) {
        bool y_scale = op == AluOp::Mult && (y.is_imm || y.per_partition);
        bool y_bias = op == AluOp::Add && !y.is_imm && y.per_partition;
        bool y_neg_bias = op == AluOp::Subtract && !y.is_imm && y.per_partition;
        bool square = op == AluOp::Mult && same_operand;
        if (x.is_imm || !(y_scale || y_bias || y_neg_bias || square))
            return std::nullopt;
        Operand r = result(into);
        if (!on_act(x.ap, r.ap))
            return std::nullopt;
        if (square) {
            emit_act(neff::ActFunc::Square, x.ap, r.ap, one(), {});
        } else if (y_neg_bias) {
            emit_act(neff::ActFunc::Copy, x.ap, r.ap, one(), scalar_of(negated(y)));
        } else {
            emit_act(neff::ActFunc::Copy, x.ap, r.ap, y_scale ? scalar_of(y) : one(),
                     y_bias ? scalar_of(y) : neff::Scalar{});
        }
        return r;
    }

    /** -y for a [P,1] operand, in a [P,1] temporary (DVE). */
    Operand negated(const Operand &y) {
        IterSpace column; // the partition loop alone (none: one partition)
        if (it_.p >= 0)
            column = IterSpace{{it_.loops[static_cast<size_t>(it_.p)]}, 0};
        Operand r;
        r.ap = s_.temp_tile(column, n_);
        r.ap.start_partition = dst_.start_partition;
        r.per_partition = true;
        Instr i;
        i.op = Opcode::TensorScalar;
        i.src = scalar_of(y).ap;
        i.dst = r.ap;
        i.alu0 = AluOp::Mult;
        i.s0.imm = -1.0f;
        emit_vector(i);
        return r;
    }

    /** max(x, 0) of a float x in one instruction, x's bias folded in: ACT's Relu (which
     *  computes func(in * scale + bias), neuroncore.md L172-175) when ACT is the lighter
     *  engine, else x = p + q (q [P,1] or an immediate) as one tensor_scalar of two ops
     *  ((p add q) max 0; one op costs the same as two, L302). A bias add and a max out of PSUM
     *  are then one pass over the tile, not two (a convolution's or a matmul's bias and ReLU).
     *  One difference: ACT's relu, as the simulator models it (runtime/AluOps.cpp), maps NaN to
     *  0, where DVE's max keeps the NaN; the reference says nothing of either.
     *  nullopt when `x` has neither form. */
    std::optional<Operand> relu(const Halide::Expr &x, const AccessPattern *into) {
        if (!x.type().is_float() || (into && !neff::dtype_is_float(into->dtype)))
            return std::nullopt;
        if (prefers_act(dst_.free_count()))
            return activation(neff::ActFunc::Relu, x, into);
        const Add *add = x.as<Add>();
        if (!add)
            return std::nullopt;
        Halide::Expr p = add->a, q = add->b;
        if (!as_load(p))
            std::swap(p, q);
        if (!as_load(p) || !(as_load(q) || is_const(q)))
            return std::nullopt;
        Operand qo = lower(q, nullptr);
        if (!qo.is_imm && !qo.per_partition)
            return std::nullopt;
        Instr i;
        i.op = Opcode::TensorScalar;
        i.src = lower(p, nullptr).ap;
        i.alu0 = AluOp::Add;
        i.s0 = scalar_of(qo);
        i.alu1 = AluOp::Max;
        i.s1.imm = 0.0f;
        Operand r = result(into);
        i.dst = r.ap;
        emit_vector(i);
        return r;
    }

    /** x * s + b in one instruction, x loaded, s an immediate or [P,1], b [P,1]: ACT's
     *  Copy(in * scale + bias) (neuroncore.md L172-175) when ACT is the lighter engine, else
     *  DVE's tensor_scalar of two ops ((x mult s) add b; one op costs the same as two, L302).
     *  A matmul's or a convolution's fp8 weight scale and its bias out of PSUM are then one
     *  pass over the tile, not two. nullopt when `a + b` has another form. */
    std::optional<Operand> scaled_plus_bias(const Halide::Expr &a, const Halide::Expr &b,
                                            const AccessPattern *into) {
        Halide::Expr product = a, addend = b;
        if (!product.as<Mul>())
            std::swap(product, addend);
        const Mul *mul = product.as<Mul>();
        if (!mul || !product.type().is_float() || !as_load(mul->a) ||
            !(as_load(mul->b) || is_const(mul->b)) || !as_load(addend))
            return std::nullopt;
        Operand s = lower(mul->b, nullptr), bias = lower(addend, nullptr);
        if (!(s.is_imm || s.per_partition) || bias.is_imm || !bias.per_partition)
            return std::nullopt;
        Operand x = lower(mul->a, nullptr);
        Operand r = result(into);
        if (on_act(x.ap, r.ap)) {
            emit_act(neff::ActFunc::Copy, x.ap, r.ap, scalar_of(s), scalar_of(bias));
            return r;
        }
        Instr i;
        i.op = Opcode::TensorScalar;
        i.src = x.ap;
        i.alu0 = AluOp::Mult;
        i.s0 = scalar_of(s);
        i.alu1 = AluOp::Add;
        i.s1 = scalar_of(bias);
        i.dst = r.ap;
        emit_vector(i);
        return r;
    }

    Operand binary(AluOp op, const Halide::Expr &a, const Halide::Expr &b,
                   const AccessPattern *into, bool commutative) {
        if (op == AluOp::Add)
            if (std::optional<Operand> r = scaled_plus_bias(a, b, into))
                return *r;
        if (op == AluOp::Max && (is_const_zero(b) || is_const_zero(a)))
            if (std::optional<Operand> r = relu(is_const_zero(b) ? a : b, into))
                return *r;
        // x * x reads one tile twice: lowered once, or the second operand's instructions would
        // compute a copy that nothing reads (a LayerNorm's centred row for its variance).
        bool same_expr = equal(a, b);
        // On ACT, Square(x - m) takes -m as its bias: one instruction, not a subtraction and
        // then a square (a LayerNorm's variance; ACT computes func(in * scale + bias),
        // neuroncore.md L172-175).
        if (same_expr && op == AluOp::Mult && a.type().is_float() && prefers_act(dst_.free_count()))
            return activation(neff::ActFunc::Square, a, into);
        Operand x = lower(a, nullptr);
        Operand y = same_expr ? x : lower(b, nullptr);
        bool same = same_expr && !x.is_imm;
        if (std::optional<Operand> r = binary_on_act(op, x, y, same, into))
            return *r;
        if (commutative)
            if (std::optional<Operand> r = binary_on_act(op, y, x, same, into))
                return *r;
        bool x_scalar = x.is_imm || x.per_partition, y_scalar = y.is_imm || y.per_partition;
        Instr i;
        if (y_scalar && !x.is_imm) {
            i.op = Opcode::TensorScalar;
            i.src = x.ap;
            i.alu0 = op;
            i.s0 = scalar_of(y);
        } else if (x_scalar && !y.is_imm) {
            i.op = Opcode::TensorScalar;
            i.src = y.ap;
            i.alu0 = op;
            i.s0 = scalar_of(x);
            if (!commutative)
                i.flags |= neff::kFlagReverse0; // s0 op tile
        } else if (x.is_imm && y.is_imm) {
            s_.fail("NHC_EGEN014", n_, "an operation on two constants was not folded");
        } else {
            i.op = Opcode::TensorTensor;
            i.src = x.ap;
            i.src1 = y.ap;
            i.alu0 = op;
        }
        Operand r = result(into);
        i.dst = r.ap;
        emit_vector(i);
        return r;
    }

    /** `a` = x * s, s an immediate or [P,1] and x loaded: a becomes x and `scale` s. */
    void fold_scale(Halide::Expr &a, neff::Scalar &scale) {
        const Mul *mul = a.as<Mul>();
        if (!mul || !as_load(mul->a) || !(as_load(mul->b) || is_const(mul->b)))
            return;
        Operand s = lower(mul->b, nullptr);
        if (s.is_imm || s.per_partition) {
            a = mul->a;
            scale = scalar_of(s);
        }
    }

    /** f(arg) on ACT, with a scale or bias folded in: f(a * s), f(a + b), f(a - b) and
     *  f(a * s + b), s an immediate or [P,1], b [P,1] (softmax's exp(x - max) is one
     *  instruction). */
    Operand activation(neff::ActFunc f, const Halide::Expr &arg, const AccessPattern *into) {
        Halide::Expr a = arg;
        neff::Scalar scale = one(), bias;
        const Mul *mul = arg.as<Mul>();
        const Add *add = arg.as<Add>();
        const Sub *sub = arg.as<Sub>();
        Halide::Expr other = mul ? mul->b : add ? add->b : sub ? sub->b : Halide::Expr();
        Halide::Expr x = mul ? mul->a : add ? add->a : sub ? sub->a : Halide::Expr();
        // Halide orders b + x * s with the load first.
        if (add && as_load(add->a) && add->b.as<Mul>())
            std::swap(x, other);
        // Only a loaded or constant operand: lowering anything else would emit instructions.
        if (other.defined() && (as_load(other) || is_const(other))) {
            Operand y = lower(other, nullptr);
            if (mul && (y.is_imm || y.per_partition)) {
                a = x;
                scale = scalar_of(y);
            } else if ((add || sub) && !y.is_imm && y.per_partition) {
                a = x;
                bias = scalar_of(sub ? negated(y) : y);
                fold_scale(a, scale); // f(a * s + b): a softmax with its input scale folded in
            }
        }
        AccessPattern src = tile(a);
        Operand r = result(into);
        emit_act(f, src, r.ap, scale, bias);
        return r;
    }

    Operand call(const Call *c, const AccessPattern *into) {
        static const std::map<std::string, neff::ActFunc> funcs = {
            {"exp_f32", neff::ActFunc::Exp},
            {"log_f32", neff::ActFunc::Log},
            {"sqrt_f32", neff::ActFunc::Sqrt},
            {"tanh_f32", neff::ActFunc::Tanh},
            {"sin_f32", neff::ActFunc::Sin},
            {"atan_f32", neff::ActFunc::Arctan},
            {"erff", neff::ActFunc::Erf},
            {"abs", neff::ActFunc::Abs},
            {alg::kGeluErfExtern, neff::ActFunc::Gelu},
            {alg::kGeluTanhExtern, neff::ActFunc::GeluApprxTanh},
            {alg::kSigmoidExtern, neff::ActFunc::Sigmoid},
            {alg::kSiluExtern, neff::ActFunc::Silu}};
        auto it = funcs.find(c->name);
        if (it != funcs.end() && c->args.size() == 1)
            return activation(it->second, c->args[0], into);
        if (c->name == alg::kAtMostZeroExtern && c->args.size() == 1)
            return binary(AluOp::IsLe, c->args[0], Halide::Expr(0), into, false);
        if (c->name == alg::kFmodExtern && c->args.size() == 2)
            return binary(AluOp::Mod, c->args[0], c->args[1], into, false);
        if (c->name == "pow_f32" && c->args.size() == 2)
            return binary(AluOp::Pow, c->args[0], c->args[1], into, false);
        s_.fail("NHC_EGEN014", n_, "the function '" + c->name + "' has no engine instruction");
    }

    /** A loop variable as a tile of its values (iota on Pool). */
    Operand iota(const Variable *v, const AccessPattern *into) {
        int j = -1;
        for (int i = 0; i < static_cast<int>(it_.loops.size()); i++)
            if (it_.loops[i].name == v->name)
                j = i;
        if (j < 0)
            s_.fail("NHC_EGEN014", n_,
                    "the value of '" + v->name + "' is not a loop of the instruction");
        Instr i;
        i.op = Opcode::Iota;
        Operand r = result(into);
        i.dst = r.ap;
        i.pattern.base = it_.loops[j].min;
        i.pattern.partition_mult = j == it_.p ? 1 : 0;
        for (int f : it_.free())
            i.pattern.steps.push_back(f == j ? 1 : 0);
        if (i.pattern.steps.empty())
            i.pattern.steps.push_back(0); // the {1, 1} dim of a single-element row
        s_.emit(Engine::POOL, i);
        return r;
    }

    /** `c` as `d cmp 0` with d an integer expression of the loops: d and the comparison. */
    static std::optional<std::pair<Halide::Expr, AluOp>> comparison_with_zero(Halide::Expr c) {
        bool negate = false;
        if (const Not *n = c.as<Not>()) {
            c = n->a;
            negate = true;
        }
        std::optional<std::pair<Halide::Expr, AluOp>> r;
        if (const Call *k = c.as<Call>(); k && k->name == alg::kAtMostZeroExtern)
            r = {{k->args[0], negate ? AluOp::IsGt : AluOp::IsLe}};
        else if (const LE *o = c.as<LE>())
            r = {{o->a - o->b, negate ? AluOp::IsGt : AluOp::IsLe}};
        else if (const LT *o = c.as<LT>())
            r = {{o->a - o->b, negate ? AluOp::IsGe : AluOp::IsLt}};
        else if (const GE *o = c.as<GE>())
            r = {{o->a - o->b, negate ? AluOp::IsLt : AluOp::IsGe}};
        else if (const GT *o = c.as<GT>())
            r = {{o->a - o->b, negate ? AluOp::IsLe : AluOp::IsGt}};
        if (r && !r->first.type().is_int())
            return std::nullopt;
        return r;
    }

    /** select(d cmp 0, x, c) with d affine in the instruction's loops and c a constant (either
     *  branch): x, with c where the comparison fails, by one affine_select on GpSimd
     *  (neuroncore.md L313: causal masks), which reads x from SBUF (GpSimd cannot read PSUM,
     *  L184): x in PSUM, or laid out otherwise than the result, is copied into the result first.
     *  A tile where the comparison holds everywhere is x (copied into the result), one where it
     *  fails everywhere a memset of c. nullopt when `sel` has not that form. */
    std::optional<Operand> affine_select(const Select *sel, const AccessPattern *into) {
        std::optional<std::pair<Halide::Expr, AluOp>> cmp = comparison_with_zero(sel->condition);
        bool fill_false = is_const(sel->false_value), fill_true = is_const(sel->true_value);
        if (!cmp || fill_false == fill_true)
            return std::nullopt;
        std::optional<Affine> d = affine_index(cmp->first, it_.loops);
        if (!d)
            return std::nullopt;
        if (fill_true) // c where the comparison holds: keep x where it fails
            cmp->second = cmp->second == AluOp::IsLe   ? AluOp::IsGt
                          : cmp->second == AluOp::IsLt ? AluOp::IsGe
                          : cmp->second == AluOp::IsGe ? AluOp::IsLt
                                                       : AluOp::IsLe;
        Operand fill = lower(fill_true ? sel->true_value : sel->false_value, nullptr);
        Operand r = result(into);
        // A tile the comparison decides whole (a causal mask's tiles below or above the
        // diagonal): x itself, or the fill, without GpSimd, which shares SBUF's port with
        // VectorE on NC-v2 (nc.md:L227).
        std::optional<bool> whole = decided_over_tile(*d, cmp->second);
        if (whole && !*whole) {
            Instr i;
            i.op = Opcode::Memset;
            i.dst = r.ap;
            i.value = fill.imm;
            emit_vector(i);
            return r;
        }
        // x computed straight into the result when it is computed at all (a tile it reads,
        // such as the scores' accumulator in PSUM, is copied in below).
        Operand xo = lower(fill_true ? sel->false_value : sel->true_value, &r.ap);
        AccessPattern x = xo.is_imm ? tile(fill_true ? sel->false_value : sel->true_value) : xo.ap;
        // A decided tile is x in the result; GpSimd selects from an SBUF tile of its shape.
        if (whole ? !(x == r.ap) : x.space != neff::MemSpace::SBUF || !same_shape(x, r.ap)) {
            copy(x, r.ap);
            x = r.ap;
        }
        if (whole)
            return r;
        Instr i;
        i.op = Opcode::AffineSelect;
        i.dst = r.ap;
        i.src = x;
        i.alu0 = cmp->second;
        i.value = fill.imm;
        i.pattern.base = d->base;
        i.pattern.partition_mult = it_.p >= 0 ? d->strides[static_cast<size_t>(it_.p)] : 0;
        for (int f : it_.free())
            i.pattern.steps.push_back(d->strides[static_cast<size_t>(f)]);
        if (i.pattern.steps.empty())
            i.pattern.steps.push_back(0); // the {1, 1} dim of a single-element row
        s_.emit(Engine::POOL, i);
        return r;
    }

    /** Whether `d cmp 0` holds at every point of the instruction's loops (true), at none
     *  (false), or at some (nullopt). */
    std::optional<bool> decided_over_tile(const Affine &d, AluOp cmp) const {
        int64_t lo = d.base, hi = d.base;
        for (size_t l = 0; l < it_.loops.size(); l++) {
            int64_t span = d.strides[l] * (it_.loops[l].extent - 1);
            (span < 0 ? lo : hi) += span;
        }
        auto holds = [&](int64_t v) {
            return cmp == AluOp::IsLe   ? v <= 0
                   : cmp == AluOp::IsLt ? v < 0
                   : cmp == AluOp::IsGe ? v >= 0
                                        : v > 0;
        };
        // d takes its extremes lo and hi at corners of the tile, and the points where d cmp 0
        // holds are a half-line: it holds everywhere when at both, nowhere when at neither.
        if (holds(lo) == holds(hi))
            return holds(lo);
        return std::nullopt;
    }

    /** Whether a and b cover the same partitions with the same free dims (extents). */
    static bool same_shape(const AccessPattern &a, const AccessPattern &b) {
        if (a.start_partition != b.start_partition || a.num_partitions != b.num_partitions ||
            a.dims.size() != b.dims.size())
            return false;
        for (size_t d = 0; d < a.dims.size(); d++)
            if (a.dims[d].num != b.dims[d].num)
                return false;
        return true;
    }

    /** src into dst: on ACT or DVE, as store() copies. */
    void copy(const AccessPattern &src, const AccessPattern &dst) {
        if (on_act(src, dst)) {
            emit_act(neff::ActFunc::Copy, src, dst, one(), {});
            return;
        }
        Instr i;
        i.op = Opcode::TensorCopy;
        i.dst = dst;
        i.src = src;
        emit_vector(i);
    }

    Operand select(const Select *sel, const AccessPattern *into) {
        if (std::optional<Operand> r = affine_select(sel, into))
            return *r;
        AccessPattern pred = tile(sel->condition), t = tile(sel->true_value),
                      f = tile(sel->false_value);
        Instr i;
        i.op = Opcode::Select;
        i.pred = pred;
        i.src = t;
        i.src1 = f;
        Operand r = result(into);
        i.dst = r.ap;
        emit_vector(i);
        return r;
    }

    Operand lower(const Halide::Expr &e, const AccessPattern *into) {
        if (const Load *l = e.as<Load>())
            return load(l);
        if (const int64_t *v = as_const_int(e))
            return imm(static_cast<float>(*v));
        if (const uint64_t *v = as_const_uint(e))
            return imm(static_cast<float>(*v));
        if (const double *v = as_const_float(e))
            return imm(static_cast<float>(*v));
        if (const Cast *c = e.as<Cast>())
            return lower(c->value, into);
        if (const Add *o = e.as<Add>())
            return binary(AluOp::Add, o->a, o->b, into, true);
        if (const Sub *o = e.as<Sub>())
            return binary(AluOp::Subtract, o->a, o->b, into, false);
        if (const Mul *o = e.as<Mul>())
            return binary(AluOp::Mult, o->a, o->b, into, true);
        if (const Div *o = e.as<Div>()) {
            if (!o->type.is_float())
                s_.fail("NHC_EGEN014", n_, "integer division has no engine instruction");
            return binary(AluOp::Divide, o->a, o->b, into, false);
        }
        if (const Max *o = e.as<Max>())
            return binary(AluOp::Max, o->a, o->b, into, true);
        if (const Min *o = e.as<Min>())
            return binary(AluOp::Min, o->a, o->b, into, true);
        if (const EQ *o = e.as<EQ>())
            return binary(AluOp::IsEqual, o->a, o->b, into, true);
        if (const NE *o = e.as<NE>())
            return binary(AluOp::NotEqual, o->a, o->b, into, true);
        if (const LT *o = e.as<LT>())
            return binary(AluOp::IsLt, o->a, o->b, into, false);
        if (const LE *o = e.as<LE>())
            return binary(AluOp::IsLe, o->a, o->b, into, false);
        if (const GT *o = e.as<GT>())
            return binary(AluOp::IsGt, o->a, o->b, into, false);
        if (const GE *o = e.as<GE>())
            return binary(AluOp::IsGe, o->a, o->b, into, false);
        if (const And *o = e.as<And>())
            return binary(AluOp::LogicalAnd, o->a, o->b, into, true);
        if (const Or *o = e.as<Or>())
            return binary(AluOp::LogicalOr, o->a, o->b, into, true);
        if (const Not *o = e.as<Not>())
            return binary(AluOp::IsEqual, o->a, Halide::Expr(0.0f), into, true);
        if (const Select *o = e.as<Select>())
            return select(o, into);
        if (const Variable *v = e.as<Variable>())
            return iota(v, into);
        if (const Call *c = e.as<Call>())
            return call(c, into);
        std::ostringstream os;
        os << e;
        s_.fail("NHC_EGEN014", n_,
                "the expression " + os.str().substr(0, 200) + " has no engine instruction");
    }

    static Operand imm(float v) {
        Operand o;
        o.is_imm = true;
        o.imm = v;
        return o;
    }

    Selector &s_;
    const Nest &n_;
    IterSpace it_;
    AccessPattern dst_;
};

/** acc = acc op rest (either order): the op and `rest`, or nullopt. */
std::optional<std::pair<AluOp, Halide::Expr>> match_reduction(const Nest &n) {
    auto self = [&](const Halide::Expr &e) {
        const Load *l = e.as<Load>();
        return l && l->name == n.dst && equal(l->index, n.index);
    };
    auto pick = [&](AluOp op, const Halide::Expr &a,
                    const Halide::Expr &b) -> std::optional<std::pair<AluOp, Halide::Expr>> {
        if (self(a))
            return std::make_pair(op, b);
        if (self(b))
            return std::make_pair(op, a);
        return std::nullopt;
    };
    if (const Add *o = n.value.as<Add>())
        return pick(AluOp::Add, o->a, o->b);
    if (const Max *o = n.value.as<Max>())
        return pick(AluOp::Max, o->a, o->b);
    if (const Min *o = n.value.as<Min>())
        return pick(AluOp::Min, o->a, o->b);
    if (const Mul *o = n.value.as<Mul>())
        return pick(AluOp::Mult, o->a, o->b);
    return std::nullopt;
}

} // namespace

void select_compute(Selector &s, const Nest &n) {
    const Buffer &dst = s.buffer(n.dst);
    Affine da = s.affine(n.dst, n.index, n);
    IterSpace it{n.loops, -1};
    for (int j = 0; j < static_cast<int>(it.loops.size()); j++)
        if (s.walks_partitions(dst, da, j, it.loops[j]))
            it.p = j;
    if (static_cast<int>(it.free().size()) > neff::kMaxFreeDims)
        s.fail("NHC_EGEN015", n,
               "more than " + std::to_string(neff::kMaxFreeDims) +
                   " free loops in one instruction");
    std::optional<std::pair<AluOp, Halide::Expr>> red = match_reduction(n);
    int reduced = 0; // the loops along which the destination does not move
    for (int j = static_cast<int>(it.loops.size()) - 1; j >= 0 && da.strides[j] == 0; j--)
        reduced++;
    bool moves_everywhere = std::none_of(da.strides.begin(), da.strides.end(),
                                         [](int64_t stride) { return stride == 0; });
    // Not a reduction, or an update that combines its destination elementwise with another
    // tile (one kernel tap of a pooling: acc = max(acc, window)).
    if (!red || moves_everywhere) {
        AccessPattern dap = s.onchip_ap(dst, da, it, n, "destination");
        ComputeSelector(s, n, it, dap).store(n.value);
        s.release_temps();
        return;
    }
    // A reduction: the loops along which the destination does not move must be the innermost.
    for (int j = 0; j < static_cast<int>(it.loops.size()) - reduced; j++)
        if (da.strides[j] == 0)
            s.fail("NHC_EGEN016", n, "reduction loop " + it.loops[j].name + " is not innermost");
    if (reduced == 0 || it.p >= static_cast<int>(it.loops.size()) - reduced)
        s.fail("NHC_EGEN016", n, "a reduction must run along free loops, not across partitions");
    IterSpace kept{std::vector<Loop>(it.loops.begin(), it.loops.end() - reduced), it.p};
    Affine dk{da.base, std::vector<int64_t>(da.strides.begin(), da.strides.end() - reduced)};
    AccessPattern dap = s.onchip_ap(dst, dk, kept, n, "destination");
    // tensor_reduce overwrites its destination. When the instruction just before it set that
    // destination to the op's identity, the reduction alone is the result and the init is
    // dropped. Otherwise the destination holds a value to combine with (a partial result of an
    // outer reduction loop, or an init that is not the identity): reduce into a temporary and
    // combine, so that no schedule overwrites partial results.
    static const std::map<AluOp, float> identity = {
        {AluOp::Add, 0.0f},
        {AluOp::Mult, 1.0f},
        {AluOp::Max, -std::numeric_limits<float>::infinity()},
        {AluOp::Min, std::numeric_limits<float>::infinity()}};
    auto id = identity.find(red->first);
    bool overwrite = id != identity.end() && s.drop_memset(dap, id->second);
    ComputeSelector cs(s, n, it, dap);
    AccessPattern src = cs.tile(red->second);
    // A sum over the whole row of what ACT just computed is that activation's own free-axis
    // accumulation (add only on trn1; neuroncore.md L174): softmax's exp and its sum.
    if (overwrite && red->first == AluOp::Add && reduced == static_cast<int>(it.free().size()) &&
        dap.free_count() == 1 && s.accumulate_into_last_activation(src, dap)) {
        s.release_temps();
        return;
    }
    Instr i;
    i.op = Opcode::TensorReduce;
    i.dst = overwrite ? dap : s.temp_tile(kept, n);
    i.src = src;
    i.alu0 = red->first;
    i.axes = reduced;
    s.emit(Engine::DVE, i); // tensor_reduce: DVE's alone (neuroncore.md L306)
    if (!overwrite) {
        Instr combine;
        combine.op = Opcode::TensorTensor;
        combine.dst = dap;
        combine.src = dap;
        combine.src1 = i.dst;
        combine.alu0 = red->first;
        s.emit(s.vector_engine(n.dst, combine), combine);
    }
    s.release_temps();
}

} // namespace nhc::codegen
