"""Issue 25's second goal: the dynamic experiment's reruns are within 1.5x of ``run``'s kernel time
for the same variant, parameters and graph (both device time), on 10^5-10^6-edge graphs and a
large one; and the experiment's figures on those sizes for docs/benchmarks.md.

    python3 benchmarks/diag/dynamic_vs_run.py [--out DIR] [--large]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

GRAPHS = ("delaunay_n15.mtx", "gen:rmat:scale=16,seed=1", "gen:delaunay:n=262144,points=jittered-grid,seed=1")
LARGE = ("gen:rmat:scale=21,seed=1",)
PARAMS = {"balance": "lb", "direction": "optimizing", "block": 256, "loop": "device"}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "diag")
    p.add_argument("--large", action="store_true")
    args = p.parse_args()
    from _common import load_real

    from kernels.dynamic import DynamicSettings, run_dynamic
    from kernels.inputs import load_input
    from kernels.run.runner import run_variant

    rows = []
    for name in GRAPHS + (LARGE if args.large else ()):
        graph = load_input(name) if name.startswith("gen:") else load_real(name)
        result = run_dynamic(graph, DynamicSettings(algorithm="bfs", batch=0.001, rounds=3, page_size=1024,
                                                    balance="lb", direction="optimizing", block=256, loop="device"),
                             target="cuda")
        s = result["summary"]
        assert s["all_verified"], name
        edits = [r for r in result["records"] if r["round"] > 0]
        base = next(r for r in result["records"] if r["round"] == 0)      # the unedited graph, as run sees it
        baseline = {"slotted": base["dynamic"]["run_s"], "csr": base["static"]["run_s"]}
        rerun = {"slotted": statistics.median(r["dynamic"]["run_s"] for r in edits),
                 "csr": statistics.median(r["static"]["run_s"] for r in edits)}
        call = {"slotted": statistics.median(r["dynamic"]["rerun"]["call_s"] for r in edits),
                "csr": statistics.median(r["static"]["rerun"]["call_s"] for r in edits)}
        run = {}
        for kind, variant in (("slotted", "gpu-slotted"), ("csr", "gpu-csr")):
            params = dict(PARAMS, page_size=1024) if kind == "slotted" else dict(PARAMS)
            rec = run_variant(graph, "bfs", variant, params, target="cuda", repeat=10, warmup=2).record
            assert rec["verified"], (name, variant)
            run[kind] = (rec["timing"]["kernel"]["median_s"], rec["timing"]["launch"])
        row = {"graph": graph.name, "edges": graph.num_edges, "edits_per_round": s["edits_per_round"],
               "rerun_us": {k: round(v * 1e6, 1) for k, v in rerun.items()},
               "call_us": {k: round(v * 1e6, 1) for k, v in call.items()},
               "run_us": {k: round(v[0] * 1e6, 1) for k, v in run.items()},
               "run_launch": {k: v[1] for k, v in run.items()},
               "baseline_rerun_us": {k: round(v * 1e6, 1) for k, v in baseline.items()},
               # the same graph: round 0's reruns against run (edits add random shortcuts, which shorten
               # a mesh's BFS by many levels: the edited rounds are not run's graph)
               "ratio_baseline_to_run": {k: round(baseline[k] / run[k][0], 3) for k in baseline},
               "ratio_edited_rerun_to_run": {k: round(rerun[k] / run[k][0], 3) for k in rerun},
               "sync_ms": round(s["sync_s"] * 1e3, 3), "rebuild_ms": round(s["rebuild_s"] * 1e3, 3),
               "upload_ms": round(s["upload_s"] * 1e3, 3), "edit_ms": round(s["edit_s"] * 1e3, 3),
               "dynamic_total_ms": round(s["dynamic_total_s"] * 1e3, 3),
               "static_total_ms": round(s["static_total_s"] * 1e3, 3), "speedup": s["speedup_median"],
               "compile_s": round(s["compile_s"], 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dynamic-vs-run.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
