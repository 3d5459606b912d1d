#include "schedules/DefaultSchedule.h"

#include "graph/CausalMask.h"
#include "graph/FlattenElementwise.h"
#include "graph/GroupNorm.h"
#include "schedules/FoldBroadcasts.h"
#include "schedules/MemoryTypes.h"
#include "schedules/ScheduleParts.h"
#include "support/Error.h"
#include "target/CostModel.h"

#include <algorithm>
#include <map>
#include <set>

namespace nhc::sched {

namespace {

using namespace detail;
using Halide::Func;
using Halide::Var;

// A broadcast along the last ONNX axis only (a per-row value, [R, 1] against [R, W]): built as
// a stage it is one DMA descriptor row per element (a stride-0 source); the compute
// instructions read the value on its own partition instead.
bool broadcasts_along_free_axis(const alg::Stage &s) {
    const Shape &from = s.broadcast_from, &to = s.shape;
    if (from.size() != to.size() || to.size() < 2 || from.back() != 1 || to.back() == 1)
        return false;
    for (size_t i = 0; i + 1 < to.size(); i++)
        if (from[i] != to[i])
            return false;
    return true;
}

void schedule_compute(Group &g, const Limits &L) {
    // With several outputs (LayerNormalization's Mean and InvStdDev) the stages serve all of
    // them, so they are computed once, at root.
    TileLoop tile;
    RowChunks chunks = plan_row_chunks(g, L);
    if (chunks.form == RowChunks::Elementwise)
        tile = tile_output_columns(g.outputs[0].func, g.outputs[0].result.shape, chunks.columns, L);
    else if (g.outputs.size() == 1)
        tile = tile_elementwise_output(g.outputs[0].func, g.outputs[0].result.shape, L);
    int out_rank = static_cast<int>(g.outputs[0].result.shape.size());
    std::set<std::string> column_reads; // what the inlined broadcasts read: staged per tile
    for (const alg::Stage &s : g.op.stages) {
        if (broadcasts_along_free_axis(s)) {
            Func(s.func).compute_inline(); // readers take the [P, 1] column, free stride 0
            for (const std::string &n : direct_calls(s.func))
                column_reads.insert(n);
            continue;
        }
        place(s.func, tile, SBUF);
        declare_layout(g, s.func, out_rank);
    }
    for (GroupInput &in : g.inputs)
        if (column_reads.count(in.staged.name())) {
            place(in.staged, tile, SBUF);
            declare_layout(g, in.staged, out_rank);
        }
    stage_inputs(g, tile);
    if (chunks.form == RowChunks::Reduction)
        chunk_reductions(g, chunks.columns);
}

// An Expand that repeats elements along inner axes (graph/ResizeMatmul's nearest upsampling:
// [C, H, 1, W, 1] to [C, H, 2, W, 2]): the default tiling puts the second-to-last axis on
// partitions, W's 16 rows of 2 elements, each broadcast from HBM by DMA. With the outermost
// axis (not broadcast) on partitions instead, a tile is one load of its rows of x, one copy on
// an engine that reads them with stride 0 along the repeated axes, and one store of whole output
// rows. Applies when that axis fills more partitions than the default's and a row of the output
// fits the layout budget; returns false otherwise, having changed nothing.
bool schedule_outer_partitions(Group &g, const Limits &L) {
    const alg::Tensor &out = g.outputs[0].result;
    int rank = out.rank();
    Func bcast = g.stage("bcast0");
    auto x = std::find_if(g.inputs.begin(), g.inputs.end(),
                          [&](const GroupInput &i) { return i.value == g.node->inputs[0]; });
    if (g.nodes.size() != 1 || g.node->op_type != "Expand" || g.outputs.size() != 1 || rank < 3 ||
        !bcast.defined() || x == g.inputs.end())
        return false;
    Shape in;
    for (const alg::Stage &st : g.op.stages)
        if (st.func.name() == bcast.name())
            in = st.broadcast_from;
    int64_t outer = out.shape[0], row = shape_numel(out.shape) / outer;
    if (in.size() != out.shape.size() || in[0] != outer ||
        std::min<int64_t>(outer, L.partitions) <=
            std::min<int64_t>(out.shape[rank - 2], L.partitions) ||
        row * dtype_size(out.dtype) > L.layout_budget / 2)
        return false;
    Func f = g.outputs[0].func;
    TileLoop tile;
    if (outer > L.partitions) {
        Var po("po"), pi("pi");
        f.split(var(rank - 1), po, pi, static_cast<int>(L.partitions));
        tile = {false, Halide::LoopLevel(f, po)};
    }
    bcast.compute_inline(); // the copy reads x's tile with stride 0 along the repeated axes
    for (Func stage : {Func(out.func), x->staged}) {
        place(stage, tile, SBUF);
        g.partition_dim[stage.name()] = rank - 1;
    }
    return true;
}

// graph/GroupNorm's GroupNormRows (a normalisation in one group, unet-inference): per step of
// the outermost axis one tile of T rows (whole groups) on partitions with whole rows; every stage
// per tile, the two mixing accumulators in PSUM, the mixing matrix B staged once for all tiles.
// The normalised rows `y`, when the elementwise chain after them (the SiLU) reads them in the
// group, are inlined into it: one ACT instruction per tile then applies the row's scale and
// bias and the activation.
void schedule_group_norm_rows(Group &g) {
    TileLoop tile{false, Halide::LoopLevel(g.outputs[0].func, var(2))};
    Func y = g.stage("y", 0);
    bool y_is_output = std::any_of(g.outputs.begin(), g.outputs.end(), [&](const GroupOutput &o) {
        return o.result.func.name() == y.name();
    });
    for (const alg::Stage &s : g.op.stages) {
        if (s.func.name() == y.name() && !y_is_output) {
            Func(s.func).compute_inline();
            continue;
        }
        bool mixing = s.role == "mean_acc" || s.role == "var_acc";
        place(s.func, tile, mixing ? PSUM : SBUF);
        g.partition_dim[s.func.name()] = 1;
    }
    for (GroupInput &in : g.inputs) {
        place(in.staged, in.value == g.node->inputs.at(1) ? TileLoop() : tile, SBUF);
        g.partition_dim[in.staged.name()] = 1;
    }
}

// A Transpose of fp32 (or bf16, fp16) that swaps the last two axes and does not fit whole:
// copied HBM -> HBM, every element would be a DMA row of its own (at the small-row rate). The
// output is tiled [P, P]; per tile, x's block is loaded with its rows on partitions, transposed
// on the PE into PSUM (tp), copied to SBUF (out) and stored as P rows
// (../shared/reference/isel-prototype.md §5, "natural DMA + PE transpose").
bool schedule_pe_transpose(Group &g, const Limits &L) {
    Func tp = g.stage("tp"), out = g.stage("out");
    const alg::Tensor &t = g.outputs[0].result;
    int rank = t.rank();
    if (g.node->op_type != "Transpose" || !tp.defined() || g.outputs.size() != 1 || rank < 2 ||
        t.func.name() != out.name() ||
        (t.dtype != DType::Float32 && t.dtype != DType::BFloat16 && t.dtype != DType::Float16))
        return false;
    std::vector<int64_t> perm = g.node->transpose_perm(rank);
    if (perm[rank - 1] != rank - 2 || perm[rank - 2] != rank - 1 || t.shape[rank - 1] < 2 ||
        t.shape[rank - 2] < 2)
        return false;
    Func final0 = g.outputs[0].func;
    Var co("v0o"), ro("v1o"), ci("v0i"), ri("v1i");
    final0.tile(var(0), var(1), co, ro, ci, ri,
                static_cast<int>(std::min<int64_t>(t.shape[rank - 1], L.partitions)),
                static_cast<int>(std::min<int64_t>(t.shape[rank - 2], L.partitions)));
    TileLoop tile{false, Halide::LoopLevel(final0, co)};
    place(out, tile, SBUF);
    place(tp, tile, PSUM);
    place(g.inputs[0].staged, tile, SBUF);
    for (const Func &f : {out, tp, g.inputs[0].staged})
        g.partition_dim[f.name()] = 1;
    return true;
}

// A layout output too large to stage whole, whose rows are runs of its input (a Slice, a Split,
// a Transpose that keeps the last axis): staged per tile of P rows (and chunks of columns when
// a row exceeds a sixth of the SBUF), so that its loads and stores have an SBUF side and spread
// over the DMA engines by partition; an HBM -> HBM copy runs on one engine (target dma_split)
// and, when its rows are not runs of the output (Slice of [.., 90, 128] rows), moves one element
// per descriptor row. Rank-1 outputs and short tiles stay HBM -> HBM copies; rows whose input
// runs are single elements (a Transpose that moves the last axis) still move one element per
// row, but over all the engines.
void stage_layout_tiles(Group &g, GroupOutput &o, const Limits &L) {
    const alg::Tensor &t = o.result;
    int rank = t.rank();
    // Tiles that fill less than half the partitions (ViT's [197, 1, 768] in_proj slice: one
    // row each) would load and store row by row, where one HBM -> HBM copy moves the rows in a
    // few DMAs (SelectTransfers' split of such copies).
    if (rank < 2 || t.shape[rank - 1] < 2 || t.shape[rank - 2] < L.partitions / 2)
        return;
    int64_t width = t.shape[rank - 1], elem_bytes = t.func.output_types()[0].bytes();
    TileLoop tile;
    if (width * elem_bytes > L.layout_budget / 2)
        tile = tile_output_columns(
            o.func, t.shape,
            balanced_tile(width, static_cast<int>(L.layout_budget / 2 / elem_bytes)), L);
    else
        tile = tile_elementwise_output(o.func, t.shape, L);
    if (tile.root)
        return; // one tile: whole, which did not fit
    Func stage = t.func;
    place(stage, tile, SBUF);
    g.partition_dim[stage.name()] = 1;
}

// A layout group small enough is staged whole in SBUF: loaded with the longest dim on partitions
// and stored back, so both DMAs have an SBUF side (spread over the DMA engines by partition,
// target DmaParams::partitions_per_engine) instead of one HBM -> HBM copy.

void schedule_layout(Group &g, const Limits &L) {
    for (GroupOutput &o : g.outputs) {
        const alg::Tensor &t = o.result;
        int rank = t.rank();
        int pd = -1; // the Halide dim on partitions: the longest that fits, dim 0 stays free
        for (int d = 1; d < rank; d++) {
            int64_t e = t.shape[rank - 1 - d];
            if (e <= L.partitions && (pd < 0 || e > t.shape[rank - 1 - pd]))
                pd = d;
        }
        int64_t bytes = shape_numel(t.shape) * t.func.output_types()[0].bytes();
        if (pd < 0 || bytes / t.shape[rank - 1 - pd] > L.layout_budget) {
            if (schedule_pe_transpose(g, L))
                return;
            stage_layout_tiles(g, o, L);
            continue;
        }
        Func stage = t.func;
        stage.compute_root().store_in(SBUF);
        g.partition_dim[stage.name()] = pd;
    }
}

// Fused attention (FormGroups): a group that ends in a MatMul of its own after the first node.
bool is_attention(const Group &g) {
    return g.nodes.size() > 1 && g.nodes.back()->op_type == "MatMul" &&
           g.stage("acc", static_cast<int>(g.nodes.size()) - 1).defined();
}

} // namespace

bool row_reduction_joins_matmul(int64_t row_elems, const target::TargetInfo &target) {
    Limits L = limits_of(target);
    return row_elems <= L.moving_free || whole_row_epilogue_fits(row_elems, L);
}

bool softmax_rows_join_matmul(int64_t row_elems, const target::TargetInfo &target) {
    Limits L = limits_of(target);
    const int64_t row_tile_bytes = 4 * row_elems * int64_t(sizeof(float));
    return row_elems <= L.moving_free || 2 * row_tile_bytes <= L.sbuf_capacity / 2;
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

/** The busiest DMA engine's time staging `blocks` copies of `channels` partitions of `bytes`
 *  each in rows of `row_bytes`, the copies `stride` partitions apart (target::dma_split per
 *  copy: a few channels' block lands on one engine). */
double staged_ns(const target::TargetInfo &t, int64_t blocks, int64_t stride, int64_t channels,
                 int64_t bytes, int64_t row_bytes) {
    std::map<int, target::DmaShare> by_engine;
    for (int64_t b = 0; b < blocks; b++) {
        target::DmaQuery q;
        q.bytes = q.hbm_bytes = channels * bytes;
        q.chunks = channels * ceil_div(bytes, row_bytes);
        q.partitions = static_cast<int>(channels);
        q.first_partition = static_cast<int>(b * stride);
        for (const target::DmaShare &s : target::dma_split(t, q)) {
            target::DmaShare &e = by_engine[s.engine];
            e.bytes += s.bytes;
            e.hbm_bytes += s.hbm_bytes;
            e.chunks += s.chunks;
        }
    }
    double ns = 0;
    for (const auto &[engine, share] : by_engine)
        ns = std::max(ns, target::dma_engine_ns(t, share, static_cast<int>(by_engine.size())));
    return ns;
}

/** ConvLimits::rows_pack_pays: the PE time of the matmuls packing saves (each a full tile's)
 *  above the extra time of staging the packed image. */
bool rows_pack_pays(const target::TargetInfo &t, const Limits &L, bool fp32, const RowPacking &p) {
    target::CostQuery mm;
    mm.kind = target::CostQuery::Kind::Matmul;
    mm.engine = target::EngineKind::PE;
    mm.n = std::min<int64_t>(p.output_columns, L.moving_free);
    mm.partitions = static_cast<int>(std::min<int64_t>(p.channels, L.partitions));
    mm.stationary_free = std::min<int64_t>(p.output_channels, L.partitions);
    mm.fp32_matmul = fp32;
    int64_t tiles =
        ceil_div(p.output_channels, L.partitions) * ceil_div(p.output_columns, L.moving_free);
    double saved_ns = double(p.taps_saved * tiles) * target::compute_ns(t, mm);
    return saved_ns >
           staged_ns(t, p.kernel_rows, p.block, p.channels, p.packed_bytes, p.row_bytes) -
               staged_ns(t, 1, p.channels, p.channels, p.unpacked_bytes, p.row_bytes);
}

} // namespace

ConvLimits conv_limits(const target::TargetInfo &target, std::optional<DType> pack_rows_operand) {
    Limits L = limits_of(target);
    ConvLimits limits{L.partitions,
                      staged_image_budget(L),
                      L.resident_budget,
                      target.dma.partitions_per_engine,
                      {}};
    if (pack_rows_operand) {
        bool fp32 = *pack_rows_operand == DType::Float32; // tf32 at the bf16 rate (nc.md:L80)
        limits.rows_pack_pays = [target, L, fp32](const RowPacking &p) {
            return rows_pack_pays(target, L, fp32, p);
        };
    }
    return limits;
}

int64_t norm_row_elems(const target::TargetInfo &target) {
    Limits L = limits_of(target);
    int64_t elems = 1;
    while (whole_row_epilogue_fits(2 * elems, L))
        elems *= 2;
    return elems;
}

int64_t whole_row_elems(const target::TargetInfo &target) {
    const int64_t rows_per_tile = 4, fp32_bytes = 4; // x, two intermediates, the output
    return limits_of(target).resident_budget / (rows_per_tile * fp32_bytes);
}

Family schedule_family(const std::string &op_type) {
    if (op_type == "ConvTaps" || op_type == "PoolTaps")
        return Family::Conv;
    if (op_type == "MatMul" || op_type == "Gemm" || op_type == "Gather")
        return Family::Matmul; // Gather of table rows is a one-hot contraction (Matmul.cpp)
    if (op_type == "Transpose" || op_type == "Split" || op_type == "Slice")
        return Family::Layout;
    return Family::Compute;
}

bool takes_matmul_plan(const Group &g) {
    return schedule_family(g.node->op_type) == Family::Matmul && !g.stage("gathered").defined() &&
           !is_attention(g) && g.stage("acc").defined();
}

bool takes_image_plan(const Group &g) {
    return image_rows_padded(g);
}

bool takes_attention_plan(const Group &g) {
    return schedule_family(g.node->op_type) == Family::Matmul && !g.stage("gathered").defined() &&
           is_attention(g);
}

namespace {

/** The calls to `name` in `reader`'s definitions. */
int calls_to(const Func &reader, const std::string &name) {
    struct Counter : Halide::Internal::IRVisitor {
        const std::string &name;
        int calls = 0;
        explicit Counter(const std::string &n) : name(n) {}
        using IRVisitor::visit;
        void visit(const Halide::Internal::Call *c) override {
            calls += c->call_type == Halide::Internal::Call::Halide && c->name == name;
            IRVisitor::visit(c);
        }
    } counter(name);
    Halide::Internal::Function fn = reader.function();
    for (const Halide::Expr &e : fn.definition().values())
        e.accept(&counter);
    for (const auto &u : fn.updates())
        for (const Halide::Expr &e : u.values())
            e.accept(&counter);
    return counter.calls;
}

/** Whether `reader` is `name` times or over a constant: one instruction with the scale folded
 *  in (ACT's scale, a tensor_scalar), reading `name`'s operands where it reads them. */
bool scales_by_constant(const Func &reader, const std::string &name) {
    using namespace Halide::Internal;
    const std::vector<Halide::Expr> &values = reader.function().definition().values();
    if (values.size() != 1)
        return false;
    Halide::Expr e = values[0];
    while (const Cast *c = e.as<Cast>())
        e = c->value;
    Halide::Expr a, b;
    if (const Mul *m = e.as<Mul>())
        a = m->a, b = m->b;
    else if (const Div *d = e.as<Div>())
        a = d->a, b = d->b;
    else
        return false;
    while (const Cast *c = a.as<Cast>())
        a = c->value;
    const Call *x = a.as<Call>();
    return x && x->name == name && is_const(b);
}

/** Computes inline, into the activation that reads it, a value of the group that only that
 *  activation reads, once: the activation's instruction then reads what the value reads (an
 *  accumulator in PSUM and a [P,1] bias), one pass where a copy with the bias and the activation
 *  were two (ACT computes func(in * scale + bias), neuroncore.md L172-175; a ReLU on DVE is
 *  one tensor_scalar of two ops, neff/SelectCompute's relu). Only fp32 values: selection drops
 *  casts, so a value rounded on its store keeps its tile. */
void inline_into_activations(Group &g) {
    // One ACT function of their input each (algorithms/Elementwise.cpp); Clip a max and a min;
    // Mul and Div by a constant (attention's scores over sqrt(d)).
    static const std::set<std::string> activations = {"Relu",  "Clip", "Sigmoid", "Tanh", "Gelu",
                                                      "Swish", "Erf",  "Mul",     "Div"};
    std::set<std::string> group_outputs;
    for (const GroupOutput &o : g.outputs)
        group_outputs.insert(o.value);
    for (const Node *act : g.nodes) {
        // A causal mask too: the scores leave PSUM straight into its tile, and GpSimd selects
        // only in the tiles the diagonal crosses (neff/SelectCompute, affine_select).
        if ((!activations.count(act->op_type) && !is_triangular_where(*act)) ||
            act->inputs.empty() || act->outputs.empty())
            continue;
        const std::string &v = act->inputs[0];
        auto value = g.values.find(v), result = g.values.find(act->outputs[0]);
        if (value == g.values.end() || result == g.values.end() ||
            value->second.dtype != DType::Float32 || group_outputs.count(v))
            continue;
        bool other_readers = false;
        for (const Node *n : g.nodes)
            other_readers |= n != act && std::count(n->inputs.begin(), n->inputs.end(), v) > 0;
        Func f = value->second.func;
        auto stage = std::find_if(g.op.stages.begin(), g.op.stages.end(),
                                  [&](const alg::Stage &st) { return st.func.name() == f.name(); });
        if (other_readers || stage == g.op.stages.end() || stage->stored_as ||
            is_operand_role(stage->role) || stage->role == "acc" || f.has_update_definition() ||
            g.buffers.count(f.name()) || g.resident.count(f.name()) ||
            calls_to(result->second.func, f.name()) != 1 ||
            ((act->op_type == "Mul" || act->op_type == "Div") &&
             !scales_by_constant(result->second.func, f.name())))
            continue;
        // Inline, it has no tile: the memory type place() gave it would only show in the
        // schedule --dump-schedules writes.
        f.compute_inline().store_in(Halide::MemoryType::Auto);
    }
}

} // namespace

void apply_default_schedule(Group &g, const target::TargetInfo &target, const SchedulePlan &plan) {
    Limits L = limits_of(target);
    std::set<std::string> folded = fold_broadcast_stages(g, L.partitions, L.broadcast_budget);
    switch (schedule_family(g.node->op_type)) {
    case Family::Matmul:
        // A Gather of table rows is an indirect DMA per tile of indices (Gather.cpp); one that
        // is neither that nor one row has no contraction: a data-movement group.
        if (g.stage("gathered").defined()) {
            schedule_compute(g, L);
            g.stage("out").compute_inline(); // the store reads the gathered rows
        } else if (is_attention(g))
            schedule_attention(g, static_cast<int>(g.nodes.size()) - 1, L, plan.attention);
        else if (g.stage("acc").defined())
            schedule_matmul(g, L, plan.matmul);
        else
            schedule_layout(g, L);
        break;
    case Family::Conv:
        if (g.node->op_type == "PoolTaps")
            schedule_pool(g, L, plan.image);
        else
            schedule_conv(g, L, plan.image);
        break;
    case Family::Layout:
        schedule_layout(g, L);
        break;
    case Family::Compute:
        if (is_group_norm_rows(*g.node)) {
            schedule_group_norm_rows(g);
            break;
        }
        if (folded.empty() && schedule_outer_partitions(g, L))
            break;
        schedule_compute(g, L);
        break;
    }
    // Broadcasts folded to one tile of partitions are built once, before the tiles that read them.
    for (const alg::Stage &st : g.op.stages)
        if (folded.count(st.func.name())) {
            Func f = st.func;
            f.compute_root().store_in(SBUF);
            g.partition_dim[f.name()] = 1;
        }
    if (plan.matmul.staging_buffers > 0 && takes_matmul_plan(g))
        for (const char *role : {"a_nat", "lhs_t", "out"})
            if (Func f = g.stage(role, 0); f.defined())
                g.buffers[f.name()] = plan.matmul.staging_buffers;
    // The tiles each output is stored from stay for its readers (an output computed inline
    // into its store has none, and nothing stays).
    if (plan.output_resident)
        for (const GroupOutput &o : g.outputs)
            g.resident.insert(o.result.func.name());
    g.pe_critical_path = plan.pe_critical_path;
    inline_into_activations(g);
}

} // namespace nhc::sched
