#include "schedules/DefaultSchedule.h"

#include "graph/FlattenElementwise.h"
#include "schedules/FoldBroadcasts.h"
#include "schedules/MemoryTypes.h"
#include "support/Error.h"

#include <set>

namespace nhc::sched {

namespace {

using Halide::Func;
using Halide::Var;

/** What the schedules size their tiles and budgets by, all from the target (src/target). */
struct Limits {
    int partitions;           ///< partitions of an on-chip tile (and K, M of a matmul)
    int moving_free;          ///< matmul moving free size N (one PSUM bank of fp32)
    int64_t resident_budget;  ///< SBUF bytes per partition a resident operand may take
    int64_t layout_budget;    ///< SBUF bytes per partition a staged layout group may take
    int64_t broadcast_budget; ///< SBUF bytes per partition one broadcast built once may take
};

// Budgets are fractions of the usable SBUF, leaving room for per-tile stages and their second
// buffers (a scheduling choice; the code generator checks the real capacity).
Limits limits_of(const target::TargetInfo &t) {
    return {t.partitions, t.matmul_max_moving, t.sbuf_usable_per_partition / 2,
            t.sbuf_usable_per_partition / 3, t.sbuf_usable_per_partition / 8};
}

Var var(int i) {
    return Var("v" + std::to_string(i));
}

/** Names of the Funcs a Func's definitions call directly. */
std::set<std::string> direct_calls(const Func &f) {
    struct Finder : Halide::Internal::IRVisitor {
        std::set<std::string> names;
        using IRVisitor::visit;
        void visit(const Halide::Internal::Call *c) override {
            if (c->call_type == Halide::Internal::Call::Halide)
                names.insert(c->name);
            IRVisitor::visit(c);
        }
    } finder;
    Halide::Internal::Function fn = f.function();
    for (const Halide::Expr &e : fn.definition().values())
        e.accept(&finder);
    for (const auto &u : fn.updates()) {
        for (const Halide::Expr &e : u.values())
            e.accept(&finder);
        for (const Halide::Expr &e : u.args())
            e.accept(&finder);
    }
    return finder.names;
}

/** Largest divisor of n that is at most limit (a split inside an instruction must divide). */
int divisor_at_most(int64_t n, int limit) {
    for (int d = std::min<int64_t>(n, limit); d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

/** The tile size that covers n in the fewest tiles of at most `limit`, all of one size: 768 in
 *  two tiles of 384 rather than 512 and a last tile shifted inwards over 256 elements the first
 *  already covered (computed, and stored, twice). */
int balanced_tile(int64_t n, int limit) {
    int64_t tiles = (n + limit - 1) / limit;
    return static_cast<int>((n + tiles - 1) / tiles);
}

// Staging roles are copies from HBM: they become DMAs, so the inputs they read stay in HBM.
// The matmul's operand chain (views, natural loads, transposes, staged operands): placed by the
// matmul schedule itself, or inlined.
bool is_operand_role(const std::string &role) {
    return role == "ids_b" || role == "a_view" || role == "b_view" || role == "a_nat" ||
           role == "a_tp" || role == "lhs_t" || role == "b_nat" || role == "b_tp" || role == "rhs";
}

/** Whether matmul operand i (0 = A, 1 = B) is stored with its contraction axis innermost. */
bool k_innermost(const Node &n, int i) {
    auto it = n.input_perm.find(i);
    if (it != n.input_perm.end()) {
        const std::vector<int64_t> &perm = it->second;
        int rank = static_cast<int>(perm.size());
        int k_axis = i == 0 ? rank - 1 : rank - 2; // K of A is its last axis, of B its second-last
        return k_axis >= 0 && perm[k_axis] == rank - 1;
    }
    if (n.op_type == "Gemm")
        return i == 0 ? n.attr_int("transA", 0) == 0 : n.attr_int("transB", 0) != 0;
    if (n.op_type == "Gather")
        return false; // the one-hot operand is computed on chip, the table read by rows
    return i == 0;    // MatMul: A [.., M, K] has K innermost, B [.., K, N] does not
}

bool is_staging_role(const std::string &role) {
    return is_operand_role(role) || role == "bias" || role == "gamma_b" || role == "beta_b" ||
           role.rfind("bcast", 0) == 0;
}

/** Where per-tile stages are computed: a loop of `f`, or root. */
struct TileLoop {
    bool root = true;
    Halide::LoopLevel level = Halide::LoopLevel::root();
};

TileLoop tile_elementwise_output(Func f, const Shape &shape, const Limits &L) {
    int rank = static_cast<int>(shape.size());
    TileLoop t;
    if (rank < 2) {
        if (rank == 1 && shape[0] > L.partitions)
            user_error("NHC_ESCH001", "stage '", f.name(), "' is a 1-D tensor of ", shape[0],
                       " elements; 1-D tensors over ", L.partitions,
                       " elements are not scheduled yet");
        return t;
    }
    int64_t rows = shape[rank - 2];
    if (rows > L.partitions) {
        Var vo("v1o"), vi("v1i");
        f.split(var(1), vo, vi, L.partitions); // ShiftInwards: the last tile overlaps
        t.root = false;
        t.level = Halide::LoopLevel(f, vo);
    } else if (rank >= 3) {
        t.root = false;
        t.level = Halide::LoopLevel(f, var(2));
    }
    return t;
}

void place(Func f, const TileLoop &t, Halide::MemoryType m) {
    if (t.root)
        f.compute_root();
    else
        f.compute_at(t.level);
    f.store_in(m);
}

/** Declares which dim of `f` is on partitions: the one that matches the output tile's partition
 *  axis (Halide dim 1, the second-to-last ONNX axis). A stage of one rank less is a reduction
 *  over the last axis, whose dim 0 is that axis; rank <= 1 stages use dim 0. */
void declare_layout(Group &g, const Func &f, int out_rank) {
    int rank = f.dimensions();
    int pd = 0;
    if (rank >= 2 && rank == out_rank)
        pd = 1;
    else if (rank >= 2 && rank != out_rank - 1)
        user_error("NHC_ESCH001", "stage '", f.name(), "' of ", g.node->describe(), " has rank ",
                   rank, " in a group of rank ", out_rank,
                   "; only reductions over the last axis are scheduled yet");
    g.partition_dim[f.name()] = pd;
}

// Inputs that a compute stage reads are staged in SBUF per tile; inputs that only staging stages
// (DMA copies: transposes, broadcasts) read stay inlined, so those stages read HBM directly.
void stage_inputs(Group &g, const TileLoop &tile) {
    std::set<std::string> read_by_compute;
    for (const alg::Stage &s : g.op.stages)
        if (!is_staging_role(s.role))
            for (const std::string &n : direct_calls(s.func))
                read_by_compute.insert(n);
    int out_rank = static_cast<int>(g.outputs[0].result.shape.size());
    for (GroupInput &in : g.inputs)
        if (read_by_compute.count(in.staged.name())) {
            place(in.staged, tile, SBUF);
            declare_layout(g, in.staged, out_rank);
        }
}

void schedule_compute(Group &g, const Limits &L) {
    // With several outputs (LayerNormalization's Mean and InvStdDev) the stages serve all of
    // them, so they are computed once, at root.
    TileLoop tile;
    if (g.outputs.size() == 1)
        tile = tile_elementwise_output(g.outputs[0].func, g.outputs[0].result.shape, L);
    int out_rank = static_cast<int>(g.outputs[0].result.shape.size());
    for (const alg::Stage &s : g.op.stages) {
        place(s.func, tile, SBUF);
        declare_layout(g, s.func, out_rank);
    }
    stage_inputs(g, tile);
}

/** The matmul schedule with operand reuse, for a 2-D output whose B is stored with K outer:
 *  B is staged once, whole, with K split into chunks of <= 128 partitions; A is staged once per
 *  row tile of M (loaded naturally and transposed chunk by chunk on the PE when its K is
 *  innermost); the accumulator runs per 128 x 512 output tile over the K chunks. Each operand
 *  crosses HBM once (A once per row tile), instead of once per output tile and K chunk.
 *  Returns false, having changed nothing, when the shapes do not fit it. */
bool schedule_matmul_resident(Group &g, int64_t k_chunk, const Limits &L) {
    const Shape &s = g.outputs[0].result.shape;
    if (s.size() != 2 || k_innermost(*g.node, 1) || g.node->op_type == "Gather")
        return false;
    int64_t m = s[0], n = s[1];
    Func acc = g.stage("acc"), lhs = g.stage("lhs_t"), rhs = g.stage("rhs");
    const Halide::Internal::ReductionVariable &rv = acc.function().update(0).schedule().rvars()[0];
    int64_t k = *Halide::Internal::as_const_int(rv.extent);
    int64_t op_bytes = rhs.output_types()[0].bytes();
    int64_t tm = balanced_tile(m, L.partitions), tn = balanced_tile(n, L.moving_free);
    if (k <= k_chunk || (k / k_chunk) * n * op_bytes > L.resident_budget ||
        2 * k * op_bytes + (k / k_chunk) * tm * op_bytes > L.resident_budget / 2)
        return false;
    Func f = g.outputs[0].func;
    Var no("no"), mo("mo"), ni("ni"), mi("mi"), kco("kco"), kci("kci");
    f.tile(var(0), var(1), no, mo, ni, mi, static_cast<int>(tn), static_cast<int>(tm));
    // B, whole, K chunks on partitions.
    // One DMA per K chunk (unrolled), so that the first matmuls start after the first chunk.
    rhs.compute_root()
        .store_in(SBUF)
        .split(var(1), kco, kci, static_cast<int>(k_chunk))
        .unroll(kco);
    g.partition_dim[rhs.name()] = 1;
    g.partition_split[rhs.name()] = k_chunk;
    // A, per row tile, K chunks on partitions.
    lhs.compute_at(f, mo).store_in(SBUF).split(var(1), kco, kci, static_cast<int>(k_chunk));
    g.partition_dim[lhs.name()] = 1;
    g.partition_split[lhs.name()] = k_chunk;
    if (k_innermost(*g.node, 0)) {
        g.stage("a_nat").compute_at(f, mo).store_in(SBUF);
        g.stage("a_tp").compute_at(lhs, kco).store_in(PSUM);
        g.partition_dim[g.stage("a_nat").name()] = 1;
        g.partition_dim[g.stage("a_tp").name()] = 1;
    }
    acc.compute_at(f, no).store_in(PSUM);
    Halide::RVar ko("ko"), ki("ki");
    acc.update().split(Halide::RVar(rv.var), ko, ki, static_cast<int>(k_chunk));
    acc.update().reorder(ki, var(0), var(1), ko);
    g.partition_dim[acc.name()] = 1;
    TileLoop tile{false, Halide::LoopLevel(f, no)};
    for (const alg::Stage &st : g.op.stages)
        if (!is_operand_role(st.role) && st.role != "acc") {
            place(st.func, tile, SBUF); // the epilogue: bias, cast and fused elementwise nodes
            declare_layout(g, st.func, 2);
        }
    stage_inputs(g, tile);
    return true;
}

/** A batched matmul whose every (head) item is one output tile and one K chunk, as attention's
 *  score and context products are: the operands that DMA loads (`from_hbm`) are staged once per
 *  item of the outermost batch axis, all inner items (heads) in one transfer, instead of one small
 *  transfer per item. For Q of [batch, seq, heads * 64] read per head that turns 12 transfers of
 *  128-byte rows into one of 1,536-byte rows (the DMA cost by row size: neuroncore.md
 *  L255-259). */
void stage_operands_per_batch(Group &g, Func f, int64_t k, const std::vector<Func> &from_hbm,
                              const Limits &L) {
    const Shape &s = g.outputs[0].result.shape;
    int rank = static_cast<int>(s.size());
    if (rank < 3 || k > L.partitions || s[rank - 2] > L.partitions || s[rank - 1] > L.moving_free ||
        g.node->op_type == "Gather")
        return;
    int64_t items = 1; // inner batch items under one outer one
    for (int d = 1; d < rank - 2; d++)
        items *= s[d];
    // Per partition, each operand holds a row of at most max(K, N, P) elements per inner item.
    int64_t row = std::max<int64_t>({k, s[rank - 1], L.partitions});
    int64_t bytes = 0;
    for (const Func &op : from_hbm)
        bytes += items * row * op.output_types()[0].bytes();
    if (bytes > L.layout_budget / 2)
        return;
    for (Func op : from_hbm)
        op.compute_at(Halide::LoopLevel(f, var(rank - 1)));
}

/** The extent of a matmul accumulator's reduction (K). */
int64_t contraction_extent(const Func &acc) {
    const Halide::Internal::ReductionVariable &rv = acc.function().update(0).schedule().rvars()[0];
    const int64_t *k = Halide::Internal::as_const_int(rv.extent);
    nhc_assert(k, "matmul reduction extent is not constant");
    return *k;
}

/** Places one matmul node's accumulator (PSUM, per output tile, K in chunks that divide it) and
 *  operand chain (per K chunk). Returns the operands that come from HBM by DMA. */
std::vector<Func> place_matmul(Group &g, int node_index, const Node &node, const TileLoop &tile,
                               const Limits &L) {
    Func acc = g.stage("acc", node_index), lhs = g.stage("lhs_t", node_index),
         rhs = g.stage("rhs", node_index);
    nhc_assert(acc.defined() && lhs.defined() && rhs.defined(), "matmul stages missing");
    acc.store_in(PSUM);
    if (tile.root)
        acc.compute_root();
    else
        acc.compute_at(tile.level);
    // The reduction: K in chunks that divide it (a tail would break the instruction nest).
    Halide::RVar rk(acc.function().update(0).schedule().rvars()[0].var), ko("ko"), ki("ki");
    acc.update().split(rk, ko, ki, divisor_at_most(contraction_extent(acc), L.partitions));
    acc.update().reorder(ki, var(0), var(1), ko);
    lhs.compute_at(acc, ko).store_in(SBUF);
    rhs.compute_at(acc, ko).store_in(SBUF);
    if (Func ids_b = g.stage("ids_b", node_index); ids_b.defined()) // Gather: broadcast indices
        ids_b.compute_at(acc, ko).store_in(SBUF);
    // An operand stored with K innermost would need one DMA descriptor row per element to land K
    // on partitions; it is loaded naturally and transposed on the PE instead
    // (../shared/reference/isel-prototype.md §5, "natural DMA + PE transpose").
    std::vector<Func> loaded = {lhs, rhs};
    const char *nat[] = {"a_nat", "b_nat"}, *tp[] = {"a_tp", "b_tp"};
    for (int i = 0; i < 2; i++)
        if (k_innermost(node, i)) {
            loaded[i] = g.stage(nat[i], node_index);
            loaded[i].compute_at(acc, ko).store_in(SBUF);
            g.stage(tp[i], node_index).compute_at(acc, ko).store_in(PSUM);
        }
    return loaded;
}

/** Output tiles of up to P rows x one PSUM bank; the loop level of one tile. */
TileLoop tile_matmul_output(Func f, const Shape &s, const Limits &L) {
    int rank = static_cast<int>(s.size());
    if (rank < 2)
        return {};
    Var no("no"), mo("mo"), ni("ni"), mi("mi");
    f.tile(var(0), var(1), no, mo, ni, mi, balanced_tile(s[rank - 1], L.moving_free),
           balanced_tile(s[rank - 2], L.partitions));
    return {false, Halide::LoopLevel(f, no)};
}

/** Every stage that is neither an operand nor an accumulator (bias, casts, fused elementwise
 *  and row-reduction nodes) is computed per output tile in SBUF. */
void place_epilogue(Group &g, const TileLoop &tile, int rank) {
    for (const alg::Stage &st : g.op.stages) {
        if (!is_operand_role(st.role) && st.role != "acc") {
            place(st.func, tile, SBUF);
            declare_layout(g, st.func, rank);
        } else {
            g.partition_dim[st.func.name()] = st.func.dimensions() >= 2 ? 1 : 0; // M, or K
        }
    }
    stage_inputs(g, tile);
}

void schedule_matmul(Group &g, const Limits &L) {
    int64_t k = contraction_extent(g.stage("acc"));
    if (schedule_matmul_resident(g, divisor_at_most(k, L.partitions), L))
        return;
    const Shape &s = g.outputs[0].result.shape;
    Func f = g.outputs[0].func;
    TileLoop tile = tile_matmul_output(f, s, L);
    std::vector<Func> loaded = place_matmul(g, 0, *g.node, tile, L);
    stage_operands_per_batch(g, f, k, loaded, L);
    place_epilogue(g, tile, static_cast<int>(s.size()));
}

/** Fused attention (Codegen's closes_attention): scores MatMul, its epilogue and Softmax, then
 *  the context MatMul P·V, one output tile per head. Both products, the softmax and P's
 *  transpose run per head on chip; Q, K and V are staged once per batch item. */
void schedule_attention(Group &g, int context_node, const Limits &L) {
    const Shape &s = g.outputs[0].result.shape;
    Func f = g.outputs[0].func;
    TileLoop tile = tile_matmul_output(f, s, L);
    std::vector<Func> qk = place_matmul(g, 0, *g.nodes[0], tile, L);
    std::vector<Func> pv = place_matmul(g, context_node, *g.nodes[context_node], tile, L);
    stage_operands_per_batch(g, f, contraction_extent(g.stage("acc", 0)), qk, L);
    // P (the context product's A) is computed on chip; only V comes from HBM.
    stage_operands_per_batch(g, f, contraction_extent(g.stage("acc", context_node)), {pv[1]}, L);
    place_epilogue(g, tile, static_cast<int>(s.size()));
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
        if (pd < 0 || bytes / t.shape[rank - 1 - pd] > L.layout_budget)
            continue; // stays inlined: one HBM -> HBM copy
        Func stage = t.func;
        stage.compute_root().store_in(SBUF);
        g.partition_dim[stage.name()] = pd;
    }
}

} // namespace

Family schedule_family(const std::string &op_type) {
    if (op_type == "MatMul" || op_type == "Gemm" || op_type == "Gather")
        return Family::Matmul; // Gather of table rows is a one-hot contraction (Matmul.cpp)
    if (op_type == "Transpose" || op_type == "Split")
        return Family::Layout;
    return Family::Compute;
}

void apply_default_schedule(Group &g, const target::TargetInfo &target) {
    Limits L = limits_of(target);
    std::set<std::string> folded = fold_broadcast_stages(g, L.partitions, L.broadcast_budget);
    switch (schedule_family(g.node->op_type)) {
    case Family::Matmul:
        // A Gather that is not of table rows has no contraction: a data-movement group.
        if (g.nodes.size() > 1 && g.nodes.back()->op_type == "MatMul" &&
            g.stage("acc", static_cast<int>(g.nodes.size()) - 1).defined())
            schedule_attention(g, static_cast<int>(g.nodes.size()) - 1, L);
        else if (g.stage("acc").defined())
            schedule_matmul(g, L);
        else
            schedule_layout(g, L);
        break;
    case Family::Layout:
        schedule_layout(g, L);
        break;
    case Family::Compute:
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
}

} // namespace nhc::sched
