#ifndef NHC_SCHEDULES_SCHEDULEPLAN_H
#define NHC_SCHEDULES_SCHEDULEPLAN_H

/** \file
 * The decisions of a group's default schedule, as data (issue 16): what the hand-written default
 * schedules (DefaultSchedule.h) would otherwise settle by their own heuristics. A
 * default-constructed plan is exactly those heuristics' choice (-O1); the autoscheduler
 * (src/autoscheduler) tries other values and keeps the fastest on the timing simulator.
 *
 * A plan states preferences, never obligations: a choice that cannot apply to the group (an
 * A-resident matmul whose A^T does not fit its SBUF budget) falls back to the next default, so
 * every plan schedules every group the default schedules. The autoscheduler therefore compares
 * the schedules plans produce (describe_schedule), not the plans.
 */

#include <string>

namespace nhc::sched {

/** How a 2-D or batched matmul (not fused attention, not Gather) moves its operands
 *  (MatmulSchedule.cpp). */
struct MatmulPlan {
    enum class Operands {
        Auto,      ///< the default's first that fits, in the order below
        WholeRows, ///< output built per row tile of whole rows, column tiles inside
        AResident, ///< A^T kept whole in SBUF, B staged per column tile
        BResident, ///< B kept whole in SBUF, A staged per row tile
        Streamed,  ///< both operands staged per output tile and K chunk
        KBlocked,  ///< K in two stages: partial sums per block of K added up in SBUF (k_block)
    };
    Operands operands = Operands::Auto;
    int max_tile_n = 0; ///< columns of an output tile at most (0: one PSUM bank of fp32)
    /** A stored K innermost is transposed on the PE, K chunk by K chunk, into PSUM, and copied
     *  out by ACT or DVE. This many chunks' transposes share one PSUM tile and one copy (at most
     *  a bank; 1: a tile per chunk): fewer, longer copies, each paying its fixed cost once
     *  (the BERT-base layer at batch 8, fp32: 886.4 -> 863.9 us with 4; bench/README.md). */
    int transposes_per_tile = 4;
    /** The fixed PSUM buffers those tiles take turns in (Group::buffers; 0: a new bank per tile
     *  from the rotating allocator, which then also hands the accumulators banks that the
     *  transposes of later row tiles still use). */
    int transpose_buffers = 0;
    /** Two-level tiling for an operand too large to keep whole: an A-resident matmul keeps A^T
     *  in blocks of at most this many rows, a B-resident one B in blocks of at most this many
     *  columns, each block loaded once while the other operand streams past it; the other
     *  operand then crosses HBM once per block. The schedule takes the largest block that is a
     *  multiple of the output tile, divides the dimension and fits; an operand that fits whole
     *  stays whole (0: no blocks). */
    int resident_block = 0;
    /** The fixed SBUF buffers A's row tiles (natural and transposed) and the product's tiles
     *  take turns in (Group::buffers; 0: a new region per tile from the rotating allocator,
     *  whose sweep through all of the SBUF leaves the next group no region this one is not
     *  still using). With the output kept resident, the room the next group then finds lets
     *  it load its weights early (the BERT-base layer at batch 8, bf16: 364.1 -> 345.1 us). */
    int staging_buffers = 0;
    /** An A-resident matmul (A^T whole) whose output tiles are narrower than this stores its
     *  output in blocks of this many columns: per block, B's columns are staged once and each
     *  row tile's output tiles gathered in SBUF, then stored in rows of the block's width, where
     *  a tile of one PSUM bank stores rows of 2 KiB (fp32) at the DMA's reduced rate for rows
     *  under 4 KiB (neuroncore.md L255-259; GPT-2's logits, 50,257 columns). 0: one store per
     *  output tile. */
    int store_columns = 0;
    /** The K-blocked movement (Operands::KBlocked) reduces in two stages, as Halide's rfactor
     *  writes them: per block of this many rows of K, each output tile's partial product is
     *  accumulated in PSUM over the block's K chunks and added into an fp32 sum kept in SBUF
     *  for a block of output rows, the K blocks outermost in it (0: the movement does not
     *  apply). B then moves in whole rows of N elements, and the PE's first matmuls need one
     *  block of each operand, not all of A or of B as every order of whole output tiles does
     *  (bench/README.md, thirteenth stop: the 2048^3 MatMul waits 23 us for A). It costs an add
     *  per block and output tile on VectorE, and B crosses HBM once per block of rows. */
    int k_block = 0;

    bool operator==(const MatmulPlan &o) const {
        return operands == o.operands && max_tile_n == o.max_tile_n &&
               transposes_per_tile == o.transposes_per_tile &&
               transpose_buffers == o.transpose_buffers && resident_block == o.resident_block &&
               staging_buffers == o.staging_buffers && store_columns == o.store_columns &&
               k_block == o.k_block;
    }
};

/** How a fused attention group (scores, softmax, P·V: schedule_attention) uses PSUM and stores
 *  its heads, moves of `--model-type transformer`. Each head's tiles take a new PSUM bank from
 *  the rotating allocator by default: Q^T, K^T, the scores, P^T and the output, five of the
 *  eight banks (nc.md:L206-207), so two heads barely overlap. A stage held to a few fixed banks
 *  (Group::buffers) leaves the rest to the others; 0 keeps the rotation. */
struct AttentionPlan {
    int qk_transpose_buffers = 0; ///< Q's and K's PE transposes, each stage
    int p_transpose_buffers = 0;  ///< the probabilities' transposes for P·V
    int score_buffers = 0;        ///< the scores' accumulator
    int output_buffers = 0;       ///< P·V's accumulator
    /** Score rows wider than a PSUM bank: P's PE transposes per PSUM tile, each tile copied out
     *  at once (0: the matmul plan's default, four to a bank). One a tile frees each bank after
     *  a chunk of 128 keys: over 2,048 positions the next row tile's scores then find banks
     *  (bench/README.md, eighteenth stop: attention s2048 906.8 -> 816.1 us), where over 1,024
     *  the extra copies cost more (GPT-2 s1024 7,266.0 -> 7,502.1 us): measured per workload. */
    int p_transposes_per_bank = 0;
    /** All heads of an item of the outermost batch axis are gathered in one SBUF tile and stored
     *  in one DMA, not one per head: with the heads merged back ([b, h, s, d] stored as
     *  [b, s, h, d]) each partition then writes one row of h x d elements, not h rows of d
     *  (BERT-base's 128-byte rows: the DMA cost by row size, nc.md:L255-259). */
    bool outputs_per_batch_item = false;
    /** Attention with its heads outermost ([heads, positions, d]: heads folded into the batch,
     *  as torchvision's multi-head attention, CLIP's bmm and Stable Diffusion's einsum export
     *  it): Q, K and V are loaded per head, the way a batch axis outside the heads is, where by
     *  default they are staged for all heads at once before the first product
     *  (AttentionSchedule.cpp, heads_staged_together). Staged together they move in rows of
     *  heads x d elements, at a better DMA rate (ViT-B/16), but the first product waits for
     *  all of them ([8, 256, 64] bf16 -O2: 43.3 us staged together, 27.3 loaded per head;
     *  ViT-B/16's layers keep the staging: bench/README.md, thirty-second stop): measured per
     *  workload. */
    bool operands_per_head = false;

    bool operator==(const AttentionPlan &o) const {
        return qk_transpose_buffers == o.qk_transpose_buffers &&
               p_transpose_buffers == o.p_transpose_buffers && score_buffers == o.score_buffers &&
               output_buffers == o.output_buffers &&
               p_transposes_per_bank == o.p_transposes_per_bank &&
               outputs_per_batch_item == o.outputs_per_batch_item &&
               operands_per_head == o.operands_per_head;
    }
};

/** How a convolution or pooling (ConvTaps, PoolTaps: ConvSchedule.cpp) stages its image. */
struct ImagePlan {
    /** The image is loaded as stored, one contiguous run per channel (and band of rows), and an
     *  engine copies it into the interior of the padded tile, filled with the border; by
     *  default the DMA writes that interior itself, one run per image row. Rows of W elements
     *  are 32-128 bytes at widths of 16-64 in 16 bits, which the DMA moves at its
     *  overhead-bound rate, a row under 256 bytes costing as much as one of 256
     *  (nc.md:L255-259); the copy costs an engine instruction per channel chunk. Only where
     *  the padded rows are wider than the image's (image_rows_padded). */
    bool pad_on_chip = false;

    bool operator==(const ImagePlan &o) const { return pad_on_chip == o.pad_on_chip; }
};

/** Everything a search may choose for one group. */
struct SchedulePlan {
    MatmulPlan matmul;
    AttentionPlan attention;
    ImagePlan image;
    /** The group's output tiles stay in SBUF, each in a region of its own, until the groups that
     *  read the output have run (Group::resident), so that their loads of it become on-chip
     *  copies and its stores can go (neff/ForwardStores.h): a whole-model move of -O3, which
     *  trades SBUF the following groups could use for the output's round trip through HBM. */
    bool output_resident = false;
    /** The list scheduler (neff/ScheduleInstructions.h) issues the group's PE instructions that
     *  can start at once in the order of their longest path to the end of the program, not in
     *  program order: the PE transposes of A's next row tile then run among the matmuls of the
     *  current one, and the copies out of PSUM that the next matmuls wait for are done by the
     *  time they start (MatMul 4096x8192x8192 bf16, A's transposes in 2 PSUM buffers: 7,907.1 ->
     *  7,490.9 us). It reorders the PE only, and only this group's instructions. */
    bool pe_critical_path = false;

    bool is_default() const { return *this == SchedulePlan(); }
    bool operator==(const SchedulePlan &o) const {
        return matmul == o.matmul && attention == o.attention && image == o.image &&
               output_resident == o.output_resident && pe_critical_path == o.pe_critical_path;
    }
    /** Whether the plan makes a whole-model move (an output kept resident, working tiles held
     *  to fixed buffers for the next group's sake), whose worth only the whole program shows. */
    bool whole_model_move() const { return output_resident || matmul.staging_buffers > 0; }
    /** For logs, --dump-schedules comments and the tuning database: "default", or
     *  "matmul b_resident, n <= 256, transposes 4 per tile, 3 buffers, blocks of 512" (or
     *  "matmul k_blocked, k blocks of 512"), or
     *  "attention, q/k transposes in 1 buffers, scores in 2 buffers, outputs stored per batch
     *  item" (parts left out that have their default value), each followed by ", PE in
     *  critical-path order" and ", output resident" when they are (those alone when nothing
     *  else differs), or "image padded on chip". A group is a matmul, an attention, or a
     *  convolution or pooling, so a plan is one of them. */
    std::string describe() const;
};

const char *operands_name(MatmulPlan::Operands o);
/** Reads SchedulePlan::describe()'s text back (the tuning database stores plans so); false if
 *  `text` is not one. */
bool parse_plan(const std::string &text, SchedulePlan &plan);

} // namespace nhc::sched

#endif
