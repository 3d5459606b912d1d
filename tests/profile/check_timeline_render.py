"""The profile folder as a person sees it (issue 18): compile a model with neuron-halide-cc, run it
with `neuron-halide-run --timing-only --profile-dir`, check that the per-node table sums to the
latency, largest first, and render timeline.svg in headless Chromium (Debian's `chromium`): in
the screenshot every lane shows its label, every lane with instructions shows coloured bars, and
a lane without any shows none.

usage: check_timeline_render.py CC RUN MODEL
"""

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from PIL import Image

LABEL_RIGHT = 118  # the lanes' labels end left of the plot (TimelineSvg.cpp's kLabelWidth = 120)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def check_table(prof):
    with open(os.path.join(prof, "nodes.json")) as f:
        table = json.load(f)
    times = [r["time_us"] for r in table["rows"]]
    total = table["total_time_us"]
    assert abs(sum(times) - total) <= 1e-6 * total, (sum(times), total)
    assert times == sorted(times, reverse=True), times
    with open(os.path.join(prof, "nodes.md")) as f:
        rows = [l for l in f if l.startswith("| ") and not l.startswith("| time")]
    assert len(rows) == len(times), (len(rows), len(times))
    print("table: %d rows summing to %.3f us" % (len(times), total))


def lanes_with_events(prof):
    with open(os.path.join(prof, "trace.json")) as f:
        events = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    busy = {names[e["tid"]] for e in events if e.get("ph") == "X"}
    return busy | {"critical path"} if busy else busy


def screenshot(svg, width, height, png):
    cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--screenshot=" + png, "--window-size=%d,%d" % (width, height), "file://" + svg]
    try:
        subprocess.run(cmd, capture_output=True, timeout=120, check=True)
    except FileNotFoundError:
        sys.exit("FAIL: chromium is not installed (scripts/setup.sh installs it)")
    image = Image.open(png).convert("RGB")
    assert image.size == (width, height), image.size
    return image


def count_pixels(image, box, keep):
    px = image.load()
    x0, y0, x1, y1 = box
    return sum(1 for y in range(y0, y1) for x in range(x0, x1) if keep(px[x, y]))


def dark(p):
    return sum(p) < 300


def bar(p):  # a group's colour, or the critical path's black; not the greys of lanes and grid
    return max(p) - min(p) > 30 or max(p) < 60


def main():
    cc, runner, model = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as work:
        neff, prof = os.path.join(work, "m.neff"), os.path.join(work, "prof")
        run([cc, model, "--no-cache", "--output", neff, "--logfile", os.path.join(work, "log")])
        run([runner, neff, "--timing-only", "--profile-dir", prof])
        check_table(prof)
        svg = os.path.join(prof, "timeline.svg")
        root = ET.parse(svg).getroot()
        width, height = int(root.get("width")), int(root.get("height"))
        lanes = [(r.get("data-lane"), float(r.get("y")), float(r.get("height")),
                  float(r.get("x")), float(r.get("width")))
                 for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "lane"]
        busy = lanes_with_events(prof)
        assert {"pe", "act", "dve", "pool", "sp", "critical path"} <= {l[0] for l in lanes}, lanes
        assert busy <= {l[0] for l in lanes}, (busy, lanes)
        image = screenshot(svg, width, height, os.path.join(work, "shot.png"))
        for name, y, h, x, w in lanes:
            band = (int(y) + 2, int(y + h) - 2)
            label = count_pixels(image, (10, band[0], LABEL_RIGHT, band[1]), dark)
            bars = count_pixels(image, (int(x), band[0], int(x + w), band[1]), bar)
            print("lane %-14s label %4d dark pixels, bars %6d coloured pixels" % (name, label, bars))
            assert label > 5, "lane %s: no label drawn" % name
            if name in busy:
                assert bars > 0, "lane %s has instructions but no bars drawn" % name
            else:
                assert bars == 0, "lane %s has no instructions but coloured pixels" % name
    print("PASS")


if __name__ == "__main__":
    main()
