#include "driver/CopyGroups.h"

#include "neff/OnChipAllocator.h"
#include "target/Target.h"

#include <algorithm>

namespace nhc::codegen_copies {

namespace {

neff::AccessPattern hbm_ap(const neff::Program &p, int v, int64_t offset) {
    neff::AccessPattern a;
    a.space = neff::MemSpace::HBM;
    a.dtype = p.vars.at(static_cast<size_t>(v)).dtype;
    a.var = v;
    a.num_partitions = 1;
    a.offset = offset;
    return a;
}

// Copies spread over the load queues in turn, so that their fixed latencies overlap (a queue
// runs its transfers in order); the queues SelectTransfers uses for loads.
int next_queue(const CopyTarget &t) {
    return static_cast<int>(t.out.size() %
                            static_cast<size_t>(codegen::SelectOptions{}.dma_queues));
}

// The store queue of the `n`th staged tile: SelectTransfers' store queues (after its load
// queues), in turn.
int store_queue(int n) {
    int queues = codegen::SelectOptions{}.dma_queues;
    return queues + n % queues;
}

} // namespace

void flat_copy(const CopyTarget &t, int from_var, int to_var, const std::string &name) {
    const neff::Variable &from = t.program.vars.at(static_cast<size_t>(from_var));
    if (from.num_elements() == 0)
        return; // an empty tensor: nothing to move
    neff::Instr i;
    i.op = neff::Opcode::Dma;
    i.name = name;
    i.src = hbm_ap(t.program, from_var, 0);
    i.src.dims = {{neff::dtype_size(i.src.dtype), from.num_elements()}};
    i.dst = hbm_ap(t.program, to_var, 0);
    i.dst.dims = {{neff::dtype_size(i.dst.dtype),
                   t.program.vars.at(static_cast<size_t>(to_var)).num_elements()}};
    t.out.push_back({neff::Engine::SP, i});
}

/** One input of a Concat in `rows` rows of `row` elements: the input's rows are `src_step`
 *  elements apart in its variable, the output's `dst_step` apart from element `dst_at`. */
struct ConcatPiece {
    int src_var, dst_var;
    int64_t rows, row, src_step, dst_step, dst_at;
};

/** `piece` through SBUF: per block of rows (at most the partitions) and chunk of columns, a load
 *  into one of two SBUF buffers in turn and a store from it (the semaphore pass orders each
 *  store after its load and each load after the store that last read its buffer). False, having
 *  emitted nothing, when there is no target or no room. */
bool concat_through_sbuf(const CopyTarget &t, const ConcatPiece &piece, const std::string &name) {
    if (!t.target || !t.sbuf_history)
        return false;
    const target::TargetInfo &tg = *t.target;
    neff::DType src_type = t.program.vars.at(static_cast<size_t>(piece.src_var)).dtype;
    int64_t ses = neff::dtype_size(src_type),
            des = neff::dtype_size(t.program.vars.at(static_cast<size_t>(piece.dst_var)).dtype);
    // Staged, the bytes cross two transfers spread over all engines; HBM -> HBM, one engine
    // moves them in one. Worth it past what one engine moves during a transfer's fixed latency.
    if (double(piece.rows * piece.row * ses) < tg.dma.fixed_latency_ns * tg.dma.bytes_per_ns)
        return false;
    // Chunks of rows a few times the length at which DMA saturates (nc.md:L259): each transfer
    // at the full rate, few transfers.
    int64_t chunk = std::min(piece.row, 4 * tg.dma.saturating_row_bytes / ses);
    codegen::OnChipAllocator sbuf(tg.sbuf_usable_per_partition, codegen::kSbufGranule);
    codegen::AllocationHistory before = *t.sbuf_history;
    sbuf.resume(before);
    for (const auto &[offset, bytes] : t.reserved_sbuf)
        sbuf.reserve(offset, bytes);
    // The region the group before kept for the next group's weights stays free and kept.
    if (before.kept_bytes > 0)
        sbuf.reserve(before.kept_offset, before.kept_bytes);
    int64_t buffers[2] = {sbuf.allocate(chunk * ses), sbuf.allocate(chunk * ses)};
    if (buffers[0] < 0 || buffers[1] < 0)
        return false;
    int turn = 0, partitions = tg.partitions;
    for (int64_t r = 0; r < piece.rows; r += partitions)
        for (int64_t c = 0; c < piece.row; c += chunk, turn++) {
            int32_t rows = static_cast<int32_t>(std::min<int64_t>(partitions, piece.rows - r));
            int64_t cols = std::min(chunk, piece.row - c);
            neff::AccessPattern tile;
            tile.space = neff::MemSpace::SBUF;
            tile.dtype = src_type;
            tile.num_partitions = rows;
            tile.offset = buffers[turn % 2];
            tile.dims = {{1, cols}};
            neff::Instr load, store;
            load.op = store.op = neff::Opcode::Dma;
            load.name = store.name = name;
            load.src = hbm_ap(t.program, piece.src_var, (r * piece.src_step + c) * ses);
            load.src.num_partitions = rows;
            load.src.partition_step = piece.src_step * ses;
            load.src.dims = {{ses, cols}};
            load.dst = store.src = tile;
            store.dst =
                hbm_ap(t.program, piece.dst_var, (piece.dst_at + r * piece.dst_step + c) * des);
            store.dst.num_partitions = rows;
            store.dst.partition_step = piece.dst_step * des;
            store.dst.dims = {{des, cols}};
            load.queue = next_queue(t);
            store.queue = store_queue(turn);
            t.out.push_back({neff::Engine::SP, load});
            t.out.push_back({neff::Engine::POOL, store});
        }
    sbuf.release(buffers[0]);
    sbuf.release(buffers[1]);
    *t.sbuf_history = sbuf.history();
    t.sbuf_history->kept_offset = before.kept_offset;
    t.sbuf_history->kept_bytes = before.kept_bytes;
    return true;
}

/** Concat: each input into its slice of the output. Its contiguous part (the concat axis and
 *  the axes inside it) is a row per index of the axes outside it; a single such row is cut into
 *  as many rows as the partitions, when they divide it. Through SBUF when the target allows
 *  (concat_through_sbuf), else one HBM -> HBM DMA per input. */
void concat(const CopyTarget &t, const Node &n) {
    const Value &out = t.graph.value(n.outputs[0]);
    int64_t rank = static_cast<int64_t>(out.shape.size());
    int64_t axis = n.attr_int("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; a++)
        outer *= out.shape[a];
    for (int64_t a = axis + 1; a < rank; a++)
        inner *= out.shape[a];
    int out_var = t.var(n.outputs[0]);
    int64_t out_es = neff::dtype_size(t.program.vars.at(out_var).dtype), at = 0;
    for (const std::string &in : n.inputs) {
        int64_t len = in.empty() ? 0 : t.graph.value(in).shape[axis];
        if (len * inner * outer == 0)
            continue;
        if (t.in_place && t.in_place(in)) {
            at += len;
            continue;
        }
        int in_var = t.var(in);
        int64_t in_es = neff::dtype_size(t.program.vars.at(in_var).dtype);
        // Rows of the input; one contiguous block as the partitions' rows when they divide it.
        int64_t staged_rows = outer, row = len * inner, out_step = out.shape[axis] * inner;
        if (t.target && outer == 1 && row % t.target->partitions == 0) {
            staged_rows = t.target->partitions;
            row /= staged_rows;
            out_step = row;
        }
        if (concat_through_sbuf(t, {in_var, out_var, staged_rows, row, row, out_step, at * inner},
                                n.name)) {
            at += len;
            continue;
        }
        auto rows = [&](int v, int64_t es, int64_t row_elems, int64_t offset) {
            neff::AccessPattern a;
            a.space = neff::MemSpace::HBM;
            a.dtype = t.program.vars.at(v).dtype;
            a.var = v;
            a.num_partitions = 1;
            a.offset = offset * es;
            if (outer > 1)
                a.dims.push_back({row_elems * es, outer});
            a.dims.push_back({es, len * inner});
            return a;
        };
        neff::Instr i;
        i.op = neff::Opcode::Dma;
        i.name = n.name;
        i.src = rows(in_var, in_es, len * inner, 0);
        i.dst = rows(out_var, out_es, out.shape[axis] * inner, at * inner);
        i.queue = next_queue(t);
        t.out.push_back({neff::Engine::SP, i});
        at += len;
    }
}

/** graph/ConvIm2Col's Im2Col: the [taps, positions] matrix zero-filled from a zero weight,
 *  then, per image, channel and kernel tap, one HBM -> HBM DMA of the input positions that
 *  tap reads inside the input (the rest is the padding, left zero). */
void im2col(const CopyTarget &t, const Node &n) {
    const Value &x = t.graph.value(n.inputs[0]), &cols = t.graph.value(n.outputs[0]);
    std::vector<int64_t> kernel = n.attr_ints("kernel_shape"), stride = n.attr_ints("strides"),
                         dil = n.attr_ints("dilations"), pad = n.attr_ints("pads_begin"),
                         out = n.attr_ints("output_spatial");
    size_t sp = kernel.size();
    int cols_var = t.var(n.outputs[0]), x_var = t.var(n.inputs[0]);
    neff::DType dt = t.program.vars.at(cols_var).dtype; // narrower than x under auto-cast
    int64_t es = neff::dtype_size(dt), xes = neff::dtype_size(t.program.vars.at(x_var).dtype);
    int64_t taps = 1, positions = 1, image = 1;
    for (size_t i = 0; i < sp; i++) {
        taps *= kernel[i];
        positions *= out[i];
        image *= x.shape[i + 2];
    }
    neff::Variable zeros;
    zeros.name = n.outputs[0] + "__zeros";
    zeros.kind = neff::VarKind::Weight;
    zeros.dtype = dt;
    zeros.shape = cols.shape;
    zeros.set_bytes(std::vector<uint8_t>(static_cast<size_t>(zeros.num_elements() * es), 0));
    t.program.vars.push_back(std::move(zeros));
    flat_copy(t, static_cast<int>(t.program.vars.size()) - 1, cols_var, n.name);
    std::vector<int64_t> tap(sp, 0);
    for (int64_t b = 0; b < x.shape[0]; b++)
        for (int64_t c = 0; c < x.shape[1]; c++)
            for (int64_t k = 0; k < taps; k++) {
                for (int64_t r = k, i = static_cast<int64_t>(sp) - 1; i >= 0; i--) {
                    tap[static_cast<size_t>(i)] = r % kernel[static_cast<size_t>(i)];
                    r /= kernel[static_cast<size_t>(i)];
                }
                neff::Instr dma;
                dma.op = neff::Opcode::Dma;
                dma.name = n.name;
                dma.src = hbm_ap(t.program, x_var, ((b * x.shape[1] + c) * image) * xes);
                dma.dst = hbm_ap(t.program, cols_var,
                                 ((c * taps + k) * cols.shape[1] + b * positions) * es);
                int64_t src_step = image, dst_step = positions;
                bool empty = false;
                for (size_t i = 0; i < sp; i++) {
                    src_step /= x.shape[i + 2];
                    dst_step /= out[i];
                    int64_t shift = tap[i] * dil[i] - pad[i]; // input position of output 0
                    int64_t lo = shift >= 0 ? 0 : (-shift + stride[i] - 1) / stride[i];
                    int64_t last = x.shape[i + 2] - 1 - shift;
                    int64_t hi = last < 0 ? -1 : std::min(out[i] - 1, last / stride[i]);
                    if (hi < lo) {
                        empty = true;
                        break;
                    }
                    dma.src.offset += (lo * stride[i] + shift) * src_step * xes;
                    dma.dst.offset += lo * dst_step * es;
                    dma.src.dims.push_back({stride[i] * src_step * xes, hi - lo + 1});
                    dma.dst.dims.push_back({dst_step * es, hi - lo + 1});
                }
                if (!empty) {
                    dma.queue = next_queue(t);
                    t.out.push_back({neff::Engine::SP, dma});
                }
            }
}

} // namespace nhc::codegen_copies
