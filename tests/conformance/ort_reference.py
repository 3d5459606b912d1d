"""ONNX Runtime as the reference of the conformance cases this folder's generators write
(recurrent/make_cases.py, einsum/make_cases.py): runs a case's model on its inputs through
onnxruntime-node (npm, as the project's README allows) and writes the outputs in the layout of
ONNX's backend test data (<case>/test_data_set_0/output_i.pb)."""
import json
import os
import shutil
import subprocess

import numpy as np
import onnx
from onnx import helper, numpy_helper

def write_case(root, name, nodes, inputs, outputs, opset, values):
    """Writes the case `name` under `root`: a model of `nodes` (ir_version 8, checked), and its
    inputs `values` (by the names of `inputs`, in order) as test_data_set_0/input_i.pb.
    Returns the case's folder."""
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    folder = os.path.join(root, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for i, vi in enumerate(inputs):
        t = numpy_helper.from_array(values[vi.name], vi.name)
        with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    return folder


ORT_SCRIPT = r"""
const ort = require('onnxruntime-node');
const fs = require('fs');
(async () => {
  const job = JSON.parse(fs.readFileSync(process.argv[2]));
  const session = await ort.InferenceSession.create(job.model);
  const feeds = {};
  for (const i of job.inputs) {
    const bytes = fs.readFileSync(i.file);
    const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
    const arrays = {float32: Float32Array, int32: Int32Array, int64: BigInt64Array,
                    uint8: Uint8Array, int8: Int8Array, float64: Float64Array};
    const data = new arrays[i.dtype](buf);
    feeds[i.name] = new ort.Tensor(i.dtype, data, i.shape);
  }
  const out = await session.run(feeds);
  const result = {};
  for (const name of Object.keys(out)) {
    fs.writeFileSync(job.prefix + name + '.bin', Buffer.from(out[name].data.buffer));
    result[name] = out[name].dims;
  }
  fs.writeFileSync(job.prefix + 'dims.json', JSON.stringify(result));
})();
"""


def run_ort(node_modules, folder, given, values, outputs, output_dtypes=None):
    """`output_dtypes`: each output's NumPy type (float32 when not given)."""
    work = os.path.join(folder, "ort")
    os.makedirs(work, exist_ok=True)
    inputs = []
    for n in given:
        path = os.path.join(work, n + ".bin")
        values[n].tofile(path)
        inputs.append({"name": n, "file": path, "shape": list(values[n].shape),
                       "dtype": values[n].dtype.name})
    job = os.path.join(work, "job.json")
    with open(job, "w") as f:
        json.dump({"model": os.path.join(folder, "model.onnx"), "inputs": inputs,
                   "prefix": work + "/"}, f)
    script = os.path.join(work, "run.js")
    with open(script, "w") as f:
        f.write(ORT_SCRIPT)
    env = dict(os.environ, NODE_PATH=node_modules)
    subprocess.run(["node", script, job], check=True, env=env)
    with open(os.path.join(work, "dims.json")) as f:
        dims = json.load(f)
    for i, o in enumerate(outputs):
        dtype = (output_dtypes or {}).get(o, np.float32)
        a = np.fromfile(os.path.join(work, o + ".bin"), dtype=dtype).reshape(dims[o])
        t = numpy_helper.from_array(a, o)
        with open(os.path.join(folder, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    shutil.rmtree(work)
