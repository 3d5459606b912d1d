#ifndef NHC_SCHEDULES_DEFAULTSCHEDULE_H
#define NHC_SCHEDULES_DEFAULTSCHEDULE_H

/** \file
 * The hand-written default NeuronCore schedules (DESIGN.md §4), one per operator family:
 *  - matmul (MatMul, Gemm): output tiles of up to 128 partitions (M) x 512 fp32 (N, one PSUM
 *    bank), the accumulator in PSUM computed per tile, the reduction split into chunks of at most
 *    128 that divide K, the operands staged in SBUF (K on partitions): A^T kept whole and B per
 *    column tile when A^T fits, else B kept whole and A per row tile, else both per chunk; the
 *    epilogue in SBUF;
 *  - conv (graph/ConvIm2Col's ConvTaps, ConvSchedule.cpp): output tiles of up to 128 output
 *    channels x rows of one PSUM bank, the padded image staged once per image, the weights once,
 *    one matmul per kernel tap and channel chunk accumulated in PSUM;
 *  - layout (Transpose, Split, Slice): staged whole in SBUF when it fits; else a Transpose of
 *    the last two axes (fp32, bf16, fp16) by PE transposes of [128, 128] tiles, and other
 *    outputs staged per tile of rows; rank-1 outputs copy straight from HBM to HBM;
 *  - everything else (elementwise, Softmax, LayerNormalization, Reduce*): one instruction tile
 *    per output tile, with the second-to-last ONNX axis on partitions (split by 128) and the last
 *    axis free; every stage and every input the stages read is computed per tile in SBUF. Rows
 *    too long for that are computed in chunks of columns (RowChunks.cpp).
 * Assumes the group's Funcs are fresh (a Func carries one schedule).
 */

#include "graph/ConvIm2Col.h"
#include "schedules/Group.h"
#include "schedules/SchedulePlan.h"
#include "target/Target.h"

#include <optional>

namespace nhc::sched {

enum class Family { Matmul, Conv, Layout, Compute };

Family schedule_family(const std::string &op_type);

/** Applies the default schedule for `target` (tile sizes and SBUF budgets come from it), with
 *  the decisions `plan` states (SchedulePlan.h; the default plan is the heuristics' choice);
 *  NHC_ESCH001 if the group's shape cannot be scheduled yet. */
void apply_default_schedule(Group &g, const target::TargetInfo &target,
                            const SchedulePlan &plan = {});
/** Whether the group is a matmul whose schedule obeys SchedulePlan::matmul (not fused attention,
 *  not a Gather). */
bool takes_matmul_plan(const Group &g);
/** Whether the group is a convolution or pooling whose schedule obeys SchedulePlan::image: a
 *  ConvTaps or PoolTaps whose padded rows are wider than its image's (a ConvTaps' kernel rows not
 *  packed into its channels). */
bool takes_image_plan(const Group &g);
/** Whether the group is a fused attention, whose schedule obeys SchedulePlan::attention. */
bool takes_attention_plan(const Group &g);
/** Whether a row reduction (LayerNorm, Softmax) over rows of `row_elems` elements can join a
 *  matmul's epilogue: rows within one PSUM bank always can; wider rows when the whole rows fit
 *  the SBUF budget of such an epilogue (built per row tile, bank by bank). */
bool row_reduction_joins_matmul(int64_t row_elems, const target::TargetInfo &target);
/** Whether a Softmax over rows of `row_elems` elements can join the matmul before it (attention's
 *  scores then never leave the chip): when the stages of a row tile's whole rows (four rows of
 *  fp32: the scores, their exponentials, a temporary and the probabilities), two row tiles of
 *  them at once, take at most half the SBUF. Wider than row_reduction_joins_matmul's budget (an
 *  eighth), which leaves room for a LayerNorm epilogue's matmul to keep its weights whole (half
 *  the SBUF, resident_fits); attention's other operands are one head's K^T and V, 2 x rows x
 *  head size bytes (AttentionSchedule.cpp). */
bool softmax_rows_join_matmul(int64_t row_elems, const target::TargetInfo &target);
/** When graph/ConvIm2Col may use ConvTaps: the partitions (a channel chunk's limit), and the SBUF
 *  bytes per partition the window schedules give a staged padded image (staged_image_budget).
 *  The partitions one DMA engine serves (packed blocks are aligned to them). With
 *  `pack_rows_operand` (the matmuls' operand type; -O2 and -O3), whether packing kernel rows
 *  pays: the PE time of the matmuls saved (target::compute_ns, each a full tile's) above the
 *  extra time the busiest DMA engine takes to stage the packed blocks (target::dma_split per
 *  block, target::dma_engine_ns). */
ConvLimits conv_limits(const target::TargetInfo &target,
                       std::optional<DType> pack_rows_operand = std::nullopt);
/** The longest row (fp32 elements) graph/GroupNorm gives a partition when a normalisation's
 *  channels exceed the partitions: the rows of a whole-row epilogue (whole_row_epilogue_fits). */
int64_t norm_row_elems(const target::TargetInfo &target);
/** The longest row (fp32 elements) a Softmax, LogSoftmax or LayerNormalization is computed over
 *  whole in one tile, which keeps about four such rows (input, two intermediates, output) within
 *  half the SBUF; graph/LongRows decomposes longer ones into steps computed in chunks. */
int64_t whole_row_elems(const target::TargetInfo &target);

} // namespace nhc::sched

#endif
