#ifndef NHC_FRONTEND_CONSTANTEVALUATORSUPPORT_H
#define NHC_FRONTEND_CONSTANTEVALUATORSUPPORT_H

/** \file
 * Internal to the constant evaluator (ConstantEvaluator.h): the per-node context, the broadcasting
 * helpers, and the elementwise evaluators (ConstantEvaluatorElementwise.cpp) that the evaluator
 * table in ConstantEvaluator.cpp dispatches to alongside its shape operators.
 */

#include "graph/HostTensor.h"
#include "support/Error.h"

#include <functional>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <vector>

namespace nhc::folding {

using Inputs = std::vector<const HostTensor *>;
using Outputs = std::optional<std::vector<HostTensor>>;

struct Ctx {
    const onnx::NodeProto &node;
    const Inputs &in;
    int opset;

    [[noreturn]] void fail(const std::string &what) const {
        user_error("NHC_EFLD001", "cannot evaluate ", node.op_type(), " '", node.name(),
                   "': ", what);
    }
    const onnx::AttributeProto *attr(const char *name) const {
        for (const auto &a : node.attribute())
            if (a.name() == name)
                return &a;
        return nullptr;
    }
    int64_t attr_int(const char *name, int64_t fallback) const {
        const auto *a = attr(name);
        return a ? a->i() : fallback;
    }
    std::optional<std::vector<int64_t>> attr_ints(const char *name) const {
        const auto *a = attr(name);
        if (!a)
            return std::nullopt;
        return std::vector<int64_t>(a->ints().begin(), a->ints().end());
    }
    const HostTensor &input(size_t i) const {
        if (i >= in.size() || !in[i])
            fail("input " + std::to_string(i) + " is missing");
        return *in[i];
    }
    bool has_input(size_t i) const { return i < in.size() && in[i] != nullptr; }
    /** Input i, or nullptr when the node omits it. */
    const HostTensor *optional_input(size_t i) const { return has_input(i) ? in[i] : nullptr; }
    /** axis in [-rank, rank) normalised to [0, rank). */
    int64_t norm_axis(int64_t axis, int64_t rank) const {
        if (axis < -rank || axis >= rank)
            fail("axis " + std::to_string(axis) + " is out of range for rank " +
                 std::to_string(rank));
        return axis < 0 ? axis + rank : axis;
    }
};

std::vector<int64_t> row_major_strides(const Shape &s);
/** The broadcast of `shapes` (NHC_EFLD001 when they do not broadcast). */
Shape broadcast_shapes(const Ctx &c, const std::vector<Shape> &shapes);
/** For each element of `out`, the flat index of the broadcast element of a tensor of shape `in`. */
std::vector<int64_t> broadcast_map(const Shape &in, const Shape &out);
/** NHC_EFLD001 when a computed shape has a negative dimension. */
void check_size(const Ctx &c, const Shape &s);
/** True when a tensor of shape `s` is over the folding limit (it is left to run on device). */
bool too_big(const Shape &s);

/** A convolution's or pooling's window over the spatial dims of x [N, C, spatial...]: per dim the
 *  kernel, stride, dilation and leading pad, and the output's extent. */
struct Window {
    std::vector<int64_t> kernel, stride, dilation, pad_begin, out;
};
/** The window of `kernel` from the node's strides, dilations, pads and auto_pad (NHC_EFLD001
 *  when they do not suit x); ConstantEvaluatorConv.cpp. */
Window conv_window(const Ctx &c, const Shape &x, const std::vector<int64_t> &kernel);

/** Applies ff (floats, in double) or fi (integers, in int64) elementwise over broadcast inputs. */
Outputs elementwise(const Ctx &c, size_t arity, DType out_dtype,
                    const std::function<double(const std::vector<double> &)> &ff,
                    const std::function<int64_t(const std::vector<int64_t> &)> &fi);

Outputs binary_arith(const Ctx &c); ///< Add Sub Mul Div Pow Mod Min Max
Outputs compare(const Ctx &c);      ///< Equal Less Greater And Or (and their kin)
Outputs unary(const Ctx &c); ///< Not Neg Abs Sqrt Floor Exp Log Tanh Relu ... (no attributes)
Outputs where(const Ctx &c);
Outputs cast(const Ctx &c);
Outputs cast_like(const Ctx &c);
Outputs is_nan(const Ctx &c);
Outputs bit_shift(const Ctx &c);               ///< unsigned integers, LEFT or RIGHT
Outputs gather_nd(const Ctx &c);               ///< ConstantEvaluatorIndexing.cpp
Outputs scatter_elements(const Ctx &c);        ///< ConstantEvaluatorIndexing.cpp
Outputs reverse_sequence(const Ctx &c);        ///< ConstantEvaluatorIndexing.cpp
Outputs tf_idf_vectorizer(const Ctx &c);       ///< ConstantEvaluatorIndexing.cpp
Outputs quantize_linear(const Ctx &c);         ///< ConstantEvaluatorQuantize.cpp
Outputs dequantize_linear(const Ctx &c);       ///< ConstantEvaluatorQuantize.cpp
Outputs dynamic_quantize_linear(const Ctx &c); ///< ConstantEvaluatorQuantize.cpp
Outputs einsum(const Ctx &c);                  ///< ConstantEvaluatorLinearAlgebra.cpp
Outputs det(const Ctx &c);                     ///< ConstantEvaluatorLinearAlgebra.cpp
Outputs matmul(const Ctx &c);                  ///< ConstantEvaluatorLinearAlgebra.cpp
Outputs gemm(const Ctx &c);                    ///< ConstantEvaluatorLinearAlgebra.cpp
Outputs matmul_integer(const Ctx &c);          ///< ConstantEvaluatorLinearAlgebra.cpp
Outputs qlinear_matmul(const Ctx &c);          ///< ConstantEvaluatorLinearAlgebra.cpp
Outputs conv_integer(const Ctx &c);            ///< ConstantEvaluatorConv.cpp
Outputs qlinear_conv(const Ctx &c);            ///< ConstantEvaluatorConv.cpp
Outputs max_unpool(const Ctx &c);              ///< ConstantEvaluatorConv.cpp
Outputs lp_pool(const Ctx &c);                 ///< LpPool, GlobalLpPool: ConstantEvaluatorPool.cpp
Outputs lp_normalization(const Ctx &c);        ///< ConstantEvaluatorPool.cpp
Outputs max_roi_pool(const Ctx &c);            ///< ConstantEvaluatorPool.cpp
Outputs dft(const Ctx &c);                     ///< ConstantEvaluatorSignal.cpp
Outputs stft(const Ctx &c);                    ///< ConstantEvaluatorSignal.cpp
Outputs mel_weight_matrix(const Ctx &c);       ///< ConstantEvaluatorSignal.cpp
Outputs grid_sample(const Ctx &c);             ///< ConstantEvaluatorGridSample.cpp
Outputs top_k(const Ctx &c);                   ///< ConstantEvaluatorDetection.cpp
Outputs non_max_suppression(const Ctx &c);     ///< ConstantEvaluatorDetection.cpp
Outputs cum_sum(const Ctx &c);                 ///< ConstantEvaluatorDetection.cpp
Outputs roi_align(const Ctx &c);               ///< ConstantEvaluatorDetection.cpp
Outputs reduce(const Ctx &c);                  ///< Reduce*: ConstantEvaluatorReduce.cpp
Outputs softmax(const Ctx &c);                 ///< Softmax, LogSoftmax: ConstantEvaluatorReduce.cpp
Outputs arg_extreme(const Ctx &c);             ///< ArgMax, ArgMin: ConstantEvaluatorReduce.cpp
Outputs recurrent(const Ctx &c);               ///< RNN GRU LSTM: ConstantEvaluatorRecurrent.cpp
Outputs non_zero(const Ctx &c);                ///< ConstantEvaluatorDynamicShape.cpp
Outputs unique(const Ctx &c);                  ///< ConstantEvaluatorDynamicShape.cpp

} // namespace nhc::folding

#endif
