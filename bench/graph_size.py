#!/usr/bin/env python3
"""Compile time and peak memory against a graph's size (issue 19's resource limits): models of
Neg nodes, either one chain from the input to the output ("deep") or side by side, each its own
graph output ("wide"), compiled by neuron-halide-cc; prints nodes, wall seconds and peak RSS.

usage: /usr/bin/python3 bench/graph_size.py [--cc build/tools/neuron-halide-cc]
           [--deep 2000,20000] [--wide 2000,20000]"""
import argparse
import os
import subprocess
import tempfile
import time

import onnx
from onnx import TensorProto, helper


def neg_model(n, deep):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    if deep:
        names = [f"t{i}" for i in range(n - 1)] + ["y"]
        nodes = [helper.make_node("Neg", [a], [b], name=f"n{i}")
                 for i, (a, b) in enumerate(zip(["x"] + names[:-1], names))]
        outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])]
    else:
        nodes = [helper.make_node("Neg", ["x"], [f"o{i}"], name=f"n{i}") for i in range(n)]
        outputs = [helper.make_tensor_value_info(f"o{i}", TensorProto.FLOAT, [4])
                   for i in range(n)]
    graph = helper.make_graph(nodes, "deep" if deep else "wide", [x], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def compile_once(cc, path, out):
    start = time.monotonic()
    r = subprocess.run(["/usr/bin/time", "-f", "peak_rss_kb %M", cc, path, "--output", out, "--no-cache"],
                       capture_output=True, text=True)
    wall = time.monotonic() - start
    lines = (r.stdout + r.stderr).strip().splitlines()
    peak = next((int(l.split()[1]) for l in lines if l.startswith("peak_rss_kb")), 0)
    status = "ok" if r.returncode == 0 else next(l for l in lines if "NHC_E" in l or "rror" in l)
    return wall, peak, status


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cc", default="build/tools/neuron-halide-cc")
    p.add_argument("--deep", default="2000,20000")
    p.add_argument("--wide", default="2000,20000")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        print("| graph | nodes | wall (s) | peak RSS (MB) | result |\n|---|---|---|---|---|")
        for kind, sizes in (("deep", a.deep), ("wide", a.wide)):
            for n in [int(s) for s in sizes.split(",") if s]:
                path = os.path.join(d, f"{kind}{n}.onnx")
                onnx.save(neg_model(n, kind == "deep"), path)
                wall, peak, status = compile_once(a.cc, path, os.path.join(d, "out.neff"))
                print(f"| {kind} | {n} | {wall:.2f} | {peak / 1024:.0f} | {status} |", flush=True)


if __name__ == "__main__":
    main()
