#ifndef NHC_SCHEDULES_SCHEDULEPARTS_H
#define NHC_SCHEDULES_SCHEDULEPARTS_H

/** \file
 * What the default schedules (DefaultSchedule.cpp: elementwise, reductions, layout;
 * MatmulSchedule.cpp: matmuls; AttentionSchedule.cpp: fused attention) share: the target limits
 * they size tiles by, the stage roles, and the placement of stages per tile. Internal to
 * src/schedules.
 */

#include "schedules/Group.h"
#include "schedules/SchedulePlan.h"
#include "target/Target.h"

#include <set>
#include <string>
#include <vector>

namespace nhc::sched::detail {

/** What the schedules size their tiles and budgets by, all from the target (src/target). */
struct Limits {
    int partitions;           ///< partitions of an on-chip tile (and K, M of a matmul)
    int moving_free;          ///< matmul moving free size N (one PSUM bank of fp32)
    int64_t resident_budget;  ///< SBUF bytes per partition a resident operand may take
    int64_t layout_budget;    ///< SBUF bytes per partition a staged layout group may take
    int64_t broadcast_budget; ///< SBUF bytes per partition one broadcast built once may take
    int64_t row_budget;       ///< SBUF bytes per partition of a whole-row matmul epilogue
    int64_t short_dma_row;    ///< DMA rows up to this many bytes move at the lowest rate
    int64_t sbuf_capacity;    ///< SBUF bytes per partition in all (what the budgets divide)
};
Limits limits_of(const target::TargetInfo &t);
/** SBUF bytes per partition the padded image a window node (ConvTaps, PoolTaps) stages may take,
 *  whole or per band of output rows (also the graph lowering's ConvLimits::image_bytes). */
int64_t staged_image_budget(const Limits &L);

/** The Var of Halide dim i of a stage (v0 innermost). */
Halide::Var var(int i);
/** Names of the Funcs a Func's definitions call directly. */
std::set<std::string> direct_calls(const Halide::Func &f);
/** Largest divisor of n that is at most limit (a split inside an instruction must divide). */
int divisor_at_most(int64_t n, int limit);
/** The tile size that covers n in the fewest tiles of at most `limit`, all of one size. */
int balanced_tile(int64_t n, int limit);
/** The tail of a split of an output's rows (`rows`) into tiles of `tile`: a tile that does not
 *  divide them leaves a guarded, shorter last tile (GuardWithIf), not one shifted inwards over
 *  its neighbour, which would compute and store the shared rows twice (the second store waits
 *  for the first: a write after write in HBM) and match no reader's tiles, so that no reader
 *  could take the tiles from SBUF (driver/ResidentOutputs.h). */
Halide::TailStrategy rows_tail(int64_t rows, int tile);
/** The tail of a split of keys in a group whose reductions stop at each row's last kept key
 *  (graph/SkipMaskedKeys.h): there a tile of query rows needs the keys up to its last row's
 *  diagonal, which tiles of keys need not divide; a guarded last tile computes none past them,
 *  where a tile shifted inwards would start before key 0 (Auto elsewhere). */
Halide::TailStrategy keys_tail(const Group &g);
/** Splits `f`'s dimension `v`, an output's `rows`, into `outer` x `inner` balanced tiles of at
 *  most `limit` rows (balanced_tile) with their tail (rows_tail); returns f, to chain. */
Halide::Func &split_rows(Halide::Func &f, const Halide::Var &v, const Halide::Var &outer,
                         const Halide::Var &inner, int64_t rows, int limit);
/** A matmul operand chain's role (views, natural loads, transposes, staged operands). */
bool is_operand_role(const std::string &role);
/** Whether matmul operand i (0 = A, 1 = B) of `n` is stored with its contraction axis
 *  innermost. */
bool k_innermost(const Node &n, int i);
/** A role whose stage is a copy from HBM (a DMA): operands and broadcasts. */
bool is_staging_role(const std::string &role);

/** Where per-tile stages are computed: a loop of `f`, or root. */
struct TileLoop {
    bool root = true;
    Halide::LoopLevel level = Halide::LoopLevel::root();
    /** The tail of the tile's splits of its operands into chunks of rows (place_matmul's K
     *  transposes): GuardWithIf where the operands are staged in chunks of partitions that each
     *  tile must lie in (a shifted chunk would straddle two); Auto otherwise. */
    Halide::TailStrategy tail = Halide::TailStrategy::Auto;
};
/** Tiles an elementwise output by P rows (second-to-last ONNX axis); the loop of one tile. */
TileLoop tile_elementwise_output(Halide::Func f, const Shape &shape, const Limits &L);
void place(Halide::Func f, const TileLoop &t, Halide::MemoryType m);
/** Declares the partition dim of `f` in a group whose output has rank `out_rank`: for a stage of
 *  the output's rank, the output's partition dim `out_partition_dim` (Halide's; 1: the rows). */
void declare_layout(Group &g, const Halide::Func &f, int out_rank, int out_partition_dim = 1);
/** Stages in SBUF, per tile, the group inputs that compute stages read, laid out as the output
 *  (declare_layout). */
void stage_inputs(Group &g, const TileLoop &tile, int out_partition_dim = 1);

/** Long rows (RowChunks.cpp): whether a compute group keeps whole rows per tile or is computed
 *  in chunks of `columns`, as an elementwise group or as row reductions. */
struct RowChunks {
    enum Form { Whole, Elementwise, Reduction } form = Whole;
    int columns = 0;
};
RowChunks plan_row_chunks(const Group &g, const Limits &L);
/** Tiles an elementwise output in chunks of `columns` of its last axis inside row tiles of P;
 *  the loop of one chunk. */
TileLoop tile_output_columns(Halide::Func f, const Shape &shape, int columns, const Limits &L);
/** Splits each reduction's loop into chunks of `columns` (the last guarded) and stages the
 *  inputs it reads per chunk. */
void chunk_reductions(Group &g, int columns);

/** A 2-D or batched matmul and its epilogue, moving its operands as the plan prefers. */
void schedule_matmul(Group &g, const Limits &L, const MatmulPlan &plan);
/** Whether a row reduction over rows of this many elements can end a 2-D matmul's epilogue
 *  when the rows span several PSUM banks (the whole rows are staged in SBUF). */
bool whole_row_epilogue_fits(int64_t row_elems, const Limits &L);
/** Fused attention (scores, softmax, P·V); the plan's PSUM stages in fixed buffers
 *  (AttentionSchedule.cpp). */
void schedule_attention(Group &g, int context_node, const Limits &L, const AttentionPlan &plan);

// Matmul placements (MatmulSchedule.cpp) that fused attention shares.
/** Whether chunks of `k_chunk` (a divisor of k) fill at least half the partitions. */
bool full_k_chunks(int64_t k, int64_t k_chunk, const Limits &L);
/** A's PE transposes into `lhs` (split into K chunks at `kco`), per `row_tile`, as the plan
 *  groups them in PSUM; the stages of the group's node `node_index`. */
void place_a_transposes(Group &g, Halide::Func lhs, const Halide::Var &kco, int64_t chunks, int tm,
                        const Halide::LoopLevel &row_tile, const MatmulPlan &p, const Limits &L,
                        int node_index = 0);
/** The operands DMA loads staged once per item of the outermost batch axis. */
void stage_operands_per_batch(Group &g, Halide::Func f, int64_t k,
                              const std::vector<Halide::Func> &from_hbm, const Limits &L);
/** The extent of a matmul accumulator's reduction (K). */
int64_t contraction_extent(const Halide::Func &acc);
/** The chunk of a contraction of extent k on partitions: a divisor of k, or, when its divisors
 *  are small (a prime K), balanced chunks whose last one is guarded. */
int contraction_chunk(int64_t k, const Limits &L);
/** One matmul node's accumulator and operand chain per output tile; the operands from HBM. */
std::vector<Halide::Func> place_matmul(Group &g, int node_index, const Node &node,
                                       const TileLoop &tile, const Limits &L);
/** Output tiles of up to P rows x `max_n` columns; the loop of one tile. */
TileLoop tile_matmul_output(Halide::Func f, const Shape &s, const Limits &L, int max_n,
                            Halide::TailStrategy tail = Halide::TailStrategy::Auto);
/** The stages that are neither operands nor accumulators, per output tile in SBUF. */
void place_epilogue(Group &g, const TileLoop &tile, int rank);
/** The value whose whole rows a row tile builds (a row reduction's input, or the result). */
Halide::Func whole_rows_value(const Group &g);
/** `rows` built per row tile, column tile by column tile; the column tile's loop. */
TileLoop place_whole_rows(Group &g, Halide::Func rows, int64_t row_elems, const TileLoop &row_tile,
                          int64_t k_chunk, const Limits &L, const MatmulPlan &plan);
/** Whether a ConvTaps or PoolTaps group's padded image has rows wider than the image's (padding
 *  or a spread along them), so that a DMA into its interior writes one run per image row, and a
 *  ConvTaps' kernel rows are not packed into its channels (whose blocks a copy would move
 *  across partitions). */
bool image_rows_padded(const Group &g);
void schedule_conv(Group &g, const Limits &L, const ImagePlan &plan);
void schedule_pool(Group &g, const Limits &L, const ImagePlan &plan);

} // namespace nhc::sched::detail

#endif
