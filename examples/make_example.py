#!/usr/bin/env python3
"""Writes examples/mlp: a small two-layer MLP (Gemm 64->128, Relu, Gemm 128->10) with weights
from a fixed seed, plus one input and its float64-computed reference output in ONNX's backend-test
layout (test_data_set_0/input_0.pb, output_0.pb). Deterministic: rerunning gives identical bytes.

usage: /usr/bin/python3 examples/make_example.py [OUT_DIR]   (default: examples/mlp)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "mlp")
    rng = np.random.default_rng(2026)
    w1 = (rng.standard_normal((128, 64)) / 8).astype(np.float32)
    b1 = (rng.standard_normal(128) / 10).astype(np.float32)
    w2 = (rng.standard_normal((10, 128)) / 11).astype(np.float32)
    b2 = (rng.standard_normal(10) / 10).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["input", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["a"], name="relu1"),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"], name="fc2", transB=1),
    ]
    inits = [numpy_helper.from_array(w1, "fc1.weight"), numpy_helper.from_array(b1, "fc1.bias"),
             numpy_helper.from_array(w2, "fc2.weight"), numpy_helper.from_array(b2, "fc2.bias")]
    graph = helper.make_graph(
        nodes, "example_mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="neuron-halide-cc examples")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)

    x = rng.standard_normal((1, 64)).astype(np.float32)
    h = np.maximum(x.astype(np.float64) @ w1.T.astype(np.float64) + b1, 0)
    y = (h @ w2.T.astype(np.float64) + b2).astype(np.float32)

    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    with open(os.path.join(out, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "input").SerializeToString())
    with open(os.path.join(out, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "logits").SerializeToString())


if __name__ == "__main__":
    main()
