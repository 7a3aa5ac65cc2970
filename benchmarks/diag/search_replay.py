"""Replay a search strategy on a recorded grid sweep: would ``--strategy bayes`` (or ``local``,
``random``) have found the grid's best, and measuring how many cells? No GPU: each cell the
search asks for is answered from the sweep file (its recorded median, times a fresh lognormal
noise factor of ``--noise`` so that the search meets run-to-run noise as on the GPU), in batches
of ``--batch`` cells as a cluster of that many GPUs measures them.

    python3 benchmarks/diag/search_replay.py SWEEP.json [SWEEP.json ...] [--strategy bayes]
        [--budget 0.3] [--seeds 1-20] [--batch 4] [--noise 0.01]

A search is judged as ``bench_bayes.py`` judges it: the cell it found best (by its own noisy
measurements), that cell's time in the grid file over the grid's best; within 2 % is a hit. The
budget is a share of the grid's *valid* cells. This is how the strategy's rules were chosen
(docs/cluster.md, "A search that keeps every GPU busy"): many seeds in seconds, not three seeds
in minutes of GPU time.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kernels.compute.strategies import SearchSpace, search, unique_values  # noqa: E402
from kernels.results import load_sweep  # noqa: E402
from kernels.results.records import Strategy  # noqa: E402


def _key(space: SearchSpace, params: dict) -> tuple:
    return space.key({n: params[n] for n in space.names})


def replay(sweep: dict, strategy: str, budget_share: float, seed: int, batch: int, noise: float) -> dict:
    grid = unique_values({k: list(v) for k, v in sweep["grid"].items()})
    space = SearchSpace(grid)
    recorded = {_key(space, c["params"]): c for c in sweep["cells"]}
    valid_keys = {k for k, c in recorded.items() if c["status"] != "invalid"}
    ok = {k: c["median_s"] for k, c in recorded.items() if c["status"] == "ok"}
    budget = max(1, int(budget_share * len(valid_keys)))
    rng = random.Random(seed * 7919 + 1)
    state = {"measured": 0, "known": {}}

    def exhausted() -> bool:
        return state["measured"] >= budget

    def evaluate(combos, limit=None):
        out, room = [], budget - state["measured"]
        if limit is not None:
            room = min(room, limit)
        fresh = 0
        for combo in combos:
            key = space.key(combo)
            if key in state["known"]:
                out.append(state["known"][key])
                continue
            if key not in valid_keys:
                cell = {"params": combo, "status": "invalid"}
                state["known"][key] = cell
                out.append(cell)
                continue
            if fresh >= room:
                break
            fresh += 1
            state["measured"] += 1
            if key in ok:
                seconds = ok[key] * math.exp(rng.gauss(0.0, noise)) if noise else ok[key]
                cell = {"params": combo, "status": "ok", "median_s": seconds}
            else:
                cell = {"params": combo, "status": recorded[key]["status"] if key in recorded else "failed"}
            state["known"][key] = cell
            out.append(cell)
        return out

    def valid(combo) -> bool:
        return space.key(combo) in valid_keys

    search(Strategy(strategy, budget, None, seed), space, evaluate, exhausted, valid=valid, batch=batch)
    measured = [c for c in state["known"].values() if c["status"] == "ok"]
    found = min(measured, key=lambda c: c["median_s"])
    best = min(ok.values())
    return {"seed": seed, "cells": state["measured"], "budget": budget, "valid": len(valid_keys),
            "ratio": ok[space.key(found["params"])] / best, "found": found["params"]}


def seeds_of(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-", 1)
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweeps", nargs="+", type=Path)
    ap.add_argument("--strategy", default="bayes")
    ap.add_argument("--budget", type=float, default=0.30, help="share of the grid's valid cells")
    ap.add_argument("--seeds", default="1-20")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--noise", type=float, default=0.01, help="lognormal sigma of each replayed measurement")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    for path in args.sweeps:
        sweep = load_sweep(path)
        rows = [replay(sweep, args.strategy, args.budget, s, args.batch, args.noise) for s in seeds_of(args.seeds)]
        if args.verbose:
            for r in rows:
                print(f"  seed {r['seed']}: {r['cells']}/{r['valid']} cells, {r['ratio']:.3f}x  {r['found']}")
        ratios = [r["ratio"] for r in rows]
        hits = sum(r <= 1.02 for r in ratios)
        print(f"{path.name}: {sweep['family']}/{sweep['variant']}, {args.strategy}, budget {rows[0]['budget']} of "
              f"{rows[0]['valid']} valid cells: within 2 % on {hits}/{len(rows)} seeds; median "
              f"{statistics.median(ratios):.3f}x, worst {max(ratios):.3f}x; cells measured "
              f"{min(r['cells'] for r in rows)}-{max(r['cells'] for r in rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
