"""Do the defaults choose well? Each input's sweep of the parameters ``auto`` decides, beside a run
with the defaults, measured side by side in one run.

Run from the repository root on the GPU machine::

    python3 benchmarks/bench_defaults.py                 # everything, about 6 minutes on an H100
    python3 benchmarks/bench_defaults.py --quick         # four real graphs, one k
    python3 benchmarks/bench_defaults.py --only triangles

Cases (each on every input; the defaults cell is the variant with no parameter given, so every
parameter with an ``auto`` rule is ``auto``: its line in the output, and the ``auto`` field of the
JSON files, say what it chose and why; ``default_resolved`` what ran):

* ``triangles/gpu-oriented``: ``group_size`` in 1..32;
* ``kclique`` at k = 4, 5, 6: ``gpu-vertex`` and ``gpu-edge``, each with ``group_size`` in 1..32
  (one sweep of 12 cells: the work decomposition is a choice too); the defaults cell is what a
  user runs first: the ``gpu`` variant (``work`` and ``group_size`` auto);
* ``spmv/gpu-tunable``: ``rows`` (threads per row = wg / rows) at wg = 128;
* ``spmv/gpu-adaptive``: ``threads_per_row`` in 1..32 with ``short_mode`` in (group, stream).

Inputs: the real graphs of ``tests/data`` with at least 2,000 edges (15 of them), and for the
rules' fit generated ones (R-MAT, Chung-Lu, Delaunay, a grid, stencils, a power-law matrix).
The goal of issue 18 is judged on the real graphs only: the defaults within 10 % of the best
cell on at least 80 % of them.

Every run is verified by the runner against the family's reference. Writes
``benchmarks/results/defaults-<device>.jsonl`` (one line per cell: case, input, input features,
parameters, median kernel seconds) and ``defaults-<device>.json`` (per case and input: the best
cell, the defaults cell and their ratio; the share within 10 %).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _common import load_real, say, slug  # noqa: E402

REAL = ("celegans_metabolic.mtx", "USAir97.mtx", "netscience.mtx", "delaunay_n10.mtx", "jagmesh7.mtx",
        "power.mtx", "airfoil1.mtx", "bips98_606.mtx", "hep-th.mtx", "G1.mtx", "ca-HepTh.mtx",
        "fe_4elt2.mtx", "bcsstk13.mtx", "as-caida20071105.mtx", "delaunay_n15.mtx")
QUICK = ("USAir97.mtx", "power.mtx", "ca-HepTh.mtx", "as-caida20071105.mtx")
GENERATED = ("gen:rmat:scale=16", "gen:rmat:scale=18", "gen:chung_lu:n=100000,avg_degree=16",
             "gen:delaunay:n=200000,points=jittered-grid", "gen:grid2d:nx=300,ny=300")
GENERATED_KCLIQUE = ("gen:rmat:scale=13", "gen:chung_lu:n=20000,avg_degree=16")  # the reference must finish
GENERATED_SPMV = ("gen:stencil:kind=27pt,nx=64", "gen:stencil:kind=7pt,nx=100",
                  "gen:powerlaw_matrix:n_rows=200000,n_cols=200000", "gen:rmat:scale=17")
GROUPS = (1, 2, 4, 8, 16, 32)
KS = (4, 5, 6)
REPEAT, WARMUP = 5, 1
TARGET = ["cuda"]


def features(graph, kind: str) -> dict:
    """What a rule may look at: sizes and the row-length (degree) distribution; for graphs also the
    features the ``auto`` rules use (docs/defaults.md): the entry-weighted row length (SpMV), the
    out-degrees after degree orientation (k-clique) and the mean partner out-list and owners of
    ``gpu-oriented`` (triangles)."""
    from kernels.algorithms.auto_rules import entry_weighted_length

    lengths = np.diff(np.asarray(graph.indptr, dtype=np.int64))
    mean = float(lengths.mean()) if len(lengths) else 0.0
    out = {"n": int(graph.n_rows), "nnz": int(graph.nnz), "mean_degree": mean,
           "max_degree": int(lengths.max()) if len(lengths) else 0,
           "degree_cv": float(lengths.std() / mean) if mean > 0 else 0.0,
           "p90_degree": float(np.percentile(lengths, 90)) if len(lengths) else 0.0,
           "entry_weighted_length": entry_weighted_length(lengths)}
    if kind == "kclique":
        from kernels.algorithms.kclique.prepare import orient, simple_undirected

        dag = orient(simple_undirected(graph), "degree")
        out.update({"out_degree_max": dag.max_out_degree, "out_degree_mean": dag.num_edges / max(dag.n, 1)})
    if kind == "graph":
        from kernels.algorithms.triangles.orientation import orient as orient_triangles
        from kernels.algorithms.triangles.prepare import simple_undirected as simple_triangles

        g, _ = simple_triangles(graph)
        og = orient_triangles(g.indptr, g.indices)
        out.update({"mean_partner_length": og.total_work / max(len(og.part_idx), 1), "owners": int(len(og.owners)),
                    "out_degree_max": og.max_out_degree})
    return out


def cases(only: str | None, quick: bool):
    """(case name, family, sweep cells as (variant, params), defaults cell, inputs kind)."""
    out = []
    if only in (None, "triangles"):
        out.append(("triangles/gpu-oriented", "triangles",
                     [("gpu-oriented", {"group_size": g}) for g in GROUPS], ("gpu-oriented", {}), "graph"))
    if only in (None, "spmv"):
        out.append(("spmv/gpu-tunable", "spmv", [("gpu-tunable", {"wg": 128, "rows": 128 // t}) for t in GROUPS],
                    ("gpu-tunable", {}), "matrix"))
        out.append(("spmv/gpu-adaptive", "spmv",
                    [("gpu-adaptive", {"short_mode": m, "threads_per_row": t}) for m in ("group",) for t in GROUPS]
                    + [("gpu-adaptive", {"short_mode": "stream"})], ("gpu-adaptive", {}), "matrix"))
    if only in (None, "kclique"):
        from kernels.algorithms.registry import get_family

        fam = get_family("kclique")
        first = "gpu" if "gpu" in fam.variants else "gpu-vertex"
        for k in (KS[1:2] if quick else KS):
            cells = [(v, {"k": k, "group_size": g}) for v in ("gpu-vertex", "gpu-edge") for g in GROUPS]
            out.append((f"kclique/k={k}", "kclique", cells, (first, {"k": k}), "kclique"))
    return out


def load(spec: str):
    if spec.startswith("gen:"):
        from kernels.inputs import load_input

        return load_input(spec)
    return load_real(spec)


def measure(graph, family, variant, params):
    from kernels.run.runner import run_variant

    result = run_variant(graph, family, variant, params, target=TARGET[0], repeat=REPEAT, warmup=WARMUP)
    rec = result.record.to_json() if hasattr(result.record, "to_json") else result.record
    return {"median_s": rec["timing"]["kernel"]["median_s"], "verified": rec["verified"],
            "resolved": rec.get("resolved_params") or rec.get("params"),
            "auto": [n for n in rec.get("notices", []) if n.startswith("auto:")]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=("triangles", "kclique", "spmv"))
    ap.add_argument("--inputs", help="comma-separated inputs instead of the real graphs (tests/data files, gen:...)")
    ap.add_argument("--no-generated", action="store_true")
    ap.add_argument("--target", default="cuda", choices=("cuda", "sim"), help="sim: a smoke test of the script")
    ap.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args()

    from kernels.measure.environment import environment

    TARGET[0] = args.target
    env = environment(args.target)
    stem = f"defaults-{slug(env['device'].get('name', 'gpu'))}"
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = (out_dir / f"{stem}.jsonl").open("w")
    real = tuple(args.inputs.split(",")) if args.inputs else QUICK if args.quick else REAL
    summary = {"date": _dt.date.today().isoformat(), "environment": env, "cases": {}}
    started = time.perf_counter()
    for name, family, cells, default, kind in cases(args.only, args.quick):
        inputs = list(real) + ([] if args.no_generated or args.quick else
                               list({"graph": GENERATED, "kclique": GENERATED_KCLIQUE, "matrix": GENERATED_SPMV}[kind]))
        per_input = {}
        for spec in inputs:
            try:
                graph = load(spec)
            except Exception as exc:  # noqa: BLE001 - report and go on
                say(f"{name} {spec}: cannot load: {exc}")
                continue
            feats = features(graph, kind)
            timed = []
            for variant, params in cells + [default]:
                is_default = (variant, params) == default
                try:
                    m = measure(graph, family, variant, params)
                except Exception as exc:  # noqa: BLE001 - a failed cell is recorded, the sweep goes on
                    m = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                    if "Error" not in type(exc).__name__:
                        traceback.print_exc()
                row = {"case": name, "input": spec, "real": not spec.startswith("gen:"), "features": feats,
                       "variant": variant, "params": params, "default": is_default, **m}
                lines.write(json.dumps(row, default=str) + "\n")
                lines.flush()
                if "median_s" in m and m.get("verified") is not False:
                    timed.append(row)
            sweep = [r for r in timed if not r["default"]]
            dflt = [r for r in timed if r["default"]]
            if sweep and dflt:
                best = min(sweep, key=lambda r: r["median_s"])
                ratio = dflt[0]["median_s"] / best["median_s"]
                per_input[spec] = {"best": {"variant": best["variant"], "params": best["params"],
                                            "median_s": best["median_s"]},
                                   "default_s": dflt[0]["median_s"], "default_resolved": dflt[0].get("resolved"),
                                   "auto": dflt[0].get("auto", []),
                                   "ratio": ratio, "real": not spec.startswith("gen:"), "features": feats}
                say(f"{name:22s} {spec[:40]:40s} best {best['variant']} {best['params']} "
                    f"{best['median_s'] * 1e3:8.3f} ms  default {dflt[0]['median_s'] * 1e3:8.3f} ms  x{ratio:.2f}")
                for note in dflt[0].get("auto", []):     # what auto chose on this input, and why
                    say(f"{'':22s}   {note}")
        real_ratios = [v["ratio"] for v in per_input.values() if v["real"]]
        within = sum(r <= 1.10 for r in real_ratios)
        summary["cases"][name] = {"inputs": per_input, "real_within_10pct": within, "real_inputs": len(real_ratios),
                                  "share": within / len(real_ratios) if real_ratios else math.nan}
        say(f"claim {name}: defaults within 10 % of the best cell on {within}/{len(real_ratios)} real graphs "
            f"({'MET' if real_ratios and within >= 0.8 * len(real_ratios) else 'NOT MET'})")
    summary["seconds"] = time.perf_counter() - started
    (out_dir / f"{stem}.json").write_text(json.dumps(summary, indent=1, default=str))
    lines.close()
    say(f"wrote {stem}.json and {stem}.jsonl in {summary['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
