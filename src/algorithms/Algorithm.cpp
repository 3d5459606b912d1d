#include "algorithms/Algorithm.h"

#include "algorithms/Families.h"
#include "graph/MixedPrecision.h"
#include "support/Error.h"

#include <map>
#include <mutex>
#include <set>

namespace nhc::alg {

Halide::Expr call_onnx(const Halide::Func &f, const std::vector<Halide::Expr> &onnx_index) {
    std::vector<Halide::Expr> args(onnx_index.rbegin(), onnx_index.rend());
    Halide::Func g = f; // Func::operator() is not const
    return args.empty() ? g() : g(args);
}

Halide::Expr Tensor::at(const std::vector<Halide::Expr> &onnx_index) const {
    nhc_assert(static_cast<int>(onnx_index.size()) == rank(),
               "index of rank " << onnx_index.size() << " for a tensor of rank " << rank());
    return call_onnx(func, onnx_index);
}

static std::string sanitize(const std::string &name) {
    std::string s;
    for (char c : name)
        s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    // Halide names may not start with a digit or an underscore-only prefix is fine.
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
        s = "n" + s;
    return s;
}

Namer::Namer(const std::string &node_name) : base_(sanitize(node_name)) {}

std::string Namer::operator()(const std::string &role) {
    static std::mutex mu;
    static std::set<std::string> taken;
    // Where the search for a free suffix resumes, per name: a node built again (every candidate
    // of a search builds it) takes the next suffix at once, not after trying every earlier one.
    static std::map<std::string, int> next_suffix;
    std::lock_guard<std::mutex> lock(mu);
    const std::string plain = base_ + "__" + role;
    std::string name = plain;
    int &i = next_suffix.emplace(plain, 2).first->second;
    while (taken.count(name))
        name = plain + "__" + std::to_string(i++);
    taken.insert(name);
    return name;
}

Halide::Func Builder::func(const std::string &role, Shape shape) {
    Halide::Func f(namer_(role));
    stages_.push_back({role, f, std::move(shape), std::nullopt, {}, false});
    return f;
}

void Builder::store_as(const Halide::Func &f, DType t) {
    for (Stage &s : stages_)
        if (s.func.name() == f.name())
            s.stored_as = t;
}

void Builder::accumulates_in(const Halide::Func &f, DType t) {
    if (ctx_.node.has_attr(kAccumulateInDataType) && (t == DType::BFloat16 || t == DType::Float16))
        store_as(f, t);
}

void Builder::widens_to_tile(const Halide::Func &f) {
    for (Stage &s : stages_)
        if (s.func.name() == f.name())
            s.widens_to_tile = true;
}

void Builder::broadcasts(const Halide::Func &f, const Shape &from) {
    for (Stage &s : stages_)
        if (s.func.name() == f.name())
            s.broadcast_from = from;
}

std::vector<Halide::Var> Builder::vars(int rank) {
    std::vector<Halide::Var> v;
    for (int i = 0; i < rank; i++)
        v.emplace_back("v" + std::to_string(i));
    return v;
}

void define(Halide::Func f, const std::vector<Halide::Var> &v, const Halide::Expr &e) {
    if (v.empty())
        f() = e;
    else
        f(v) = e;
}

Halide::Type halide_type(DType t) {
    switch (t) {
    case DType::Float32:
    case DType::TFloat32:   // a float whose mantissa the engine that writes it rounds
    case DType::Float8E4M3: // Halide has no fp8: a float Func stored as fp8 (Stage::stored_as)
        return Halide::Float(32);
    case DType::Float16:
        return Halide::Float(16);
    case DType::BFloat16:
        return Halide::BFloat(16);
    case DType::Float64:
        return Halide::Float(64);
    case DType::Int8:
        return Halide::Int(8);
    case DType::Int16:
        return Halide::Int(16);
    case DType::Int32:
        return Halide::Int(32);
    case DType::Int64:
        return Halide::Int(64);
    case DType::UInt8:
        return Halide::UInt(8);
    case DType::UInt16:
        return Halide::UInt(16);
    case DType::UInt32:
        return Halide::UInt(32);
    case DType::UInt64:
        return Halide::UInt(64);
    case DType::Bool:
        return Halide::UInt(8);
    }
    nhc_assert(false, "unknown dtype");
}

Halide::Type compute_type(DType t) {
    return dtype_is_float(t) ? Halide::Float(32) : halide_type(t);
}

Halide::Expr to_compute(const Halide::Expr &e, DType t) {
    Halide::Type ct = compute_type(t);
    return e.type() == ct ? e : Halide::cast(ct, e);
}

Halide::Expr from_compute(const Halide::Expr &e, DType t) {
    // Halide rounds float -> bfloat16 / float16 to nearest even, as the engines do on write.
    if (t == DType::Bool)
        return Halide::cast(Halide::UInt(8), e != Halide::Internal::make_zero(e.type()));
    return e.type() == halide_type(t) ? e : Halide::cast(halide_type(t), e);
}

void unsupported_form(const Node &node, const std::string &what) {
    user_error("NHC_EALG001", node.describe(), ": ", what);
}

int normalize_axis(const Node &node, int64_t axis, int rank) {
    if (axis < -rank || axis >= rank)
        unsupported_form(node, "axis " + std::to_string(axis) + " is out of range for rank " +
                                   std::to_string(rank));
    return static_cast<int>(axis < 0 ? axis + rank : axis);
}

const Tensor &input(const OpContext &ctx, size_t i) {
    if (i >= ctx.inputs.size() || !ctx.inputs[i].func.defined())
        unsupported_form(ctx.node, "input " + std::to_string(i) + " is missing");
    return ctx.inputs[i];
}

namespace {

const std::map<std::string, BuilderFn> &table() {
    static const std::map<std::string, BuilderFn> t = {
        {"Abs", build_unary},
        {"Add", build_binary},
        {"And", build_compare},
        {"ArgMax", build_arg_reduce},
        {"ArgMin", build_arg_reduce},
        {"BatchNormalization", build_batch_norm},
        {"GlobalAveragePool", build_reduce},
        {"GlobalMaxPool", build_reduce},
        {"InstanceNormalization", build_instance_norm},
        {"Conv", build_conv},
        {"Resize", build_resize},
        {"Expand", build_expand},
        {"Sin", build_unary},
        {"Cos", build_unary},
        {"Tan", build_unary},
        {"Atan", build_unary},
        {"Asin", build_unary},
        {"Acos", build_unary},
        {"Sinh", build_unary},
        {"Cosh", build_unary},
        {"Asinh", build_unary},
        {"Acosh", build_unary},
        {"Atanh", build_unary},
        {"Selu", build_unary},
        {"Celu", build_unary},
        {"ThresholdedRelu", build_unary},
        {"Shrink", build_unary},
        {"Softsign", build_unary},
        {"Sign", build_unary},
        {"Floor", build_unary},
        {"Ceil", build_unary},
        {"Round", build_unary},
        {"PRelu", build_binary},
        {"Mod", build_binary},
        {"IsInf", build_compare},
        {"MaxPool", build_pool},
        {"AveragePool", build_pool},
        {"Cast", build_cast},
        {"CastLike", build_cast},
        {"Dropout", build_dropout},
        {"LogSoftmax", build_softmax},
        {"Slice", build_slice},
        {"Equal", build_compare},
        {"Greater", build_compare},
        {"GreaterOrEqual", build_compare},
        {"Less", build_compare},
        {"LessOrEqual", build_compare},
        {"Not", build_compare},
        {"Or", build_compare},
        {"Xor", build_compare},
        {"Clip", build_clip},
        {"Concat", build_concat},
        {"Elu", build_unary},
        {"HardSigmoid", build_unary},
        {"HardSwish", build_unary},
        {"LeakyRelu", build_unary},
        {"Mean", build_binary},
        {"Softplus", build_unary},
        {"Sum", build_binary},
        {"Div", build_binary},
        {"Erf", build_unary},
        {"Exp", build_unary},
        {"Flatten", build_reshape},
        {"Gather", build_gather},
        {"Gelu", build_unary},
        {"Swish", build_unary},
        {"Gemm", build_gemm},
        {"Identity", build_reshape},
        {"LayerNormalization", build_layer_norm},
        {"Log", build_unary},
        {"MatMul", build_matmul},
        {"Max", build_binary},
        {"Min", build_binary},
        {"Mul", build_binary},
        {"Neg", build_unary},
        {"Pow", build_binary},
        {"Reciprocal", build_unary},
        {"ReduceL1", build_reduce},
        {"ReduceL2", build_reduce},
        {"ReduceLogSum", build_reduce},
        {"ReduceLogSumExp", build_reduce},
        {"ReduceMax", build_reduce},
        {"ReduceMin", build_reduce},
        {"ReduceProd", build_reduce},
        {"ReduceSumSquare", build_reduce},
        {"ReduceMean", build_reduce},
        {"ReduceSum", build_reduce},
        {"Relu", build_unary},
        {"Reshape", build_reshape},
        {"Sigmoid", build_unary},
        {"Softmax", build_softmax},
        {"Split", build_split},
        {"Sqrt", build_unary},
        {"Squeeze", build_reshape},
        {"Sub", build_binary},
        {"Tanh", build_unary},
        {"Transpose", build_transpose},
        {"Unsqueeze", build_reshape},
        {"Where", build_where},
    };
    return t;
}

} // namespace

BuilderFn find_algorithm(const std::string &op_type) {
    auto it = table().find(op_type);
    return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> algorithm_op_types() {
    std::vector<std::string> out;
    for (const auto &[op, fn] : table())
        out.push_back(op);
    return out;
}

OpResult build_algorithm(const OpContext &ctx) {
    // The graph passes' own operators (domain "nhc") that have an algorithm.
    static const std::map<std::string, BuilderFn> internal = {
        {"ConvTaps", build_conv_taps},
        {"GroupNormRows", build_group_norm_rows},
        {"PoolTaps", build_pool_taps},
        {"TriangularWhere", build_triangular_where}};
    BuilderFn fn = nullptr;
    if (ctx.node.domain.empty())
        fn = find_algorithm(ctx.node.op_type);
    else if (ctx.node.domain == "nhc" && internal.count(ctx.node.op_type))
        fn = internal.at(ctx.node.op_type);
    if (!fn)
        user_error("NHC_EUOC002", ctx.node.describe(), " has no algorithm");
    OpResult r = fn(ctx);
    nhc_assert(r.outputs.size() <= ctx.node.outputs.size(),
               ctx.node.describe() << " built " << r.outputs.size() << " outputs");
    return r;
}

InputParam make_input(const Value &v) {
    Halide::ImageParam p(halide_type(v.dtype), static_cast<int>(v.shape.size()),
                         Namer(v.name)("in"));
    int64_t stride = 1;
    int rank = static_cast<int>(v.shape.size());
    for (int d = 0; d < rank; d++) { // Halide dim d is ONNX axis rank-1-d
        int64_t extent = v.shape[rank - 1 - d];
        p.dim(d).set_bounds(0, static_cast<int>(extent)).set_stride(static_cast<int>(stride));
        stride *= extent;
    }
    Tensor t{Halide::Func(p), v.shape, v.dtype};
    return {p, t};
}

} // namespace nhc::alg
