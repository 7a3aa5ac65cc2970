"""Replay the ``alpha``/``beta`` and ``delta`` auto rules on measured sweeps.

``python3 benchmarks/diag/traversal_auto_fit.py [DIR]`` reads the ``summary.json`` files that
``benchmarks/bench_traversal_auto.py`` wrote (default: every ``benchmarks/results/traversal/
auto-fit/*/{bfs,sssp}/summary.json``), asks the rules in :mod:`kernels.algorithms.auto_rules`
what they choose from each graph's recorded features, and prints the chosen cell's time over the
swept best, per graph and per set (fit / held out).

* ``alpha``/``beta``: the rule's values are cells of the sweep's grid; their time is read.
* ``delta``: the rule's value lies between grid points (multiples of the mean weight); its time is
  interpolated on log(delta) between the two nearest cells -- an estimate; the benchmark's own
  ``auto`` cell, measured at the rule of the time it ran, is printed beside it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kernels.algorithms.auto_rules import bfs_direction_thresholds, sssp_delta  # noqa: E402

WITHIN_AB, WITHIN_DELTA = 1.05, 1.10


def bfs_rows(summary: dict) -> list[dict]:
    rows = []
    for g in summary["bfs"]:
        f = g["features"]
        times = {(c["params"]["alpha"], c["params"]["beta"]): c["median_s"] for c in g["cells"] if c["status"] == "ok"}
        alpha, beta = bfs_direction_thresholds(False, entries=f["entries"], hop_eccentricity=f["hop_eccentricity"],
                                               reached=f["reached"], with_edges=f["with_edges"])
        chosen = times.get((alpha.value, beta.value))
        best = min(times.values())
        rows.append({"set": g["set"], "graph": g["graph"], "chose": f"alpha {alpha.value:g}, beta {beta.value:g}",
                     "ratio": chosen / best if chosen else None, "best": min(times, key=times.get)})
    return rows


def delta_rows(summary: dict) -> list[dict]:
    rows = []
    for g in summary["sssp"]:
        f = g["features"]
        cells = [c for c in g["cells"] if c["status"] == "ok"]
        grid = sorted((c["params"]["delta"], c["median_s"]) for c in cells if c["params"]["delta"] != "auto")
        measured_auto = next((c for c in cells if c["params"]["delta"] == "auto"), None)
        best = min(t for _, t in grid)
        # the rule sees the graph's weights only through their mean: a stand-in array with that mean
        choice = sssp_delta(np.array([f["mean_weight"]]), f["entries"], f["hop_eccentricity"])
        xs, ts = np.log([d for d, _ in grid]), [t for _, t in grid]
        estimate = float(np.interp(np.log(choice.value), xs, ts))
        rows.append({"set": g["set"], "graph": g["graph"], "chose": f"delta {choice.value:.4g} "
                     f"({choice.value / f['mean_weight']:.3g} mean weights)", "ratio": estimate / best,
                     "then_auto": (measured_auto["median_s"] / best if measured_auto else None),
                     "best": min(grid, key=lambda x: x[1])[0]})
    return rows


def report(title: str, rows: list[dict], within: float) -> None:
    print(f"== {title} (chosen / swept best; within {within - 1:.0%} counts) ==")
    for r in rows:
        extra = f"  (auto measured then: {r['then_auto']:.3f})" if r.get("then_auto") else ""
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.3f}"
        print(f"  {r['set']:<5} {r['graph']:<34} {r['chose']:<34} {ratio}  best {r['best']}{extra}")
    for which in dict.fromkeys(r["set"] for r in rows):        # the sets present, in order
        rs = [r["ratio"] for r in rows if r["set"] == which and r["ratio"] is not None]
        if rs:
            print(f"  {which}: {sum(x <= within for x in rs)} of {len(rs)} within {within - 1:.0%}, "
                  f"worst {max(rs):.3f}")


def main(argv: list[str]) -> int:
    base = Path(argv[0]) if argv else ROOT / "benchmarks" / "results" / "traversal" / "auto-fit"
    for path in sorted(base.rglob("summary.json")):
        summary = json.loads(path.read_text())
        print(f"# {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} ({summary['device']})")
        if summary.get("bfs"):
            report("bfs gpu-do alpha/beta", bfs_rows(summary), WITHIN_AB)
        if summary.get("sssp"):
            report("sssp gpu-nearfar delta (interpolated)", delta_rows(summary), WITHIN_DELTA)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
