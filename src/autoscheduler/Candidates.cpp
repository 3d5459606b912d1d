#include "autoscheduler/Candidates.h"

#include "schedules/DefaultSchedule.h"

#include <optional>

namespace nhc::autosched {

namespace {

using Operands = sched::MatmulPlan::Operands;

constexpr Operands kMovements[] = {Operands::Auto, Operands::WholeRows, Operands::AResident,
                                   Operands::BResident, Operands::Streamed};

/** A's transposes (MatmulPlan): chunks per PSUM tile and fixed buffers. */
struct Transposes {
    int per_tile, buffers;
};

// A's transposes in three fixed PSUM buffers leave the accumulators banks that no later
// transpose reuses, so a column tile's matmuls follow A's row tiles as they arrive (MatMul
// 2048^3 bf16: 254.6 -> 243.2 us); one transpose per tile suits a K of two chunks.
constexpr Transposes kTransposes[] = {{4, 3}, {1, 0}, {4, 2}};

/** A plan with the default transposes (MatmulPlan's own defaults). */
sched::SchedulePlan matmul_plan(Operands o, int max_n) {
    sched::SchedulePlan p;
    p.matmul.operands = o;
    p.matmul.max_tile_n = max_n;
    return p;
}

/** A plan that keeps the resident operand in blocks of at most `block` rows or columns when it
 *  does not fit whole (MatmulPlan::resident_block), with output tiles of at most `max_n`
 *  columns (0: one PSUM bank). */
sched::SchedulePlan blocked_plan(Operands o, int block, int max_n = 0) {
    sched::SchedulePlan p = matmul_plan(o, max_n);
    p.matmul.resident_block = block;
    return p;
}

/** A-resident with the output stored in blocks of columns whose rows reach the DMA's full rate
 *  in 16-bit outputs (MatmulPlan::store_columns; the target's saturating row, nc.md:L259). Only
 *  an output wider than a block takes it (GPT-2's logits; BERT's FFN, where it is measured and
 *  not chosen); on others it repeats a candidate already seen and is not measured. */
sched::SchedulePlan stored_in_blocks(const target::TargetInfo &t) {
    sched::SchedulePlan p = matmul_plan(Operands::AResident, 0);
    p.matmul.store_columns = static_cast<int>(t.dma.saturating_row_bytes / 2);
    return p;
}

/** `p` with A's transposes as `tp` says. */
sched::SchedulePlan with_transposes(sched::SchedulePlan p, Transposes tp) {
    p.matmul.transposes_per_tile = tp.per_tile;
    p.matmul.transpose_buffers = tp.buffers;
    return p;
}

sched::SchedulePlan matmul_plan(Operands o, int max_n, Transposes tp) {
    return with_transposes(matmul_plan(o, max_n), tp);
}

/** `p` with its PE instructions in critical-path order (SchedulePlan::pe_critical_path): A's
 *  transposes for the next row tile among the current one's matmuls. It pays where the copies of
 *  a row tile's transposes out of PSUM hold up its matmuls, with the transposes in fixed buffers
 *  (MatMul 4096x8192x8192 bf16, B in blocks: 7,907.1 -> 7,490.9 us; alone 7,991.4), so it is
 *  offered with the transposes' variants, not as a rule (as one it lost on ResNet-50 and the
 *  2048^3 MatMul, bench/README.md). */
sched::SchedulePlan in_critical_path_order(sched::SchedulePlan p) {
    p.pe_critical_path = true;
    return p;
}

/** K in two stages (rfactor), in blocks of `chunks` K chunks of the partitions
 *  (MatmulPlan::k_block): only a matmul whose K divides into two such blocks or more takes it;
 *  on others it falls back to a schedule already seen, which is not measured again. */
sched::SchedulePlan k_blocked_plan(const target::TargetInfo &t, int chunks) {
    sched::SchedulePlan p = matmul_plan(Operands::KBlocked, 0);
    p.matmul.k_block = chunks * t.partitions;
    return p;
}

std::vector<sched::SchedulePlan> matmul_plans(const target::TargetInfo &t, int optlevel) {
    // Output tiles: the default (0: one PSUM bank of columns), half and a quarter of a bank.
    // Narrower tiles start the PE sooner after the first operand chunk and give the epilogue
    // engines smaller pieces to overlap with it, in more instructions and DMAs.
    const int n_limits[] = {0, t.matmul_max_moving / 2, t.matmul_max_moving / 4};
    // Blocks of the resident operand, for a matmul whose operands are both too large to stay
    // on chip (4096x8192x8192: both are otherwise staged per output tile, 8.9% of PE peak).
    // They schedule only such matmuls, so on others these candidates repeat one already seen
    // and are not measured. 2048: the NKI tutorial's M block (nc.md:L395 [MMT]); the schedule
    // takes the largest block up to it that fits.
    const int blocks[] = {2048, 512};
    // A^T in blocks with output tiles of a quarter bank: B's column tile then takes a quarter of
    // the SBUF it took, which leaves room for an A^T block twice as tall, so B crosses HBM half
    // as often (4096x8192x8192 bf16: blocks of 1,024 rows, not 512; 7,490.9 -> 6,265.0 us,
    // 95.6% of PE peak, bench/README.md). Its 256-byte rows of B move at the DMA's lowest rate,
    // which four passes over B still leave below the PE's time.
    const int narrow = n_limits[2];
    std::vector<sched::SchedulePlan> plans;
    if (optlevel <= 2) {
        // At most 8 distinct schedules are measured (measured_budget): these 8 in this order,
        // then the blocked plans, one with its PE in critical-path order (distinct only where
        // the first 8 have few distinct ones).
        plans.push_back(matmul_plan(Operands::Auto, 0));
        plans.push_back(matmul_plan(Operands::Auto, 0, kTransposes[0]));
        // Third, so that it is measured where it applies (K of two blocks or more; elsewhere it
        // repeats the default and takes no place): on MatMuls whose K is long beside M and N it
        // is 1.4-1.7x faster than any other plan (bench/README.md, nineteenth stop).
        plans.push_back(k_blocked_plan(t, 8));
        for (Operands o : kMovements)
            if (o != Operands::Auto)
                plans.push_back(matmul_plan(o, 0));
        for (int n : n_limits)
            if (n)
                plans.push_back(matmul_plan(Operands::Auto, n));
        plans.push_back(stored_in_blocks(t));
        for (Operands o : {Operands::BResident, Operands::AResident})
            plans.push_back(blocked_plan(o, blocks[0]));
        plans.push_back(in_critical_path_order(
            with_transposes(blocked_plan(Operands::BResident, blocks[0]), kTransposes[2])));
        // Last: on a matmul whose A^T fits whole it is `a_resident, n <= 128`, which must not
        // take the place of the one before (BERT-base bf16's query projection chooses that one:
        // 955.8 us; 956.6 when this one was measured in its place).
        plans.push_back(blocked_plan(Operands::AResident, blocks[0], narrow));
        return plans;
    }
    for (Operands o : kMovements)
        for (int n : n_limits)
            plans.push_back(matmul_plan(o, n));
    for (Operands o : {Operands::Auto, Operands::AResident, Operands::BResident})
        for (Transposes tp : kTransposes)
            plans.push_back(matmul_plan(o, 0, tp));
    plans.push_back(stored_in_blocks(t));
    for (Operands o : {Operands::BResident, Operands::AResident})
        for (int block : blocks)
            plans.push_back(blocked_plan(o, block));
    for (int block : blocks)
        plans.push_back(blocked_plan(Operands::AResident, block, narrow));
    for (Operands o : {Operands::Auto, Operands::AResident, Operands::BResident})
        for (Transposes tp : kTransposes)
            plans.push_back(in_critical_path_order(matmul_plan(o, 0, tp)));
    for (int block : blocks)
        for (Transposes tp : {kTransposes[0], kTransposes[2]})
            plans.push_back(in_critical_path_order(
                with_transposes(blocked_plan(Operands::BResident, block), tp)));
    // K in two stages, in blocks of 4 and 8 chunks.
    for (int chunks : {4, 8})
        plans.push_back(k_blocked_plan(t, chunks));
    return plans;
}

/** Whole-model move (-O3): the output stays in SBUF for the group that reads it, with the
 *  default movement and each variant of A's transposes, its working tiles rotating or in two
 *  fixed buffers (the BERT-base layer at batch 8 stores and reloads its 6 MiB FFN activation
 *  otherwise). Offered only where the next group is all that reads the output
 *  (ProgramContext::may_keep_output), and the output takes at least an eighth of an SBUF
 *  partition: a smaller one's tiles outlast the rotating allocation until its reader anyway
 *  (neff/ForwardStores.h finds them), and pinning them only takes room from the groups after
 *  it (GPT-2 fp32 at batch 1, whose outputs take 9 and 12 KiB of 176: 2,980.8 -> 3,025.0 us). */
std::vector<sched::SchedulePlan> resident_output_plans(const sched::Group &g,
                                                       const target::TargetInfo &t) {
    if (g.outputs.size() != 1)
        return {};
    const alg::Tensor &out = g.outputs[0].result;
    int64_t per_partition = shape_numel(out.shape) * dtype_size(out.dtype) / t.partitions;
    if (per_partition * 8 < t.sbuf_usable_per_partition)
        return {};
    std::vector<sched::SchedulePlan> plans;
    for (int staging : {0, 2})
        for (std::optional<Transposes> tp :
             {std::optional<Transposes>(), std::optional(kTransposes[0]),
              std::optional(kTransposes[1]), std::optional(kTransposes[2])}) {
            sched::SchedulePlan p =
                tp ? matmul_plan(Operands::Auto, 0, *tp) : matmul_plan(Operands::Auto, 0);
            p.matmul.staging_buffers = staging;
            p.output_resident = true;
            plans.push_back(p);
        }
    return plans;
}

sched::SchedulePlan attention_plan(int qk_transposes, int p_transposes, int scores, int outputs) {
    sched::SchedulePlan p;
    p.attention = {qk_transposes, p_transposes, scores, outputs};
    return p;
}

std::vector<sched::SchedulePlan> attention_plans(int optlevel) {
    // Q's and K's transposes held to one or two banks each were the move that paid on the BERT
    // layer at batch 8 (bf16 396.8 -> 365.5 us) and dev_gpt_block (50.8 -> 49.3), while ViT-B/16
    // lost 0.7% with it: measured per workload, not applied as a rule (bench/README.md). The
    // other stages' buffers are the variants tried with it; 2 for the probabilities' transposes
    // and the accumulators leaves every head's five stages within the eight banks.
    // P's transposes one to a PSUM tile (score rows wider than a bank; the same schedule, not
    // measured again, elsewhere) second: over 2,048 positions it frees the banks the next row
    // tile's scores wait for (bench/README.md, eighteenth stop).
    sched::SchedulePlan one_per_bank;
    one_per_bank.attention.p_transposes_per_bank = 1;
    std::vector<sched::SchedulePlan> buffered = {
        sched::SchedulePlan(),      one_per_bank,
        attention_plan(1, 0, 0, 0), attention_plan(2, 0, 0, 0),
        attention_plan(1, 2, 0, 0), attention_plan(1, 0, 2, 0),
        attention_plan(1, 0, 0, 2), attention_plan(0, 2, 0, 0),
        attention_plan(0, 0, 2, 2)};
    if (optlevel >= 3) {
        for (int qk : {1, 2})
            for (int rest : {1, 2})
                buffered.push_back(attention_plan(qk, rest, rest, rest));
        for (size_t i = 2, n = buffered.size(); i < n; i++) {
            sched::SchedulePlan p = buffered[i];
            p.attention.p_transposes_per_bank = 1;
            buffered.push_back(p);
        }
    }
    // Each as it is, with its heads stored per batch item and with its operands loaded per head,
    // side by side. The first applies only to a batch axis outside the heads, the second only to
    // heads outermost (AttentionPlan); where one does not apply it is the same schedule and takes
    // no place in the budget, so -O2's first eight distinct schedules (measured_budget) are the
    // first four buffer variants, each with the staging that applies (eight variants where
    // neither does; [8, 256, 64] bf16: 43.3 -> 27.3 us loaded per head; ViT-B/16 keeps its
    // heads staged together: bench/README.md).
    std::vector<sched::SchedulePlan> plans;
    for (const sched::SchedulePlan &p : buffered) {
        plans.push_back(p);
        sched::SchedulePlan per_item = p, per_head = p;
        per_item.attention.outputs_per_batch_item = true;
        per_head.attention.operands_per_head = true;
        plans.push_back(per_item);
        plans.push_back(per_head);
    }
    return plans;
}

} // namespace

std::vector<sched::SchedulePlan> candidate_plans(const sched::Group &g,
                                                 const target::TargetInfo &target, int optlevel,
                                                 const std::string &model_type) {
    if (optlevel < 2)
        return {sched::SchedulePlan()};
    if (sched::takes_matmul_plan(g)) {
        std::vector<sched::SchedulePlan> plans = matmul_plans(target, optlevel);
        if (optlevel >= 3)
            for (const sched::SchedulePlan &p : resident_output_plans(g, target))
                plans.push_back(p);
        return plans;
    }
    if (sched::takes_image_plan(g)) {
        // The image loaded as stored and padded by an engine copy (ImagePlan::pad_on_chip): it
        // pays where the image's rows are short (SD UNet's 16-64 wide ones) and costs an engine
        // instruction per chunk where they are not, so it is measured, not a rule.
        sched::SchedulePlan padded;
        padded.image.pad_on_chip = true;
        return {sched::SchedulePlan(), padded};
    }
    // Attention's moves under the two model types whose models have attention (Stable
    // Diffusion's UNet has a transformer block at each of its lower levels); generic none.
    if ((model_type == "transformer" || model_type == "unet-inference") &&
        sched::takes_attention_plan(g))
        return attention_plans(optlevel);
    return {sched::SchedulePlan()};
}

} // namespace nhc::autosched
