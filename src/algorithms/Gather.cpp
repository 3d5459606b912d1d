// Gather along an axis with a tensor of indices (an embedding lookup when axis is 0). Negative
// indices count from the end, as ONNX says; indices are clamped into range so that an
// out-of-range index cannot read outside the table (the runtime reports it separately).

#include "algorithms/Broadcast.h"
#include "algorithms/Families.h"

namespace nhc::alg {

using Halide::Expr;

namespace {

/** Rows of a 2-D table (an embedding lookup) by an indirect DMA: `rows` makes the indices
 *  non-negative on chip and `gathered` reads table row rows[t] for each index t, which the code
 *  generator selects as one gathering DMA per tile of indices (docs/isa.md, `dma ... index=`),
 *  so that only the rows used cross HBM. The clamp bounds Halide's region of the table; the DMA
 *  itself checks each row against the table instead of clamping (an index out of range stops
 *  the run with NHC_ERT020, as the runtime's NRT_OOB does). */
OpResult build_gather_table_rows(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &data = input(ctx, 0), &ids = input(ctx, 1);
    int rows_in_table = static_cast<int>(data.shape[0]);
    int q = ids.rank();
    std::vector<Halide::Var> iv = Builder::vars(q);
    Halide::Func rows = b.func("rows");
    Expr id = Halide::cast(Halide::Int(32), ids.at(onnx_index(iv)));
    define(rows, iv, Halide::select(id < 0, id + rows_in_table, id));
    std::vector<Halide::Var> ov = Builder::vars(q + 1);
    std::vector<Expr> oi = onnx_index(ov);
    Expr row = Halide::clamp(call_onnx(rows, std::vector<Expr>(oi.begin(), oi.end() - 1)), 0,
                             rows_in_table - 1);
    Halide::Func gathered = b.func("gathered");
    define(gathered, ov, data.at({row, oi.back()}));
    Halide::Func out = b.func("out");
    define(out, ov, gathered(std::vector<Expr>(ov.begin(), ov.end())));
    Shape out_shape = ids.shape;
    out_shape.push_back(data.shape[1]);
    return b.result({Tensor{out, out_shape, data.dtype}});
}

} // namespace

OpResult build_gather(const OpContext &ctx) {
    Builder b(ctx);
    const Tensor &data = input(ctx, 0), &ind = input(ctx, 1);
    if (dtype_is_float(ind.dtype))
        unsupported_form(ctx.node, "indices must be integers");
    int axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), data.rank());
    if (data.rank() == 2 && axis == 0 && dtype_is_float(data.dtype))
        return ind.rank() >= 1 ? build_gather_table_rows(ctx)
                               : build_gather_rows(ctx); // one row: a one-hot contraction
    const HostTensor *c = ctx.constants.size() > 1 ? ctx.constants[1] : nullptr;
    if (c && c->numel() == 1) {
        // One constant index (BERT's pooler takes token 0): a plain, affine read.
        int64_t k = c->get_i64(0);
        int64_t dim = data.shape[axis];
        if (k < -dim || k >= dim)
            unsupported_form(ctx.node, "constant index " + std::to_string(k) +
                                           " is out of range for dimension " + std::to_string(dim));
        k = k < 0 ? k + dim : k;
        Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
        out_shape.insert(out_shape.end(), ind.shape.begin(), ind.shape.end());
        out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
        std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out_shape.size()));
        std::vector<Expr> oi = onnx_index(v);
        std::vector<Expr> di(oi.begin(), oi.begin() + axis);
        di.push_back(static_cast<int>(k));
        di.insert(di.end(), oi.begin() + axis + ind.rank(), oi.end());
        Halide::Func out = b.func("out");
        define(out, v, data.at(di));
        return b.result({Tensor{out, out_shape, data.dtype}});
    }
    int q = ind.rank();
    Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
    out_shape.insert(out_shape.end(), ind.shape.begin(), ind.shape.end());
    out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out_shape.size()));
    std::vector<Expr> oi = onnx_index(v);
    std::vector<Expr> ii(oi.begin() + axis, oi.begin() + axis + q);
    int dim = static_cast<int>(data.shape[axis]);
    Expr k = Halide::cast(Halide::Int(32), ind.at(ii));
    k = Halide::clamp(Halide::select(k < 0, k + dim, k), 0, dim - 1);
    std::vector<Expr> di(oi.begin(), oi.begin() + axis);
    di.push_back(k);
    di.insert(di.end(), oi.begin() + axis + q, oi.end());
    Halide::Func out = b.func("out");
    define(out, v, data.at(di));
    return b.result({Tensor{out, out_shape, data.dtype}});
}

} // namespace nhc::alg
