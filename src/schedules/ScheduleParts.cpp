#include "schedules/ScheduleParts.h"

#include "graph/SkipMaskedKeys.h"
#include "schedules/MemoryTypes.h"
#include "support/Error.h"

namespace nhc::sched::detail {

using Halide::Func;
using Halide::Var;

// Budgets are fractions of the usable SBUF, leaving room for per-tile stages and their second
// buffers (a scheduling choice; the code generator checks the real capacity).
Limits limits_of(const target::TargetInfo &t) {
    return {t.partitions,
            t.matmul_max_moving,
            t.sbuf_usable_per_partition / 2,
            t.sbuf_usable_per_partition / 3,
            t.sbuf_usable_per_partition / 8,
            t.sbuf_usable_per_partition / 8,
            t.dma.small_row_bytes,
            t.sbuf_usable_per_partition};
}

int64_t staged_image_budget(const Limits &L) {
    return L.layout_budget / 2;
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

Halide::TailStrategy rows_tail(int64_t rows, int tile) {
    return rows % tile ? Halide::TailStrategy::GuardWithIf : Halide::TailStrategy::Auto;
}

Halide::TailStrategy keys_tail(const Group &g) {
    for (const Node *n : g.nodes)
        if (n->has_attr(kKeysUpToDiagonal))
            return Halide::TailStrategy::GuardWithIf;
    return Halide::TailStrategy::Auto;
}

Halide::Func &split_rows(Halide::Func &f, const Halide::Var &v, const Halide::Var &outer,
                         const Halide::Var &inner, int64_t rows, int limit) {
    int tile = balanced_tile(rows, limit);
    return f.split(v, outer, inner, tile, rows_tail(rows, tile));
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
    return is_operand_role(role) || role == "bias" || role == "gathered" || role == "x_pad" ||
           role == "x_in" || role == "w_t" || role == "gamma_b" || role == "beta_b" ||
           role.rfind("bcast", 0) == 0;
}

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
        split_rows(f, var(1), vo, vi, rows, L.partitions);
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
void declare_layout(Group &g, const Func &f, int out_rank, int out_partition_dim) {
    int rank = f.dimensions();
    int pd = 0;
    if (rank >= 2 && rank == out_rank)
        pd = out_partition_dim;
    else if (rank >= 2 && rank != out_rank - 1)
        user_error("NHC_ESCH001", "stage '", f.name(), "' of ", g.node->describe(), " has rank ",
                   rank, " in a group of rank ", out_rank,
                   "; only reductions over the last axis are scheduled yet");
    g.partition_dim[f.name()] = pd;
}

// Inputs that a compute stage reads are staged in SBUF per tile; inputs that only staging stages
// (DMA copies: transposes, broadcasts) read stay inlined, so those stages read HBM directly.
void stage_inputs(Group &g, const TileLoop &tile, int out_partition_dim) {
    std::set<std::string> read_by_compute;
    for (const alg::Stage &s : g.op.stages)
        if (!is_staging_role(s.role))
            for (const std::string &n : direct_calls(s.func))
                read_by_compute.insert(n);
    int out_rank = static_cast<int>(g.outputs[0].result.shape.size());
    for (GroupInput &in : g.inputs)
        if (read_by_compute.count(in.staged.name())) {
            place(in.staged, tile, SBUF);
            declare_layout(g, in.staged, out_rank, out_partition_dim);
        }
}

} // namespace nhc::sched::detail
