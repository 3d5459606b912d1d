#!/usr/bin/python3
"""Writes the recurrent-operator conformance cases (RNN, GRU, LSTM) into this folder, in the
layout of ONNX's backend test data (<case>/model.onnx, <case>/test_data_set_0/input_i.pb and
output_i.pb), with the outputs computed by ONNX Runtime: an independent reference for the
attributes ONNX's own node tests leave out (directions, sequence_lens, clip, input_forget,
linear_before_reset, activations with alpha and beta; ONNX Runtime refuses layout = 1, which
ONNX's test_*_batchwise cases cover). The host evaluators
(src/frontend/ConstantEvaluatorRecurrent.cpp) are checked against them by the onnx-conformance
test (tests/conformance/meson.build).

Usage (ONNX Runtime from npm, as the project's README allows):
    (cd /tmp/ort && npm install --ignore-scripts onnxruntime-node)
    /usr/bin/python3 tests/conformance/recurrent/make_cases.py /tmp/ort/node_modules
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ort_reference import run_ort, write_case  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SEQ, BATCH, INPUT, HIDDEN = 4, 3, 5, 4
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}

# name: (operator, attributes, optional inputs given)
CASES = {
    "lstm_bidirectional_seq_lens": ("LSTM", {"direction": "bidirectional"},
                                    ["B", "sequence_lens", "initial_h", "initial_c", "P"]),
    "lstm_reverse_clip_input_forget": ("LSTM", {"direction": "reverse", "clip": 0.6,
                                                "input_forget": 1}, ["B", "initial_h"]),
    "lstm_activations_alpha": ("LSTM", {"activations": ["HardSigmoid", "Elu", "Softsign"],
                                        "activation_alpha": [0.3, 0.7],
                                        "activation_beta": [0.45]}, ["B"]),
    "gru_linear_before_reset_bidirectional": ("GRU", {"direction": "bidirectional",
                                                      "linear_before_reset": 1},
                                              ["B", "sequence_lens", "initial_h"]),
    "gru_reverse_activations": ("GRU", {"direction": "reverse",
                                        "activations": ["HardSigmoid", "LeakyRelu"],
                                        "activation_alpha": [0.3, 0.05],
                                        "activation_beta": [0.4]}, ["B"]),
    "gru_clip_seq_lens": ("GRU", {"clip": 0.8},
                             ["B", "sequence_lens", "initial_h"]),
    "rnn_bidirectional_relu_seq_lens": ("RNN", {"direction": "bidirectional",
                                                "activations": ["Relu", "Tanh"]},
                                        ["B", "sequence_lens", "initial_h"]),
    "rnn_scaled_tanh": ("RNN", {"activations": ["ScaledTanh"],
                                        "activation_alpha": [1.3], "activation_beta": [0.6]},
                                ["B"]),
}


def make_case(name, op, attrs, optional, rng):
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    layout = attrs.get("layout", 0)
    g = GATES[op]
    x_shape = [BATCH, SEQ, INPUT] if layout else [SEQ, BATCH, INPUT]
    state = [BATCH, dirs, HIDDEN] if layout else [dirs, BATCH, HIDDEN]
    shapes = {"X": x_shape, "W": [dirs, g * HIDDEN, INPUT], "R": [dirs, g * HIDDEN, HIDDEN],
              "B": [dirs, 2 * g * HIDDEN], "sequence_lens": [BATCH], "initial_h": state,
              "initial_c": state, "P": [dirs, 3 * HIDDEN]}
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"][
        :8 if op == "LSTM" else 6]
    given = ["X", "W", "R"] + optional
    names = [n if n in given else "" for n in order]
    while names and not names[-1]:
        names.pop()
    values = {}
    for n in given:
        if n == "sequence_lens":
            values[n] = np.array([SEQ, 2, 3], dtype=np.int32)
        else:
            values[n] = rng.uniform(-1, 1, shapes[n]).astype(np.float32)
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outputs, hidden_size=HIDDEN, **attrs)
    inputs = [helper.make_tensor_value_info(
        n, TensorProto.INT32 if n == "sequence_lens" else TensorProto.FLOAT, shapes[n])
        for n in given]
    y = [BATCH, SEQ, dirs, HIDDEN] if layout else [SEQ, dirs, BATCH, HIDDEN]
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, y if o == "Y" else state)
            for o in outputs]
    folder = write_case(HERE, name, [node], inputs, outs, 14, values)
    return folder, given, values, outputs


def main():
    node_modules = sys.argv[1]
    rng = np.random.default_rng(20261202)
    for name, (op, attrs, optional) in CASES.items():
        folder, given, values, outputs = make_case(name, op, attrs, optional, rng)
        run_ort(node_modules, folder, given, values, outputs)
        print("wrote", folder)


if __name__ == "__main__":
    main()
