#ifndef NHC_ALGORITHMS_ALGORITHM_H
#define NHC_ALGORITHMS_ALGORITHM_H

/** \file
 * The interface between the Graph IR and the pure Halide algorithms (DESIGN.md §3). An algorithm
 * builder takes one Graph node with its operands as Tensors and returns fresh Funcs for its
 * outputs plus its named stages, for the schedules to address. No scheduling happens here.
 *
 * Conventions (DESIGN.md §3, ../shared/reference/isel-prototype.md §8):
 *  - a Tensor's Func takes the ONNX axes in reverse: Halide's x (innermost, contiguous) is the
 *    last ONNX axis and the last Halide dim is the first ONNX axis (the one meant for partitions);
 *  - Func names are `<node>__<stage>` with the ONNX node name sanitised (Halide forbids '.'),
 *    made unique per process (Halide's name counter is global);
 *  - broadcasts across an operand's leading axes and transposes are explicit Funcs;
 *  - arithmetic on floating-point tensors is done in fp32, whatever the storage type.
 */

#include "graph/Graph.h"

#include <Halide.h>
#include <string>
#include <vector>

namespace nhc::alg {

/** A value inside a group: a Func over the reversed ONNX axes, with its static shape. */
struct Tensor {
    Halide::Func func;
    Shape shape; ///< ONNX order
    DType dtype = DType::Float32;

    int rank() const { return static_cast<int>(shape.size()); }
    /** func at an index given in ONNX axis order. */
    Halide::Expr at(const std::vector<Halide::Expr> &onnx_index) const;
};

/** A stage of an operator that a schedule may name: e.g. "acc" for a matmul's accumulator. */
struct Stage {
    std::string role;
    Halide::Func func;
    Shape shape; ///< the stage's extents (ONNX order) where the builder records them, else empty
    /** The type the stage is stored in when its Halide type does not say (tf32 is a Float(32)
     *  whose writer rounds it); unset otherwise. */
    std::optional<DType> stored_as;
    /** For a broadcast stage (broadcast_to): the shape (ONNX order) of the tensor it broadcasts. */
    Shape broadcast_from;
    /** A reduction over the keys each row keeps (RDom::where, graph/SkipMaskedKeys.h): the
     *  terms past a row's last kept key, up to the last one of any row of its tile, are masked
     *  ones that change nothing, so one instruction may reduce the tile's rows over the longest
     *  of their ranges (codegen::SelectOptions::widened_reductions). */
    bool widens_to_tile = false;
};

struct OpResult {
    std::vector<Tensor> outputs; ///< one per node output, in order
    std::vector<Stage> stages;   ///< every Func the builder created, in creation order
};

/** Makes Func names unique per process: `<node>__<role>`, then `__2`, `__3` ... if taken. */
class Namer {
public:
    explicit Namer(const std::string &node_name);
    std::string operator()(const std::string &role);

private:
    std::string base_;
};

/** Builder context: the node, its input tensors (empty Tensor for an omitted optional input) and
 *  the host data of the inputs that are constants (nullptr otherwise). */
struct OpContext {
    const Node &node;
    std::vector<Tensor> inputs;
    std::vector<const Value *> outputs; ///< the node's output values (shapes from inference)
    std::vector<const HostTensor *> constants;
    int opset = 17;
};

/** Builds and records stages. */
class Builder {
public:
    Builder(const OpContext &ctx) : ctx_(ctx), namer_(ctx.node.name) {}
    const OpContext &ctx() const { return ctx_; }
    /** A fresh Func for a stage with the given role; recorded in the result's stages. */
    Halide::Func func(const std::string &role, Shape shape = {});
    /** Records that stage `f` is stored as `t` (Stage::stored_as). */
    void store_as(const Halide::Func &f, DType t);
    /** An accumulation's intermediate stage `f` (a sum, a mean, an exponential): stored in the
     *  node's data type `t` when the node asks for it (graph/MixedPrecision.h,
     *  `--disable-mixed-precision-accumulation`) and `t` is 16-bit; else left fp32. */
    void accumulates_in(const Halide::Func &f, DType t);
    /** Records that stage `f` may reduce over its tile's longest range (Stage::widens_to_tile). */
    void widens_to_tile(const Halide::Func &f);
    /** Records that stage `f` broadcasts a tensor of shape `from` (Stage::broadcast_from). */
    void broadcasts(const Halide::Func &f, const Shape &from);
    /** Vars v0..v(rank-1) in Halide order (v0 innermost = last ONNX axis). */
    static std::vector<Halide::Var> vars(int rank);
    OpResult result(std::vector<Tensor> outputs) {
        return {std::move(outputs), std::move(stages_)};
    }

private:
    const OpContext &ctx_;
    Namer namer_;
    std::vector<Stage> stages_;
};

/** f(v) = e, also for rank 0 (an empty var list). */
void define(Halide::Func f, const std::vector<Halide::Var> &v, const Halide::Expr &e);

/** f at an index given in ONNX axis order (reversed into Halide's), also for rank 0. */
Halide::Expr call_onnx(const Halide::Func &f, const std::vector<Halide::Expr> &onnx_index);

/** Halide type of a dtype's storage (bool is UInt(8)). */
Halide::Type halide_type(DType t);
/** The type arithmetic runs in: Float(32) for floating dtypes, the storage type otherwise. */
Halide::Type compute_type(DType t);

/** Converts a computed value (fp32 for floating types) to the storage type of `t`. */
Halide::Expr from_compute(const Halide::Expr &e, DType t);

/** The pure extern calls the algorithms emit for GELU (graph/FuseGelu): the code generator maps
 *  them to ACT's gelu and gelu_apprx_tanh; the host reference links host_jit_externs(). */
inline constexpr const char *kGeluErfExtern = "nhc_gelu";
/** C's fmod as one pure extern call (the ALU's mod): Mod, Floor, Ceil. */
inline constexpr const char *kFmodExtern = "nhc_fmod";
inline constexpr const char *kGeluTanhExtern = "nhc_gelu_tanh";
/** Sigmoid and SiLU (x * sigmoid(x), graph/FuseSwish's Swish) as one pure extern call each: the
 *  code generator maps them to ACT's sigmoid and silu. */
inline constexpr const char *kSigmoidExtern = "nhc_sigmoid";
inline constexpr const char *kSiluExtern = "nhc_silu";
/** d <= 0 for an int32 d, as one pure extern call: graph/CausalMask's index test, opaque to
 *  Halide's bounds inference, which would otherwise narrow the region of x a select on it reads
 *  row tile by row tile (the code generator's nests have one extent per loop); the code
 *  generator selects an affine_select on it. */
inline constexpr const char *kAtMostZeroExtern = "nhc_at_most_zero";
/** Host definitions of the algorithms' own extern calls, for Halide's JIT (Pipeline). */
std::map<std::string, Halide::JITExtern> host_jit_externs();

using BuilderFn = OpResult (*)(const OpContext &);

/** The builder for an ONNX op type (default domain), or nullptr. */
BuilderFn find_algorithm(const std::string &op_type);
/** Op types with an algorithm, sorted. */
std::vector<std::string> algorithm_op_types();

/** Builds the algorithm of `ctx.node`; NHC_EUOC002 if it has none, NHC_EALG001 for an attribute
 *  or operand form the algorithm does not cover (naming the node and what was found). */
OpResult build_algorithm(const OpContext &ctx);

/** A Halide input for a graph value: an ImageParam named after the value, with constant bounds
 *  and dense strides, wrapped as a Tensor. */
struct InputParam {
    Halide::ImageParam param;
    Tensor tensor;
};
InputParam make_input(const Value &v);

} // namespace nhc::alg

#endif
