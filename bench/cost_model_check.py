#!/usr/bin/env python3
"""Issue 16's cost-model check: for every workload of a tuning database (neuron-halide-tune) with
at least --min feasible candidates, the Spearman rank correlation between the analytic estimate
recorded with each candidate (predicted_ns: the window the candidate is measured in, its
scheduled instructions replayed as the simulator runs them without semaphores or values, from
src/target's cost formulas: codegen::replay_estimate, autoscheduler/MeasureGroup.h) and its
simulated time in that window, between its neighbours (simulated_ns). Then the search's pruning
(Autoschedule.h's kPruneAbove) replayed on each workload's candidates in search order, under two
rules: a candidate is not simulated when its estimate is above 1.1 times the best simulated time
so far, or above 1.1 times the estimate of the best candidate so far; for each, the candidates it
leaves unsimulated and the workloads whose choice it changes, with the time lost. The
correlation is also given over the workloads whose simulated candidates span at least --spread
(2%) of the best: among near-ties (all candidates within it, or all equal) the ranking decides
little, since the search simulates the candidates it keeps. A benchmark, not a test: nothing is
asserted.

usage: /usr/bin/python3 bench/cost_model_check.py [--min 3] [--prune-above 1.1] [--spread 0.02]
       TUNE.db...
"""
import argparse
import sqlite3
import sys


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx > 0 and vy > 0 else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dbs", nargs="+")
    parser.add_argument("--min", type=int, default=3)
    parser.add_argument("--prune-above", type=float, default=1.1)
    parser.add_argument("--spread", type=float, default=0.02,
                        help="also report the workloads whose simulated candidates span at least "
                             "this fraction of the best (the rest are near-ties)")
    args = parser.parse_args()
    all_rho = []
    spread_rho = []  # workloads whose candidates differ by at least --spread
    near_ties = 0
    ratios = []
    replay = {"simulated": [0, 0, 0.0], "estimate": [0, 0, 0.0]}  # pruned, wrong, ns lost
    for path in args.dbs:
        db = sqlite3.connect(path)
        rows = db.execute("SELECT workload_hash, plan, predicted_ns, simulated_ns FROM records "
                          "WHERE feasible = 1 ORDER BY workload_hash, id").fetchall()
        by_workload = {}
        for h, plan, pred, sim in rows:
            by_workload.setdefault(h, []).append((plan, pred, sim))
        for h, cands in sorted(by_workload.items()):
            if len(cands) < args.min:
                continue
            rho = spearman([c[1] for c in cands], [c[2] for c in cands])
            best_pred = min(cands, key=lambda c: c[1])[0]
            best_sim = min(cands, key=lambda c: c[2])[0]
            all_rho.append(rho)
            sims = [c[2] for c in cands]
            if min(sims) > 0 and max(sims) >= (1 + args.spread) * min(sims):
                spread_rho.append(rho)
            else:
                near_ties += 1
            ratios += [c[1] / c[2] for c in cands if c[2] > 0]
            for rule in replay:
                pruned, chosen = replay_pruning(cands, rule, args.prune_above)
                replay[rule][0] += pruned
                if chosen[2] > min(c[2] for c in cands):
                    replay[rule][1] += 1
                    replay[rule][2] += chosen[2] - min(c[2] for c in cands)
            print("%s %s: %d candidates, Spearman %.2f, estimate picks %s, simulator picks %s"
                  % (path, h, len(cands), rho, best_pred, best_sim))
    valid = [r for r in all_rho if r == r]
    if valid:
        print("workloads: %d, mean Spearman %.2f, min %.2f, >= 0.9: %d"
              % (len(valid), sum(valid) / len(valid), min(valid), sum(r >= 0.9 for r in valid)))
    spread_valid = [r for r in spread_rho if r == r]
    if spread_valid:
        print("workloads whose candidates span >= %.0f%%: %d, mean Spearman %.2f, min %.2f, "
              ">= 0.9: %d; near-ties (or all equal) left out: %d"
              % (100 * args.spread, len(spread_valid), sum(spread_valid) / len(spread_valid),
                 min(spread_valid), sum(r >= 0.9 for r in spread_valid), near_ties))
    if ratios:
        ratios.sort()
        print("estimate / simulated over %d candidates: min %.2f, median %.2f, 99%% %.2f, max %.2f"
              % (len(ratios), ratios[0], ratios[len(ratios) // 2],
                 ratios[min(len(ratios) - 1, int(0.99 * len(ratios)))], ratios[-1]))
    for rule, (pruned, wrong, lost) in replay.items():
        print("pruning above %.2fx the best's %s: %d candidates not simulated, %d workloads choose "
              "another plan, %.1f us lost" % (args.prune_above, rule, pruned, wrong, lost / 1e3))
    return 0


def replay_pruning(cands, rule, above):
    """The search over `cands` (plan, estimate, simulated) in order: each is simulated unless its
    estimate is above `above` times the best's simulated time (rule "simulated") or estimate
    (rule "estimate"); the best simulated wins, the earlier on ties. Returns (candidates not
    simulated, the chosen candidate)."""
    best, pruned = None, 0
    for c in cands:
        if best is not None:
            bound = above * (best[2] if rule == "simulated" else best[1])
            if c[1] > bound:
                pruned += 1
                continue
        if best is None or c[2] < best[2]:
            best = c
    return pruned, best


if __name__ == "__main__":
    sys.exit(main())
