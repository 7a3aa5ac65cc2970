"""``graph-kernels sweep --confirm N``: does the best cell hold in fresh processes?

Kernel times differ by up to ±15 % between processes on one GPU (memory placement), and a
sweep measures each cell in one process, so its best may be luck. Confirming runs the leading
cells again — those that cannot be told apart from the best (:mod:`kernels.results.noise`) and
the next fastest, at most :data:`MAX_LEADERS` — once in each of ``N`` fresh sets of worker
processes, and judges on what the processes measured: each leader's geometric mean over its
``N + 1`` medians (the sweep's and the new ones), the between-process spread ``ρ`` measured from
them (pooled), and the same 95 % rule: a leader is tied with the new best when
``ln(g / g_best) ≤ 1.96 · ρ · √(2 / (N + 1))``. The best **holds** when the sweep's best is the new
best or tied with it.
"""

from __future__ import annotations

import math
import statistics

from kernels.compute.backend import Job
from kernels.errors import GraphKernelsError
from kernels.results.noise import PROCESS_SPREAD, Z95, process_spread_of

MAX_LEADERS = 8
EXTRA_LEADERS = 2             # beyond the cells tied with the best: the next fastest


def leaders(sweep: dict) -> list[dict]:
    ok = sorted((c for c in sweep["cells"] if c["status"] == "ok" and c.get("median_s")), key=lambda c: c["median_s"])
    tied = sweep.get("tied_with_best") or []
    n = min(MAX_LEADERS, max(len(tied), 1) + EXTRA_LEADERS)
    return ok[:n]


def _key(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def confirm_best(graph, sweep: dict, backend, processes: int, *, progress=None) -> dict:
    """Run the leaders of ``sweep`` again in ``processes`` fresh sets of processes of ``backend``
    (see the module) and return the verdict (what the sweep file's ``confirm`` line holds)."""
    if processes < 1:
        raise GraphKernelsError("--confirm needs a number of fresh processes >= 1")
    cells = leaders(sweep)
    if not cells:
        raise GraphKernelsError("nothing to confirm: the sweep has no verified cell")
    key = f"confirm-{graph.fingerprint}"
    backend.add_graph(key, graph)
    medians = {_key(c["params"]): [c["median_s"]] for c in cells}
    failures = []
    for round_ in range(processes):
        backend.fresh_processes()
        jobs = [Job(key, sweep["family"], sweep["variant"], {**(sweep.get("fixed") or {}), **c["params"]},
                    target=sweep.get("target"), repeat=sweep.get("repeat", 5), warmup=sweep.get("warmup", 1),
                    seed=sweep.get("seed", 0), launch=sweep.get("launch", "auto"), tag=c["params"],
                    time_limit=sweep.get("time_limit") or 300.0) for c in cells]
        for outcome in backend.run_many(jobs):
            if outcome.ok and outcome.record.get("verified"):
                medians[_key(outcome.job.tag)].append(outcome.record["timing"]["kernel"]["median_s"])
            else:
                failures.append(f"{_key(outcome.job.tag)}: {outcome.reason or 'not verified'}")
        if progress is not None:
            progress(round_ + 1, processes)
    spread = process_spread_of(medians)
    rho = spread if spread is not None else PROCESS_SPREAD
    geomean = {k: math.exp(statistics.fmean(math.log(v) for v in vs)) for k, vs in medians.items()}
    order = sorted(cells, key=lambda c: geomean[_key(c["params"])])
    new_best = order[0]["params"]
    g_best = geomean[_key(new_best)]
    runs = processes + 1
    band = Z95 * rho * math.sqrt(2.0 / runs)
    tied = [c["params"] for c in order if math.log(geomean[_key(c["params"])] / g_best) <= band]
    old_best = sweep["best"]["params"]
    return {"kind": "confirm", "processes": processes, "process_spread": round(rho, 5),
            "spread_measured": spread is not None,
            "cells": [{"params": c["params"], "medians_s": medians[_key(c["params"])],
                       "geomean_s": geomean[_key(c["params"])]} for c in order],
            "best": new_best, "tied": tied, "holds": old_best == new_best or old_best in tied,
            "failures": failures[:10]}


def describe(confirmation: dict, old_best: dict) -> str:
    """The verdict in one sentence."""
    n = confirmation["processes"]
    cells = {_key(c["params"]): c for c in confirmation["cells"]}
    new, old = _key(confirmation["best"]), _key(old_best)
    g_new = cells[new]["geomean_s"]

    def slower(key: str) -> str:
        return f"+{100 * (cells[key]['geomean_s'] / g_new - 1):.1f} %"

    if new == old:
        verdict = f"the best holds: {old} is the fastest in {n} fresh process(es) too"
    elif confirmation["holds"]:
        verdict = (f"the best holds within the noise: in {n} fresh process(es) {new} was fastest and {old} "
                   f"({slower(old)}) cannot be told apart from it")
    else:
        verdict = f"the best does not hold: in {n} fresh process(es) {new} is faster than {old} ({slower(old)})"
    rho = confirmation["process_spread"]
    verdict += (f"; between processes the leaders' times vary by {100 * rho:.1f} %"
                f"{'' if confirmation['spread_measured'] else ' (assumed)'}")
    others = [k for k in map(_key, confirmation["tied"]) if k not in (new, old)]
    if others:
        verdict += f"; also tied with {new}: " + ", ".join(f"{k} ({slower(k)})" for k in others)
    if confirmation["failures"]:
        verdict += f"; {len(confirmation['failures'])} rerun(s) failed ({confirmation['failures'][0]})"
    return verdict
