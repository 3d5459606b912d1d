// MatMul (batched, numpy broadcasting of the batch axes, 1-D operands) and Gemm (transposed
// operands, alpha, beta, bias C). Node::operand_cast (auto-cast) rounds the staged operands. The
// contraction runs over an RDom `k` in an fp32 accumulator stage `acc`; the operands are staged as
// explicit Funcs with K as their outer (partition) axis: `lhs_t(m, k)` (the stationary operand,
// transposed from ONNX's [M, K]) and `rhs(n, k)` (the moving operand), following
// ../shared/reference/isel-prototype.md §5.

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"
#include "graph/SkipMaskedKeys.h"

#include <optional>
#include <tuple>

namespace nhc::alg {

namespace {

using Halide::Expr;

// The graph's type for the product: the operands' own type, unless auto-cast stores them narrower
// than the product (graph/AutoCast.h), where the graph keeps the product's type.
DType result_type(const OpContext &ctx, DType operand_type) {
    if (ctx.outputs.empty() || ctx.outputs[0] == nullptr)
        return operand_type;
    return ctx.outputs[0]->dtype;
}

struct Contraction {
    Halide::Func acc;
    Shape out_shape; // ONNX order, before removing 1-D operand axes
};

// acc(n, m, batch...) = sum_k lhs(k at m) * rhs(n at k), over the batch shape `batch`.
// lhs_at(m, k, batch) and rhs_at(n, k, batch) read the ONNX operands (stored as `a_type` and
// `b_type`); the staged operands have `operand` type (fp32, or the auto-cast type).
template <typename LhsAt, typename RhsAt>
Contraction contract(Builder &b, int64_t m_size, int64_t n_size, int64_t k_size, const Shape &batch,
                     LhsAt lhs_at, RhsAt rhs_at, DType a_type, DType b_type, DType operand,
                     std::optional<int64_t> causal_diagonal = std::nullopt) {
    int nb = static_cast<int>(batch.size());
    std::vector<Halide::Var> bv = Builder::vars(nb + 2); // v0 = n (or m), v1 = k (or m), rest batch
    Halide::Var x = bv[0], y = bv[1];
    std::vector<Halide::Var> batch_vars(bv.begin() + 2, bv.end());
    std::vector<Expr> batch_idx = onnx_index(batch_vars);
    auto args = [&](Expr a, Expr c) {
        std::vector<Expr> r = {a, c};
        r.insert(r.end(), batch_vars.begin(), batch_vars.end());
        return r;
    };
    // A weight auto-cast stored as fp8 (graph/AutoCast.h) is taken as stored: the PE reads fp8
    // and mixes it with a 16-bit operand (nc.md:L116). Each side's staged type:
    auto staged_type = [&](DType stored) { return stored == DType::Float8E4M3 ? stored : operand; };
    const DType lhs_type = staged_type(a_type), rhs_type = staged_type(b_type);
    // An operand already stored in its staged type is copied as is (no round trip through fp32).
    auto stage = [&](Expr e, DType stored) {
        DType to = staged_type(stored);
        return stored == to ? e : from_compute(to_compute(e, stored), to);
    };
    // The stationary operand needs K on partitions, but ONNX stores A with K innermost: a_nat
    // (m, k-contiguous, as stored) -> a_tp (the transpose, fp32) -> lhs_t (K outer). A schedule
    // inlines the first two (one transposing DMA) or keeps them on chip (a PE transpose).
    Halide::Func a_nat = b.func("a_nat"), a_tp = b.func("a_tp"), lhs_t = b.func("lhs_t"),
                 b_nat = b.func("b_nat"), b_tp = b.func("b_tp"), rhs = b.func("rhs"),
                 acc = b.func("acc");
    // Types Halide has not (held in a float32 Func): engines and DMAs round what they write
    // into tf32; fp8 is only ever copied.
    for (auto [type, nat, staged] : {std::tuple{lhs_type, a_nat, lhs_t}, {rhs_type, b_nat, rhs}})
        if (type == DType::TFloat32 || type == DType::Float8E4M3) {
            b.store_as(nat, type);
            b.store_as(staged, type);
        }
    a_nat(args(x, y)) = stage(lhs_at(y, x, batch_idx), a_type);            // (k, m)
    a_tp(args(x, y)) = Halide::cast(Halide::Float(32), a_nat(args(y, x))); // (m, k)
    lhs_t(args(x, y)) = from_compute(a_tp(args(x, y)), lhs_type);          // (m, k)
    // The moving operand the same way, for a B stored with K innermost (a folded Transpose).
    b_nat(args(x, y)) = stage(rhs_at(y, x, batch_idx), b_type);            // (k, n)
    b_tp(args(x, y)) = Halide::cast(Halide::Float(32), b_nat(args(y, x))); // (n, k)
    rhs(args(x, y)) = from_compute(b_tp(args(x, y)), rhs_type);            // (n, k)
    Halide::RDom k(0, static_cast<int>(k_size), "k");
    // P·V of a causally masked attention (graph/SkipMaskedKeys.h): row m of P is 0 past key
    // m + diagonal, so the contraction stops there.
    if (causal_diagonal) {
        k.where(k <= y + static_cast<int>(*causal_diagonal));
        b.widens_to_tile(acc);
    }
    acc(args(x, y)) = 0.0f; // (n, m), fp32 as in PSUM
    acc(args(x, y)) += Halide::cast(Halide::Float(32), lhs_t(args(y, k))) *
                       Halide::cast(Halide::Float(32), rhs(args(x, k)));
    Shape out = batch;
    out.push_back(m_size);
    out.push_back(n_size);
    return {acc, out};
}

} // namespace

/** The tensor Transpose(x, perm) as an inlined view of x (Node::input_perm). */
Tensor permuted_view(Builder &b, const Tensor &x, const std::vector<int64_t> &perm,
                     const std::string &role) {
    Shape shape;
    for (int64_t p : perm)
        shape.push_back(x.shape.at(static_cast<size_t>(p)));
    std::vector<Halide::Var> v = Builder::vars(x.rank());
    std::vector<Expr> out = onnx_index(v), in(x.rank());
    for (size_t i = 0; i < perm.size(); i++)
        in[static_cast<size_t>(perm[i])] = out[i];
    Halide::Func f = b.func(role);
    define(f, v, x.at(in));
    return Tensor{f, shape, x.dtype};
}

OpResult build_matmul(const OpContext &ctx) {
    Builder b(ctx);
    Tensor a = input(ctx, 0), c = input(ctx, 1);
    if (auto it = ctx.node.input_perm.find(0); it != ctx.node.input_perm.end())
        a = permuted_view(b, a, it->second, "a_view");
    if (auto it = ctx.node.input_perm.find(1); it != ctx.node.input_perm.end())
        c = permuted_view(b, c, it->second, "b_view");
    if (a.rank() == 0 || c.rank() == 0)
        unsupported_form(ctx.node, "scalar operands are not valid for MatMul");
    // 1-D operands: A[K] acts as [1, K], B[K] as [K, 1]; the added axes leave the result.
    Shape as = a.rank() == 1 ? Shape{1, a.shape[0]} : a.shape;
    Shape bs = c.rank() == 1 ? Shape{c.shape[0], 1} : c.shape;
    int64_t m = as[as.size() - 2], k = as.back(), k2 = bs[bs.size() - 2], n = bs.back();
    if (k != k2)
        unsupported_form(ctx.node, "contraction sizes differ: " + shape_str(a.shape) + " @ " +
                                       shape_str(c.shape));
    Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
    Shape batch = broadcast_shape(ctx.node, {a_batch, b_batch});
    auto read = [](const Tensor &t, const Shape &padded, const Shape &tb, Expr row, Expr col,
                   const std::vector<Expr> &batch_idx, const Shape &batch) {
        std::vector<Expr> idx = broadcast_index(tb, batch, batch_idx);
        if (t.rank() == 1) // the padded axis of a 1-D operand is not in the tensor
            return t.at({padded[0] == 1 ? col : row});
        idx.push_back(row);
        idx.push_back(col);
        return t.at(idx);
    };
    Contraction con = contract(
        b, m, n, k, batch,
        [&](Expr mi, Expr ki, const std::vector<Expr> &bi) {
            return read(a, as, a_batch, mi, ki, bi, batch);
        },
        [&](Expr ni, Expr ki, const std::vector<Expr> &bi) {
            return read(c, bs, b_batch, ki, ni, bi, batch);
        },
        a.dtype, c.dtype, ctx.node.operand_cast.value_or(DType::Float32),
        ctx.node.has_attr(kKeysUpToDiagonal)
            ? std::optional<int64_t>(ctx.node.attr_int(kKeysUpToDiagonal, 0))
            : std::nullopt);
    Shape out_shape = batch;
    if (a.rank() > 1)
        out_shape.push_back(m);
    if (c.rank() > 1)
        out_shape.push_back(n);
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out_shape.size()));
    std::vector<Expr> oi = onnx_index(v);
    std::vector<Expr> acc_idx(oi.begin(), oi.begin() + batch.size()); // ONNX order
    acc_idx.push_back(a.rank() > 1 ? oi[batch.size()] : Expr(0));
    acc_idx.push_back(c.rank() > 1 ? oi.back() : Expr(0));
    Halide::Func out = b.func("out");
    std::vector<Expr> hidx(acc_idx.rbegin(), acc_idx.rend());
    DType out_type = result_type(ctx, a.dtype);
    define(out, v, from_compute(con.acc(hidx), out_type));
    return b.result({Tensor{out, out_shape, out_type}});
}

OpResult build_gemm(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &a = input(ctx, 0), &c = input(ctx, 1);
    if (a.rank() != 2 || c.rank() != 2)
        unsupported_form(ctx.node, "Gemm needs 2-D A and B, found " + shape_str(a.shape) + " and " +
                                       shape_str(c.shape));
    bool ta = ctx.node.attr_int("transA", 0) != 0, tb = ctx.node.attr_int("transB", 0) != 0;
    float alpha = static_cast<float>(ctx.node.attr_float("alpha", 1.0));
    float beta = static_cast<float>(ctx.node.attr_float("beta", 1.0));
    int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
    int64_t n = tb ? c.shape[0] : c.shape[1], k2 = tb ? c.shape[1] : c.shape[0];
    if (k != k2)
        unsupported_form(ctx.node, "contraction sizes differ: A " + shape_str(a.shape) + ", B " +
                                       shape_str(c.shape));
    Contraction con = contract(
        b, m, n, k, {},
        [&](Expr mi, Expr ki, const std::vector<Expr> &) {
            return ta ? a.at({ki, mi}) : a.at({mi, ki});
        },
        [&](Expr ni, Expr ki, const std::vector<Expr> &) {
            return tb ? c.at({ni, ki}) : c.at({ki, ni});
        },
        a.dtype, c.dtype, ctx.node.operand_cast.value_or(DType::Float32));
    Shape out_shape = {m, n};
    std::vector<Halide::Var> v = Builder::vars(2);
    Expr y = con.acc(v[0], v[1]);
    if (alpha != 1.0f)
        y = y * alpha;
    if (ctx.inputs.size() > 2 && ctx.inputs[2].func.defined() && beta != 0.0f) {
        Tensor bias = broadcast_to(b, ctx.inputs[2], out_shape, "bias");
        Expr be = to_compute(bias.at(onnx_index(v)), bias.dtype);
        y = y + (beta == 1.0f ? be : be * beta);
    }
    Halide::Func out = b.func("out");
    DType out_type = result_type(ctx, a.dtype);
    define(out, v, from_compute(y, out_type));
    return b.result({Tensor{out, out_shape, out_type}});
}

/** Gather of rows of a 2-D table (an embedding lookup) as a contraction with a one-hot matrix:
 *  out[t, h] = sum_v (ids[t] == v) * table[v, h]. The NeuronCore has no data-dependent DMA in
 *  this ISA, but the PE multiplies: the one-hot rows are built on chip from the indices broadcast
 *  across partitions (`ids_b`) compared with the partition index, then multiplied by the table
 *  in K = vocabulary chunks. Exact in fp32 (one product per output element is non-zero).
 *  Negative indices count from the end, as ONNX says. */
OpResult build_gather_rows(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &data = input(ctx, 0), &ids = input(ctx, 1);
    int64_t v_size = data.shape[0], h_size = data.shape[1];
    Shape batch = ids.shape;
    int64_t m = 1;
    if (!batch.empty()) {
        m = batch.back();
        batch.pop_back();
    }
    int nb = static_cast<int>(batch.size());
    // ids_b(m, k, batch) = ids[batch, m]: the indices, the same on every partition k.
    std::vector<Halide::Var> v = Builder::vars(nb + 2);
    std::vector<Halide::Var> bvars(v.begin() + 2, v.end());
    std::vector<Expr> idx = onnx_index(bvars);
    if (!ids.shape.empty())
        idx.push_back(v[0]);
    Halide::Func ids_b = b.func("ids_b");
    std::vector<Expr> args = {v[0], v[1]};
    args.insert(args.end(), bvars.begin(), bvars.end());
    ids_b(args) = ids.at(idx);
    auto lhs_at = [&](Expr mi, Expr ki, const std::vector<Expr> &bi) {
        std::vector<Expr> a = {mi, ki};
        std::vector<Expr> hb(bi.rbegin(), bi.rend());
        a.insert(a.end(), hb.begin(), hb.end());
        Expr i = Halide::cast(Halide::Int(32), ids_b(a));
        i = Halide::select(i < 0, i + static_cast<int>(v_size), i);
        return Halide::cast(Halide::Float(32), i == ki);
    };
    auto rhs_at = [&](Expr ni, Expr ki, const std::vector<Expr> &) { return data.at({ki, ni}); };
    Contraction con = contract(b, m, h_size, v_size, batch, lhs_at, rhs_at, DType::Float32,
                               data.dtype, DType::Float32);
    Shape out_shape = ids.shape;
    out_shape.push_back(h_size);
    std::vector<Halide::Var> ov = Builder::vars(static_cast<int>(out_shape.size()));
    std::vector<Expr> oi = onnx_index(ov);
    std::vector<Expr> acc_idx(oi.begin(), oi.begin() + nb);
    acc_idx.push_back(ids.shape.empty() ? Expr(0) : oi[nb]);
    acc_idx.push_back(oi.back());
    Halide::Func out = b.func("out");
    define(out, ov, from_compute(call_onnx(con.acc, acc_idx), data.dtype));
    return b.result({Tensor{out, out_shape, data.dtype}});
}

} // namespace nhc::alg
