#include "driver/GraphPasses.h"

#include "graph/AutoCast.h"
#include "graph/AutoCastAll.h"
#include "graph/CancelTransposes.h"
#include "graph/CausalMask.h"
#include "graph/ConvIm2Col.h"
#include "graph/ConvTranspose.h"
#include "graph/Decompose.h"
#include "graph/DepthToSpace.h"
#include "graph/DowncastInt64.h"
#include "graph/FlattenChannelScale.h"
#include "graph/FlattenElementwise.h"
#include "graph/FoldNormAffine.h"
#include "graph/FoldSoftmaxScale.h"
#include "graph/FoldTranspose.h"
#include "graph/FuseGelu.h"
#include "graph/FuseLayerNorm.h"
#include "graph/FuseSwish.h"
#include "graph/GroupNorm.h"
#include "graph/LinearLayers.h"
#include "graph/LongRows.h"
#include "graph/LowerLosses.h"
#include "graph/MixedPrecision.h"
#include "graph/OperatorSupport.h"
#include "graph/PoolTaps.h"
#include "graph/ReduceLastAxis.h"
#include "graph/RemoveDeadNodes.h"
#include "graph/ResizeMatmul.h"
#include "graph/SaturateInfinity.h"
#include "graph/SkipMaskedKeys.h"
#include "graph/SplitLinear.h"
#include "graph/TransposeThroughUnitReshapes.h"
#include "graph/UnitAxisTransposes.h"
#include "graph/WeightLayout.h"
#include "graph/WideElementwiseRows.h"
#include "schedules/DefaultSchedule.h"
#include "support/Log.h"
#include "target/Target.h"

#include <optional>

namespace nhc {

namespace {

/** The type of the matmuls' operands: --auto-cast's, else fp32. With fp8_e4m3 the activations
 *  are bf16 and the linear layers' weights fp8 (store_linear_weights_fp8). */
DType matmul_operand_type(const CompileOptions &options) {
    if (options.auto_cast == "none")
        return DType::Float32;
    return options.auto_cast_type == "bf16" || options.auto_cast_type == "fp8_e4m3"
               ? DType::BFloat16
           : options.auto_cast_type == "fp16" ? DType::Float16
                                              : DType::TFloat32;
}

} // namespace

void apply_graph_passes(Graph &g, const CompileOptions &options) {
    int narrowed = downcast_int64(g);
    log_info("int64: ", narrowed, " values computed as int32");
    int rearranged = lower_depth_space(g);
    log_info("depth/space: ", rearranged, " DepthToSpace/SpaceToDepth nodes as Reshape-Transpose");
    int decomposed = decompose_operators(g);
    log_info("decompositions: ", decomposed, " nodes expressed with other operators");
    int picks = decompose_index_picks(g);
    log_info("index picks: ", picks, " GatherElements and loss nodes decomposed into one-hot sums");
    int norms = fuse_decomposed_layer_norms(g);
    log_info("layer norm: ", norms, " decomposed LayerNorms recognised");
    const target::TargetInfo &target = target::target_by_name(options.target);
    // Packing kernel rows into the channels is a move of -O2 and -O3, weighed for the matmuls'
    // operand type.
    std::optional<DType> pack_rows_operand;
    if (options.optlevel >= 2)
        pack_rows_operand = matmul_operand_type(options);
    ConvLimits window_limits = sched::conv_limits(target, pack_rows_operand);
    int convs = lower_convs_to_matmuls(g, window_limits);
    int packed = static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [](const Node &n) {
        return n.op_type == "ConvTaps" && n.has_attr("packed_rows");
    }));
    log_info("convolutions: ", convs, " lowered to PE matmuls (per kernel tap, or im2col), ",
             packed, " with their kernel rows packed into the channels");
    // Transposes that move only unit axes are views: a move of -O2 and -O3.
    int unit_axis = options.optlevel >= 2 ? reshape_unit_axis_transposes(g) : 0;
    log_info("unit-axis transposes: ", unit_axis,
             " Transposes that move only axes of extent 1 made Reshapes");
    int cancelled = cancel_transpose_pairs(g);
    log_info("transpose pairs: ", cancelled, " Transposes that undo an earlier one removed");
    // Transposes brought next to their MatMuls across unit-axis Reshapes (heads folded into the
    // batch): a move of -O2 and -O3. After the pairs above: moving one of a pair would hide it.
    int through = options.optlevel >= 2 ? transpose_through_unit_reshapes(g) : 0;
    log_info("transposes through unit reshapes: ", through,
             " Transpose/Reshape pairs swapped or Transposes merged");
    int transposed = lower_conv_transposes(g, window_limits);
    log_info("transposed convolutions: ", transposed, " lowered to per-tap PE matmuls");
    int pools = lower_pools(g, window_limits);
    log_info("pooling: ", pools, " MaxPool/AveragePool nodes lowered to per-tap windows");
    // A normalisation computed in one group, its statistics on chip: unet-inference's move.
    bool norms_on_chip = options.model_type == "unet-inference" && options.optlevel >= 2;
    int norms_spread = lower_group_norms(g, target.partitions, sched::norm_row_elems(target),
                                         norms_on_chip ? sched::whole_row_elems(target) : 0);
    log_info("group norm: ", norms_spread, " group/instance norms spread over the partitions");
    // Several channels' resize along a non-last axis in one matmul: a move of -O2 and -O3.
    int resizes = lower_resizes_to_matmuls(g, options.optlevel >= 2 ? target.partitions : 0);
    log_info("resize: ", resizes, " Resize nodes lowered to interpolation matmuls");
    int gelus = fuse_gelu_patterns(g);
    log_info("gelu: ", gelus, " GELU patterns recognised");
    int swishes = fuse_swish_patterns(g);
    log_info("silu: ", swishes, " x * Sigmoid(x) patterns made one Swish");
    // A constant causal mask as an index test: a move of -O2 and -O3.
    int causal = options.optlevel >= 2 ? lower_triangular_masks(g) : 0;
    log_info("causal masks: ", causal,
             " Where nodes of a constant triangular mask made index tests");
    int moved = move_reductions_to_last_axis(g);
    log_info("reductions: ", moved, " moved to the last axis of a 2-D view");
    int long_rows = decompose_long_rows(g, sched::whole_row_elems(target), target.partitions);
    log_info("long rows: ", long_rows,
             " Softmax/LayerNorm/Reduce nodes decomposed into chunked steps");
    // Q/K/V computed as one layer and then cut by Slices (under unet-inference, by a Split too,
    // as SD's attention does): one layer per piece instead, a move of -O2/-O3.
    int split = options.optlevel >= 2
                    ? split_sliced_linear_layers(g, options.model_type == "unet-inference")
                    : 0;
    log_info("cut linear layers: ", split,
             " layers whose output is only sliced computed piece by piece");
    int linear = canonicalize_linear_layers(g);
    log_info("linear layers: ", linear, " MatMul (+ bias Add) nodes made 2-D Gemms");
    // A LayerNorm's scale and bias in the weights of the linear layers it feeds: -O2 and -O3.
    int norms_folded = options.optlevel >= 2 ? fold_norm_affine_into_linear(g) : 0;
    log_info("norm affine: ", norms_folded,
             " LayerNorms' scale and bias folded into the linear layers they feed");
    int scales = flatten_channel_scales(g);
    log_info("channel scales: ", scales, " elementwise nodes compute on [N*C, H*W] rows");
    int widened =
        widen_elementwise_rows(g, target.partitions, sched::norm_row_elems(target), window_limits);
    log_info("wide rows: ", widened, " elementwise nodes compute on rows that fill the partitions");
    int flattened = flatten_elementwise_after_views(g, window_limits);
    log_info("flatten: ", flattened, " elementwise nodes compute on their Gemm's 2-D shape");
    // Attention's 1/sqrt(d) rides on the softmax's exponential: a move of -O2 and -O3.
    int scales_folded = options.optlevel >= 2 ? fold_softmax_scales(g) : 0;
    log_info("softmax scales: ", scales_folded, " Div/Mul by a constant folded into their Softmax");
    // Causal attention's softmax and P·V over the keys up to the diagonal: -O2 and -O3.
    int skipped = options.optlevel >= 2 ? skip_masked_keys(g) : 0;
    log_info("masked keys: ", skipped, " causal attentions reduce over their kept keys only");
    int folded = fold_transposes_into_matmuls(g);
    log_info("transpose folding: ", folded, " Transpose nodes read by their MatMul directly");
    int relaid = layout_matmul_weights(g);
    log_info("weight layout: ", relaid, " matmul weights stored with K outermost");
    std::optional<DType> cast;
    if (options.auto_cast == "all" && options.auto_cast_type != "tf32") {
        int n = auto_cast_all(g, matmul_operand_type(options));
        log_info("auto-cast: ", n, " float values stored as ", options.auto_cast_type);
        // The Casts it puts after the inputs are elementwise nodes widen_elementwise_rows has
        // not seen: a 1-D input longer than the partitions (a norm's scale) has no other
        // schedule.
        int cast_rows = widen_elementwise_rows(g, target.partitions, sched::norm_row_elems(target),
                                               window_limits);
        log_info("wide rows: ", cast_rows,
                 " of auto-cast's Casts compute on rows that fill the partitions");
    } else if (options.auto_cast != "none") { // matmult, or all to tf32 (float32's bytes)
        cast = matmul_operand_type(options);
        if (options.auto_cast_type == "fp8_e4m3") {
            int weights = store_linear_weights_fp8(g);
            log_info("auto-cast: ", weights,
                     " weights (linear layers, convolutions) stored as fp8_e4m3 with a per-tensor "
                     "scale");
        }
        int n = auto_cast_matmuls(g, *cast);
        // With fp8_e4m3, the operands other than the fp8 weights are bf16.
        log_info("auto-cast: ", n, " matmul nodes take ",
                 options.auto_cast_type == "fp8_e4m3" ? "bf16" : options.auto_cast_type,
                 " operands");
    }
    // Before the operands are stored narrow: the clipped values are the ones matmuls read.
    if (options.enable_saturate_infinity && !target.pe_transpose_exact) {
        int clips = saturate_matmul_operands(g);
        log_info("saturate infinity: ", clips, " matmul operands clipped to their largest finite");
    }
    if (cast) {
        DType t = *cast;
        if (t != DType::TFloat32) { // tf32 takes the bytes of fp32: nothing to save in HBM
            int narrowed = store_matmul_operands_narrow(g, t);
            log_info("auto-cast: ", narrowed, " values read only as matmul operands stored as ",
                     dtype_name(t));
        }
    }
    if (!options.mixed_precision_accumulation) {
        int marked = accumulate_in_data_types(g);
        log_info("mixed-precision accumulation off: ", marked,
                 " softmax, layer norm and reduction nodes keep their intermediates in their "
                 "16-bit data type");
    }
    int native = take_stored_16bit_operands(g);
    log_info("16-bit operands: ", native, " matmul nodes take their bf16/fp16 operands as stored");
    int dead = remove_dead_nodes(g);
    log_info("dead nodes: ", dead, " nodes whose outputs nothing reads removed");
}

} // namespace nhc
