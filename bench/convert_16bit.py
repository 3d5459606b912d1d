#!/usr/bin/env python3
"""A model folder (model.onnx, test_data_set_0/) converted to a 16-bit model, as a user who exports
in bf16 or fp16 brings one: every float initializer, graph input and output, Constant value and
Cast-to-float becomes the 16-bit type, and so do the float test inputs; the float32 reference
outputs are kept, so check_models.py reports the 16-bit model's error against the fp32 model.
Values beyond the type's range (an attention mask's float32 minimum) are clamped to its largest
finite value rather than becoming infinities. For the benchmarks of 16-bit operands
(bench/README.md); not every model converts (a float32 Where branch, for one, breaks ONNX's
type checks).

usage: /usr/bin/python3 bench/convert_16bit.py SRC_DIR DST_DIR bf16|fp16
"""
import glob
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BF16_MAX = 3.3895313892515355e38


def to_16bit(t, kind):
    """A float32 TensorProto as `kind`, rounded to nearest even; other tensors unchanged."""
    if t.data_type != TensorProto.FLOAT:
        return t
    a = numpy_helper.to_array(t)
    if kind == "fp16":
        info = np.finfo(np.float16)
        return numpy_helper.from_array(np.clip(a, info.min, info.max).astype(np.float16), t.name)
    bits = np.ascontiguousarray(np.clip(a, -BF16_MAX, BF16_MAX), dtype=np.float32)
    u = bits.reshape(-1).view(np.uint32)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return helper.make_tensor(t.name, TensorProto.BFLOAT16, a.shape, rounded.tobytes(), raw=True)


def convert_model(src, dst, kind):
    elem = TensorProto.FLOAT16 if kind == "fp16" else TensorProto.BFLOAT16
    m = onnx.load(src)
    g = m.graph
    for i, t in enumerate(g.initializer):
        g.initializer[i].CopyFrom(to_16bit(t, kind))
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = elem
    del g.value_info[:]  # recomputed by shape inference
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = elem
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(to_16bit(a.t, kind))
    onnx.save(m, dst)


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("bf16", "fp16"):
        sys.exit(__doc__)
    src, dst, kind = sys.argv[1:]
    os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
    convert_model(os.path.join(src, "model.onnx"), os.path.join(dst, "model.onnx"), kind)
    for f in sorted(glob.glob(os.path.join(src, "test_data_set_0", "*.pb"))):
        out = os.path.join(dst, "test_data_set_0", os.path.basename(f))
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        if os.path.basename(f).startswith("input") and t.data_type == TensorProto.FLOAT:
            with open(out, "wb") as fh:
                fh.write(to_16bit(t, kind).SerializeToString())
        else:
            shutil.copy(f, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
