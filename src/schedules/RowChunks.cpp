// Long rows (issue 15): a compute group (elementwise, Reduce*) whose tile of whole rows does not
// fit its SBUF budget is computed in chunks of columns, as a schedule:
//  - elementwise (no stage reduces): the output's last axis is split into balanced chunks, the
//    last shifted inwards, inside the row tiles; every stage is computed per chunk;
//  - row reductions (each row-wide stage is a staged input that one reduction's update alone
//    reads): the accumulator stays per row tile while its reduction loop is split into chunks,
//    the last guarded (GuardWithIf), and the input is staged per chunk, so the accumulator
//    accumulates across chunks.
// Other groups (a Softmax, whose exp is read by its sum and by its output) keep whole rows;
// graph/LongRows decomposes those into the two forms above before grouping.
// Assumes schedule_compute's layout: the last ONNX axis is Halide dim 0 and free, the
// second-to-last on partitions, and a reduction's accumulator has the kept axes only.

#include "schedules/ScheduleParts.h"

#include "support/Error.h"

#include <map>

namespace nhc::sched::detail {

namespace {

using Halide::Func;
using Halide::Var;

bool reduces(const Func &f) {
    return f.function().has_update_definition();
}

/** The width (elements of its last ONNX axis) a full-rank stage holds per partition: that of
 *  the output of the node whose algorithm made it (an elementwise node's broadcasts and
 *  intermediates have its output's shape; a reduction's accumulator has a lower rank). */
int64_t stage_width(const Group &g, size_t stage, int64_t widest) {
    const Node *node = g.nodes[static_cast<size_t>(g.stage_node[stage])];
    auto v = g.values.find(node->outputs[0]);
    return v == g.values.end() || v->second.shape.empty() ? widest : v->second.shape.back();
}

/** The group's widest row: its inputs' and outputs' last axes. */
int64_t widest_row(const Group &g) {
    int64_t w = 1;
    for (const GroupInput &in : g.inputs)
        if (!in.shape.empty())
            w = std::max(w, in.shape.back());
    for (const GroupOutput &o : g.outputs)
        if (!o.result.shape.empty())
            w = std::max(w, o.result.shape.back());
    return w;
}

/** Bytes per partition of one column of the group's row-wide stages and inputs, and of their
 *  whole rows. A stage of lower rank than the output (an accumulator) holds one element, and
 *  its update a temporary row. */
struct RowBytes {
    int64_t per_column = 0, whole = 0;
};
RowBytes row_bytes(const Group &g, int out_rank) {
    int64_t widest = widest_row(g);
    RowBytes r;
    auto add = [&](int64_t width, int bytes) {
        r.whole += width * bytes;
        if (width == widest)
            r.per_column += bytes;
    };
    for (size_t i = 0; i < g.op.stages.size(); i++) {
        const Func &f = g.op.stages[i].func;
        if (f.dimensions() == out_rank)
            add(stage_width(g, i, widest), f.output_types()[0].bytes());
        else if (reduces(f)) // its update may need a temporary row (ReduceSumSquare's square)
            add(widest, f.output_types()[0].bytes());
    }
    for (const GroupInput &in : g.inputs)
        if (static_cast<int>(in.shape.size()) == out_rank)
            add(in.shape.back(), in.staged.output_types()[0].bytes());
    return r;
}

/** Whether every row-wide input is read by one reduction's update alone, no stage but the
 *  group's inputs is row-wide, and each reduction has one reduction loop. */
bool reductions_chunkable(const Group &g, int out_rank, int64_t widest) {
    std::map<std::string, int> by_reductions, by_others; // staged input -> readers
    for (size_t i = 0; i < g.op.stages.size(); i++) {
        const alg::Stage &s = g.op.stages[i];
        if (s.func.dimensions() == out_rank && stage_width(g, i, widest) == widest)
            return false; // a row-wide computed stage: its readers would need it whole
        bool reduction = reduces(s.func);
        if (reduction && s.func.function().update(0).schedule().rvars().size() != 1)
            return false;
        for (const std::string &n : direct_calls(s.func))
            (reduction ? by_reductions : by_others)[n]++;
    }
    for (const GroupInput &in : g.inputs) {
        const std::string &n = in.staged.name();
        if (static_cast<int>(in.shape.size()) == out_rank && in.shape.back() == widest &&
            (by_reductions[n] != 1 || by_others[n] != 0))
            return false;
    }
    return true;
}

} // namespace

RowChunks plan_row_chunks(const Group &g, const Limits &L) {
    RowChunks plan;
    if (g.outputs.size() != 1 || g.outputs[0].result.shape.size() < 2)
        return plan;
    int out_rank = static_cast<int>(g.outputs[0].result.shape.size());
    RowBytes bytes = row_bytes(g, out_rank);
    // Whole rows while they take at most half the SBUF (what the default schedules always did
    // below that); chunks of a sixth of it, leaving room for the next chunk's buffers.
    if (bytes.whole <= L.resident_budget || bytes.per_column == 0)
        return plan;
    int64_t widest = widest_row(g);
    int max_columns =
        static_cast<int>(std::max<int64_t>(1, L.layout_budget / 2 / bytes.per_column));
    plan.columns = balanced_tile(widest, max_columns);
    bool any_reduction = false;
    for (const alg::Stage &s : g.op.stages)
        any_reduction = any_reduction || reduces(s.func);
    if (!any_reduction && g.outputs[0].result.shape.back() == widest)
        plan.form = RowChunks::Elementwise;
    else if (any_reduction && reductions_chunkable(g, out_rank, widest))
        plan.form = RowChunks::Reduction;
    return plan;
}

TileLoop tile_output_columns(Func f, const Shape &shape, int columns, const Limits &L) {
    int rank = static_cast<int>(shape.size());
    Var co("v0o"), ci("v0i");
    f.split(var(0), co, ci, columns); // ShiftInwards: the last chunk overlaps the one before
    if (int64_t rows = shape[rank - 2]; rows > L.partitions) {
        Var ro("v1o"), ri("v1i");
        split_rows(f, var(1), ro, ri, rows, L.partitions).reorder(ci, ri, co, ro);
    } else {
        f.reorder(ci, var(1), co);
    }
    return {false, Halide::LoopLevel(f, co)};
}

void chunk_reductions(Group &g, int columns) {
    int out_rank = static_cast<int>(g.outputs[0].result.shape.size());
    for (const alg::Stage &s : g.op.stages) {
        if (!reduces(s.func))
            continue;
        Func acc = s.func;
        Halide::RVar r(acc.function().update(0).schedule().rvars()[0].var), ro("ro"), ri("ri");
        acc.update().split(r, ro, ri, columns, Halide::TailStrategy::GuardWithIf);
        acc.update().reorder(ri, var(0), ro);
        for (const std::string &n : direct_calls(acc))
            for (GroupInput &in : g.inputs)
                if (in.staged.name() == n && static_cast<int>(in.shape.size()) == out_rank)
                    in.staged.compute_at(acc, ro);
    }
}

} // namespace nhc::sched::detail
