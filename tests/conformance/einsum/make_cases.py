#!/usr/bin/python3
"""Writes Einsum conformance cases into this folder, in the layout of ONNX's backend test data,
with the outputs computed by ONNX Runtime (../ort_reference.py). ONNX's own Einsum node tests
are all float64, which no NEFF tensor carries in or out of a model (NHC_EDTY001); these are
float32 and int32 and add what they leave out: an ellipsis that broadcasts, implicit outputs,
a trace, three and four operands. The host evaluator (src/frontend/ConstantEvaluatorLinearAlgebra.cpp)
and the contractions rewritten for the device (src/frontend/DecomposeEinsum.h) are checked
against them by the onnx-conformance test (tests/conformance/meson.build).

Usage (ONNX Runtime from npm, as the project's README allows):
    (cd /tmp/ort && npm install --ignore-scripts onnxruntime-node)
    /usr/bin/python3 tests/conformance/einsum/make_cases.py /tmp/ort/node_modules
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ort_reference import run_ort, write_case  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (equation, operand shapes, NumPy type)
CASES = {
    "einsum_batch_matmul": ("bij,bjk->bik", [[3, 2, 4], [3, 4, 5]], np.float32),
    "einsum_ellipsis_broadcast": ("...ij,...jk->...ik", [[2, 1, 3, 4], [1, 5, 4, 2]], np.float32),
    "einsum_ellipsis_diagonal": ("...ii->...i", [[3, 4, 4]], np.float32),
    "einsum_implicit_trace": ("ii", [[4, 4]], np.float32),
    "einsum_implicit_matmul": ("ij,jk", [[3, 4], [4, 5]], np.float32),
    "einsum_three_operands": ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]], np.float32),
    "einsum_transpose_sum": ("ijk->ki", [[2, 3, 4]], np.float32),
    "einsum_outer": ("i,j->ij", [[3], [4]], np.float32),
    "einsum_int32": ("ij,jk->ik", [[3, 4], [4, 2]], np.int32),
    # Contractions the front end rewrites as MatMuls (src/frontend/DecomposeEinsum.h): attention's
    # two products, a linear layer over an ellipsis, labels summed within one operand, batch
    # labels in the middle, a scalar; and one it leaves to the host (a diagonal beside a
    # product).
    "einsum_attention_scores": ("bhqd,bhkd->bhqk", [[1, 2, 5, 8], [1, 2, 6, 8]], np.float32),
    "einsum_attention_values": ("bhqk,bhkd->bhqd", [[1, 2, 5, 6], [1, 2, 6, 8]], np.float32),
    "einsum_linear_ellipsis": ("...ij,kj->...ik", [[2, 3, 4], [5, 4]], np.float32),
    "einsum_own_sum": ("bij,bjk->bk", [[2, 3, 4], [2, 4, 5]], np.float32),
    "einsum_middle_batch": ("ibj,jbk->bki", [[3, 2, 4], [4, 2, 5]], np.float32),
    "einsum_inner": ("i,i->", [[6], [6]], np.float32),
    "einsum_diagonal_product": ("ii,ij->j", [[3, 3], [3, 4]], np.float32),
    # Three and four operands, multiplied left to right on the device: a bilinear form (a label
    # of the first operand kept for the third), a chain over an ellipsis, a label summed within
    # the first, a batch label all share with the output reordered, and a cycle summed to a
    # scalar (the first operand's i kept for the third).
    "einsum_bilinear": ("bi,ij,bj->b", [[3, 4], [4, 5], [3, 5]], np.float32),
    "einsum_chain_ellipsis": ("...ij,jk,kl->...il", [[2, 3, 4], [4, 5], [5, 2]], np.float32),
    "einsum_three_own_sum": ("ijk,jl,lm->im", [[2, 3, 4], [3, 5], [5, 2]], np.float32),
    "einsum_three_batch": ("bij,bjk,bkl->bli", [[2, 3, 4], [2, 4, 5], [2, 5, 3]], np.float32),
    "einsum_four_cycle": ("ij,jk,kl,li->", [[3, 4], [4, 5], [5, 2], [2, 3]], np.float32),
}


def make_case(name, equation, shapes, dtype, rng):
    elem = TensorProto.INT32 if dtype == np.int32 else TensorProto.FLOAT
    names = [f"x{i}" for i in range(len(shapes))]
    values = {}
    for n, s in zip(names, shapes):
        if dtype == np.int32:
            values[n] = rng.integers(-5, 6, s).astype(np.int32)
        else:
            values[n] = rng.uniform(-1, 1, s).astype(np.float32)
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    inputs = [helper.make_tensor_value_info(n, elem, s) for n, s in zip(names, shapes)]
    # The output's shape as NumPy's einsum gives it (its values come from ONNX Runtime).
    y_shape = np.einsum(equation, *[values[n] for n in names]).shape
    outs = [helper.make_tensor_value_info("y", elem, list(y_shape))]
    folder = write_case(HERE, name, [node], inputs, outs, 12, values)
    return folder, names, values


def main():
    node_modules = sys.argv[1]
    rng = np.random.default_rng(20261202)
    for name, (equation, shapes, dtype) in CASES.items():
        folder, names, values = make_case(name, equation, shapes, dtype, rng)
        run_ort(node_modules, folder, names, values, ["y"], {"y": dtype})
        print("wrote", folder)


if __name__ == "__main__":
    main()
