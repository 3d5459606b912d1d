#!/usr/bin/python3
"""Writes conformance cases of host-evaluated operators into this folder, in the layout of
ONNX's backend test data, with the outputs computed by ONNX Runtime (../ort_reference.py): the
attributes ONNX's own node tests of these operators leave out (ConvInteger's groups, dilations,
strides and auto_pad; QLinearConv's per-channel scales and bias; RoiAlign's max mode, adaptive
sampling and spatial scale; ScatterElements' mul reduction along an inner axis; GridSample's
modes with reflection and border padding past the image; DFT's dft_length, onesided and complex
inverse; STFT with a window; MelWeightMatrix at an audio model's sizes; TfIdfVectorizer with
weights, skips and trigrams) and operators ONNX 1.12 has no node test of (LpPool, GlobalLpPool,
LpNormalization, MaxRoiPool). The host
evaluators (src/frontend/ConstantEvaluator*.cpp) are checked against them by the
onnx-conformance test (tests/conformance/meson.build).

Usage (ONNX Runtime from npm, as the project's README allows):
    (cd /tmp/ort && npm install --ignore-scripts onnxruntime-node)
    /usr/bin/python3 tests/conformance/host_ops/make_cases.py /tmp/ort/node_modules
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ort_reference import run_ort, write_case  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ELEM = {np.float32: TensorProto.FLOAT, np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8,
        np.int32: TensorProto.INT32, np.int64: TensorProto.INT64, np.float64: TensorProto.DOUBLE}


def u8(rng, shape, low=0, high=256):
    return rng.integers(low, high, shape).astype(np.uint8)


def conv_integer_group_dilation(rng):
    values = {"x": u8(rng, [1, 4, 7, 7]), "w": u8(rng, [4, 2, 3, 3]),
              "x_zero": np.array(3, np.uint8), "w_zero": np.array(5, np.uint8)}
    node = helper.make_node("ConvInteger", ["x", "w", "x_zero", "w_zero"], ["y"], group=2,
                            dilations=[2, 2], strides=[2, 1], pads=[1, 2, 0, 1])
    return 10, [node], values, {"y": (np.int32, [1, 4, 2, 6])}


def conv_integer_same_upper(rng):
    values = {"x": u8(rng, [1, 2, 6, 5]), "w": u8(rng, [3, 2, 2, 3])}
    node = helper.make_node("ConvInteger", ["x", "w"], ["y"], auto_pad="SAME_UPPER",
                            strides=[2, 2])
    return 10, [node], values, {"y": (np.int32, [1, 3, 3, 3])}


def qlinear_conv_per_channel(rng):
    values = {"x": u8(rng, [1, 3, 5, 5]), "x_scale": np.array(0.02, np.float32),
              "x_zero": np.array(120, np.uint8), "w": u8(rng, [4, 3, 3, 3]),
              "w_scale": np.array([0.01, 0.03, 0.005, 0.02], np.float32),
              "w_zero": np.array([128, 128, 128, 128], np.uint8),
              "y_scale": np.array(0.05, np.float32), "y_zero": np.array(100, np.uint8),
              "bias": rng.integers(-500, 500, [4]).astype(np.int32)}
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero",
                                            "y_scale", "y_zero", "bias"], ["y"], pads=[1, 1, 1, 1])
    return 10, [node], values, {"y": (np.uint8, [1, 4, 5, 5])}


def roi_align_max_adaptive(rng):
    values = {"x": rng.uniform(-1, 1, [2, 3, 10, 12]).astype(np.float32),
              "rois": np.array([[1, 2, 15, 11], [0.5, 0, 23, 19], [4, 4, 9, 7]], np.float32),
              "batch_indices": np.array([1, 0, 1], np.int64)}
    node = helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["y"], mode="max",
                            output_height=3, output_width=4, sampling_ratio=0,
                            spatial_scale=0.5)
    return 16, [node], values, {"y": (np.float32, [3, 3, 3, 4])}


def roi_align_avg_adaptive(rng):
    opset, nodes, values, outs = roi_align_max_adaptive(rng)
    nodes = [helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["y"],
                              output_height=3, output_width=4, sampling_ratio=0,
                              spatial_scale=0.5)]
    return opset, nodes, values, outs


def scatter_elements_mul_axis1(rng):
    values = {"data": rng.uniform(-2, 2, [3, 4]).astype(np.float32),
              "indices": np.array([[1, 1], [0, 3], [-1, 2]], np.int64),
              "updates": rng.uniform(-2, 2, [3, 2]).astype(np.float32)}
    node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=1,
                            reduction="mul")
    return 16, [node], values, {"y": (np.float32, [3, 4])}


def grid_sample(mode, padding, align):
    def make(rng):
        # Grid points up to 2.5 outside [-1, 1], so that reflection folds more than once.
        values = {"x": rng.uniform(-1, 1, [2, 3, 5, 6]).astype(np.float32),
                  "grid": rng.uniform(-3.5, 3.5, [2, 4, 7, 2]).astype(np.float32)}
        node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                                padding_mode=padding, align_corners=align)
        return 16, [node], values, {"y": (np.float32, [2, 3, 4, 7])}
    make.__name__ = f"grid_sample_{mode}_{padding}_{'aligned' if align else 'unaligned'}"
    return make


def dft_onesided_padded(rng):
    values = {"x": rng.uniform(-1, 1, [2, 12, 3, 1]).astype(np.float32),
              "length": np.array(16, np.int64)}
    node = helper.make_node("DFT", ["x", "length"], ["y"], axis=1, onesided=1)
    return 17, [node], values, {"y": (np.float32, [2, 9, 3, 2])}


def dft_complex_inverse_cut(rng):
    values = {"x": rng.uniform(-1, 1, [1, 3, 8, 2]).astype(np.float32),
              "length": np.array(6, np.int64)}
    node = helper.make_node("DFT", ["x", "length"], ["y"], axis=2, inverse=1)
    return 17, [node], values, {"y": (np.float32, [1, 3, 6, 2])}


def stft_window_step(rng):
    values = {"signal": rng.uniform(-1, 1, [2, 50, 1]).astype(np.float32),
              "step": np.array(7, np.int64),
              "window": (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(12) / 12)).astype(np.float32)}
    node = helper.make_node("STFT", ["signal", "step", "window"], ["y"])
    return 17, [node], values, {"y": (np.float32, [2, 6, 7, 2])}


def mel_weight_matrix(rng):
    values = {"bins": np.array(10, np.int64), "length": np.array(64, np.int64),
              "rate": np.array(16000, np.int64), "low": np.array(20, np.float32),
              "high": np.array(7600, np.float32)}
    node = helper.make_node("MelWeightMatrix", ["bins", "length", "rate", "low", "high"], ["y"])
    return 17, [node], values, {"y": (np.float32, [33, 10])}


def tf_idf_weighted_batch(rng):
    values = {"x": np.array([[1, 4, 4, 2, 7, 4, 2, 1], [4, 2, 2, 7, 1, 4, 4, 2]], np.int64)}
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TFIDF", min_gram_length=1,
                            max_gram_length=3, max_skip_count=2, ngram_counts=[0, 3, 7],
                            ngram_indexes=[0, 5, 2, 1, 3, 6, 4],
                            pool_int64s=[1, 2, 4, 4, 2, 2, 7, 1, 4, 2, 4, 4, 2],
                            weights=[0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75])
    return 9, [node], values, {"y": (np.float32, [2, 7])}


def lp_pool_p3_strided(rng):
    values = {"x": rng.uniform(-1, 1, [1, 2, 7, 6]).astype(np.float32)}
    node = helper.make_node("LpPool", ["x"], ["y"], p=3, kernel_shape=[3, 2], strides=[2, 2],
                            pads=[1, 0, 1, 1])
    return 17, [node], values, {"y": (np.float32, [1, 2, 4, 3])}


def lp_pool_same_upper(rng):
    values = {"x": rng.uniform(-1, 1, [1, 1, 5, 6]).astype(np.float32)}
    node = helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                            auto_pad="SAME_UPPER")
    return 17, [node], values, {"y": (np.float32, [1, 1, 3, 3])}


def global_lp_pool_p1(rng):
    values = {"x": rng.uniform(-1, 1, [2, 3, 4, 5]).astype(np.float32)}
    node = helper.make_node("GlobalLpPool", ["x"], ["y"], p=1)
    return 17, [node], values, {"y": (np.float32, [2, 3, 1, 1])}


def lp_normalization_l1_zero(rng):
    x = rng.uniform(-1, 1, [3, 4, 2]).astype(np.float32)
    x[1, :, 0] = 0  # a zero norm
    node = helper.make_node("LpNormalization", ["x"], ["y"], axis=1, p=1)
    return 17, [node], {"x": x}, {"y": (np.float32, [3, 4, 2])}


def lp_normalization_l2(rng):
    values = {"x": rng.uniform(-1, 1, [2, 5]).astype(np.float32)}
    node = helper.make_node("LpNormalization", ["x"], ["y"])
    return 17, [node], values, {"y": (np.float32, [2, 5])}


def max_roi_pool_scaled(rng):
    # Corners at half scale, one rounding half away from zero (5 -> 2.5 -> 3), one region past
    # the image (every bin empty: 0).
    values = {"x": rng.uniform(-1, 1, [2, 3, 8, 10]).astype(np.float32),
              "rois": np.array([[0, 2, 2, 12, 10], [1, 0, 0, 19, 15], [1, 5, 7, 9, 7],
                                [0, 40, 40, 60, 60]], np.float32)}
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[2, 3],
                            spatial_scale=0.5)
    return 17, [node], values, {"y": (np.float32, [4, 3, 2, 3])}


def max_roi_pool_float_bins(rng):
    # A region 29 pixels high and wide in 7 bins: the last bin ends at 29 in float (ONNX
    # Runtime's arithmetic), at 30 in double.
    values = {"x": rng.uniform(-1, 1, [1, 2, 32, 32]).astype(np.float32),
              "rois": np.array([[0, 0, 0, 28, 28]], np.float32)}
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[7, 7])
    return 17, [node], values, {"y": (np.float32, [1, 2, 7, 7])}


# float64 values, which the engines do not hold, run in host segments: the math functions,
# reductions, softmax and arg-extremes a float64 part of a model uses (ONNX Runtime has float64
# kernels of these).
UNARY_F64 = ["Exp", "Log", "Tanh", "Sigmoid", "Relu", "Sign", "Abs", "Sqrt", "Neg"]


def float64_unary_math(rng):
    values = {"x": rng.uniform(0.1, 0.9, [3, 4]), "z": rng.uniform(-3, 3, [3, 4])}
    values["z"][0, 0] = 0.0
    nodes, outs = [], {}
    for op in UNARY_F64:
        source = "x" if op in ("Log", "Sqrt") else "z"
        nodes.append(helper.make_node(op, [source], ["y_" + op.lower()]))
        outs["y_" + op.lower()] = (np.float64, [3, 4])
    return 13, nodes, values, outs


def float64_reductions(rng):
    values = {"x": rng.uniform(0.5, 2.0, [2, 3, 4])}
    axes = helper.make_tensor("axes_value", TensorProto.INT64, [2], [0, 2])
    nodes = [helper.make_node("Constant", [], ["axes"], value=axes),
             helper.make_node("ReduceSum", ["x", "axes"], ["sum"], keepdims=0)]
    outs = {"sum": (np.float64, [3])}
    for op, axes, keep, shape in [("ReduceMean", [1], 1, [2, 1, 4]),
                                  ("ReduceMax", [-1], 0, [2, 3]),
                                  ("ReduceMin", [0, 1], 1, [1, 1, 4]),
                                  ("ReduceProd", [2], 0, [2, 3]),
                                  ("ReduceL1", [1, 2], 0, [2]),
                                  ("ReduceL2", [0], 1, [1, 3, 4]),
                                  ("ReduceLogSum", [2], 1, [2, 3, 1]),
                                  ("ReduceLogSumExp", [1], 0, [2, 4]),
                                  ("ReduceSumSquare", None, 0, [])]:
        name = op[len("Reduce"):].lower()
        attrs = {"keepdims": keep}
        if axes is not None:
            attrs["axes"] = axes
        nodes.append(helper.make_node(op, ["x"], [name], **attrs))
        outs[name] = (np.float64, shape)
    return 13, nodes, values, outs


def float64_softmax_axes(rng):
    values = {"x": rng.uniform(-4, 4, [2, 3, 5])}
    nodes = [helper.make_node("Softmax", ["x"], ["p"], axis=1),
             helper.make_node("LogSoftmax", ["x"], ["lp"])]
    return 13, nodes, values, {"p": (np.float64, [2, 3, 5]), "lp": (np.float64, [2, 3, 5])}


def float64_softmax_opset11(rng):
    values = {"x": rng.uniform(-4, 4, [2, 3, 5])}
    node = helper.make_node("Softmax", ["x"], ["p"], axis=1)  # over [3, 5] as one row
    return 11, [node], values, {"p": (np.float64, [2, 3, 5])}


def float64_arg_extremes(rng):
    values = {"x": np.round(rng.uniform(0, 3, [3, 4, 5]))}  # ties
    nodes = [helper.make_node("ArgMax", ["x"], ["amax"], axis=1, keepdims=0),
             helper.make_node("ArgMin", ["x"], ["amin_last"], axis=-1, select_last_index=1)]
    return 13, nodes, values, {"amax": (np.int64, [3, 5]), "amin_last": (np.int64, [3, 4, 1])}



def float64_matmul_broadcast(rng):
    values = {"a": rng.standard_normal([2, 1, 3, 4]), "b": rng.standard_normal([3, 4, 5]),
              "v": rng.standard_normal([4])}
    nodes = [helper.make_node("MatMul", ["a", "b"], ["ab"]),
             helper.make_node("MatMul", ["v", "b"], ["vb"]),
             helper.make_node("MatMul", ["a", "v"], ["av"])]
    return 13, nodes, values, {"ab": (np.float64, [2, 3, 3, 5]), "vb": (np.float64, [3, 5]),
                               "av": (np.float64, [2, 1, 3])}


def float64_gemm_transposed(rng):
    values = {"a": rng.standard_normal([4, 3]), "b": rng.standard_normal([5, 4]),
              "c": rng.standard_normal([5])}
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.5,
                            beta=2.0)
    return 13, [node], values, {"y": (np.float64, [3, 5])}

CASES = {f.__name__: f for f in [conv_integer_group_dilation, conv_integer_same_upper,
                                 qlinear_conv_per_channel, roi_align_max_adaptive,
                                 roi_align_avg_adaptive, scatter_elements_mul_axis1,
                                 grid_sample("bicubic", "reflection", 1),
                                 grid_sample("bicubic", "border", 0),
                                 grid_sample("bilinear", "reflection", 0),
                                 grid_sample("nearest", "reflection", 1),
                                 grid_sample("nearest", "border", 0), dft_onesided_padded,
                                 dft_complex_inverse_cut, stft_window_step, mel_weight_matrix,
                                 tf_idf_weighted_batch, lp_pool_p3_strided, lp_pool_same_upper,
                                 global_lp_pool_p1, lp_normalization_l1_zero, lp_normalization_l2,
                                 max_roi_pool_scaled, max_roi_pool_float_bins,
                                 float64_unary_math, float64_reductions, float64_softmax_axes,
                                 float64_softmax_opset11, float64_arg_extremes,
                                 float64_matmul_broadcast, float64_gemm_transposed]}


def main():
    node_modules = sys.argv[1]
    for name, make in CASES.items():
        rng = np.random.default_rng(20261202)
        opset, nodes, values, outs = make(rng)
        inputs = [helper.make_tensor_value_info(n, ELEM[v.dtype.type], list(v.shape))
                  for n, v in values.items()]
        outputs = [helper.make_tensor_value_info(o, ELEM[t], s) for o, (t, s) in outs.items()]
        folder = write_case(HERE, name, nodes, inputs, outputs, opset, values)
        run_ort(node_modules, folder, list(values), values, list(outs),
                {o: t for o, (t, _) in outs.items()})
        print("wrote", folder)


if __name__ == "__main__":
    main()
