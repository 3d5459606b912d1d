#!/usr/bin/env python3
"""Issue 16's compile-time vs latency table, through the user's tools: for each model, compile
with neuron-halide-cc at each -O level under each auto-cast setting, run the NEFF on the timing
simulator (neuron-halide-run --timing-only), and report the compile's wall time and peak memory,
the simulated latency, the speed-up over -O1, and the autoscheduler's summary line. A benchmark,
not a test: nothing is asserted. Values are checked by check_models.py (same options).

usage: /usr/bin/python3 bench/opt_levels.py [--build build] [--cast none,bf16] [--levels 1,2,3]
       [--model-type generic,transformer] MODEL.onnx...

Speed-ups are over the first level of the first model type of each model and cast.
"""
import argparse
import json
import os
import re
import sys
import tempfile

from check_models import CASTS, timed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="+")
    parser.add_argument("--build", default="build")
    parser.add_argument("--cast", default="none")
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--model-type", default="generic")
    parser.add_argument("--timeout", type=int, default=3600)
    args = parser.parse_args()
    cc = os.path.join(args.build, "tools", "neuron-halide-cc")
    run = os.path.join(args.build, "tools", "neuron-halide-run")
    with tempfile.TemporaryDirectory() as work:
        for model in args.models:
            name = os.path.basename(os.path.dirname(os.path.abspath(model)))
            for cast in args.cast.split(","):
                base = None
                for model_type, level in [(t, l) for t in args.model_type.split(",")
                                          for l in args.levels.split(",")]:
                    neff, log = os.path.join(work, "m.neff"), os.path.join(work, "log.txt")
                    row = {"model": name, "cast": cast, "model_type": model_type,
                           "level": "-O" + level}
                    code, secs, gb, err = timed([cc, model, "-O" + level, "--output", neff, "--no-cache",
                                                 "--logfile", log, "--model-type", model_type]
                                                + CASTS[cast], args.timeout)
                    row.update(compile_s=round(secs, 1), compile_gb=round(gb, 2))
                    with open(log) as f: # the last run's summary (the log may be appended to)
                        found = re.findall(r"autoschedule: -O\d.*", f.read())
                    if code != 0:
                        row["error"] = err.strip().splitlines()[-1] if err.strip() else str(code)
                        print(json.dumps(row), flush=True)
                        continue
                    code, _, _, out = timed([run, neff, "--timing-only", "--summary-json",
                                             os.path.join(work, "s.json")], args.timeout)
                    with open(os.path.join(work, "s.json")) as f:
                        us = json.load(f)["total_time_us"]
                    base = base or us
                    row.update(latency_us=round(us, 1), speedup=round(base / us, 3))
                    if found:
                        row["search"] = found[-1]
                    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
