#!/usr/bin/env python3
"""Issue 15's acceptance run, through the user's tools: for each model folder (model.onnx plus
test_data_set_0/ with a float32 reference), compile with neuron-halide-cc at each -O level
(--optlevel, default 2) under each auto-cast setting, run the NEFF with neuron-halide-run, and report the relative L2 error of every output
against the reference, the compile's wall time and peak memory, the simulated latency, and the
peak memory of a timing-only run. A refusal is reported with its error code. A benchmark, not a
test: nothing here is asserted; the table is the report.

usage: /usr/bin/python3 bench/check_models.py [--build build] [--cast none,bf16,all_bf16,all_bf16_nompa,fp8] [--optlevel 1,2,3]
       [--timeout S] DIR...
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

CASTS = {"none": ["--auto-cast", "none"],
         "bf16": ["--auto-cast", "matmult", "--auto-cast-type", "bf16"],
         # every float value stored in bf16, not only the matmuls' operands
         "all_bf16": ["--auto-cast", "all", "--auto-cast-type", "bf16"],
         # and softmax, layer norm and reductions keep their intermediates in bf16
         "all_bf16_nompa": ["--auto-cast", "all", "--auto-cast-type", "bf16",
                            "--disable-mixed-precision-accumulation"],
         # linear layers' weights in fp8_e4m3 with a per-tensor scale, the rest as bf16
         "fp8": ["--auto-cast", "matmult", "--auto-cast-type", "fp8_e4m3"]}
BOUND = {"none": 1e-4, "bf16": 2e-2, "all_bf16": 3e-2, "all_bf16_nompa": 3e-2, "fp8": 1e-1}


def timed(cmd, timeout):
    """Runs cmd under /usr/bin/time -v; returns (exit code, wall s, peak RSS GB, stderr text)."""
    t0 = time.time()
    try:
        p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.time() - t0, 0.0, "timeout after %d s" % timeout
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return p.returncode, time.time() - t0, (int(rss.group(1)) / 1e6 if rss else 0.0), p.stderr


def first_error(text):
    m = re.search(r"(NHC_E[A-Z]+\d+)[^\n]*", text)
    return m.group(0)[:160] if m else text.strip().splitlines()[-1][:160] if text.strip() else "?"


def rel_l2(got, want):
    got, want = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    if not np.linalg.norm(want) > 0:  # an all-zero (or NaN) reference proves nothing
        return float("inf")
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def check(folder, cast, optlevel, tools, timeout, work, model_type="generic"):
    name = os.path.basename(folder.rstrip("/"))
    row = {"model": name, "cast": cast, "optlevel": optlevel, "model_type": model_type}
    neff = os.path.join(work, "%s_%s_O%d.neff" % (name, cast, optlevel))
    code, secs, gb, err = timed([tools["cc"], "compile", os.path.join(folder, "model.onnx"),
                                 "-O%d" % optlevel, "--model-type", model_type,
                                 "--output", neff, "--no-cache"] + CASTS[cast], timeout)
    row.update(compile_s=round(secs, 1), compile_gb=round(gb, 2))
    if code != 0:
        row["error"] = first_error(err)
        return row
    data = os.path.join(folder, "test_data_set_0")
    model = onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False)
    inputs = ["--input=%s=%s" % (i.name, os.path.join(data, "input_%d.pb" % k))
              for k, i in enumerate(model.graph.input)]
    out_dir = os.path.join(work, "%s_%s_O%d_out" % (name, cast, optlevel))
    summary = os.path.join(work, "%s_%s_O%d.json" % (name, cast, optlevel))
    code, secs, gb, err = timed([tools["run"], neff, "--output-dir", out_dir, "--summary-json", summary]
                                + inputs, timeout)
    row.update(run_s=round(secs, 1), run_gb=round(gb, 2))
    if code != 0:
        row["error"] = first_error(err)
        return row
    with open(summary) as f:
        run_summary = json.load(f)
    row["latency_us"] = round(run_summary["total_time_us"], 1)
    if "host" in run_summary:  # host fallback: measured on this CPU, apart from the latency
        row["host_nodes"] = run_summary["host"]["nodes"]
        row["host_us"] = round(run_summary["host"]["time_us"], 1)
    errors = []
    for k, o in enumerate(model.graph.output):
        want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_%d.pb" % k)))
        got = np.load(os.path.join(out_dir, o.name + ".npy"))
        if got.shape != want.shape:  # a length known only at run time (NonMaxSuppression's)
            row.setdefault("shape_mismatch", []).append([o.name, list(got.shape), list(want.shape)])
            errors.append(float("inf"))
            continue
        errors.append(rel_l2(got, want))
    row["rel_l2"] = max(errors)
    row["ok"] = row["rel_l2"] <= BOUND[cast]
    code, secs, gb, err = timed([tools["run"], neff, "--timing-only"], timeout)
    row["timing_only_gb"] = round(gb, 2) if code == 0 else None
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--build", default="build")
    parser.add_argument("--cast", default="none,bf16")
    parser.add_argument("--optlevel", default="2", help="comma-separated -O levels, e.g. 1,2,3")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--model-type", default="generic",
                        help="neuron-halide-cc's --model-type (ignored at -O1, which does not search)")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()
    tools = {"cc": os.path.join(args.build, "tools", "neuron-halide-cc"),
             "run": os.path.join(args.build, "tools", "neuron-halide-run")}
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for folder in args.folders:
            for cast in args.cast.split(","):
                for level in args.optlevel.split(","):
                    model_type = args.model_type if int(level) > 1 else "generic"
                    row = check(folder, cast, int(level), tools, args.timeout, work, model_type)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
