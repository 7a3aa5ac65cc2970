"""Does ``kclique gpu`` (``work=auto``) pick the best of ``gpu-vertex``, ``gpu-edge`` and ``gpu-list``?
Each input and k, the three variants at their defaults and ``gpu`` itself, measured side by side
in one run (issue 26, item 3).

Run from the repository root on the GPU machine::

    python3 benchmarks/bench_kclique_auto.py                # every input, k = 4..7 (about 4 min, H100)
    python3 benchmarks/bench_kclique_auto.py --quick        # four inputs, k = 4, 5
    python3 benchmarks/bench_kclique_auto.py --target sim --quick --inputs 'karate.mtx;dolphins.mtx'  # a smoke test

Inputs: the real graphs of ``tests/data`` (29, from 34 to 200 k edges) and generated ones chosen
to vary what the rule looks at: R-MAT at three scales and edge factors, Chung-Lu with two
exponents, random geometric graphs in 2-D and 3-D (clique-rich), G(n, p), a Delaunay
triangulation, a 3-D grid and a 27-point stencil.

Every cell is checked: per input and k the clique count of ``cpu-parallel`` (numba kClist, itself
verified against the family's plain-Python reference in the test suite; the reference takes
minutes at k >= 6 on these inputs) is the expected value, and each GPU run's count must equal it.
A k is skipped on an input once the fastest variant took more than ``--max-ms`` at the k before
(counts grow about tenfold per k).

Each line of ``kclique-auto-<device>.jsonl`` holds the input, k, the variant, its median kernel
time, the parameters it resolved and the oriented out-degree histogram (``dplus_hist``: how many
vertices have each out-degree after the degree orientation), from which every feature a rule may
use can be computed again (``benchmarks/diag/kclique_auto_fit.py``). The summary JSON gives, per
(input, k), the best variant and the ratio of ``gpu`` (auto) to it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _common import load_real, say, slug  # noqa: E402

REAL = ("karate.mtx", "dolphins.mtx", "lesmis.mtx", "polbooks.mtx", "football.mtx", "chesapeake.mtx",
        "celegans_metabolic.mtx", "USAir97.mtx", "netscience.mtx", "delaunay_n10.mtx", "jagmesh7.mtx",
        "power.mtx", "airfoil1.mtx", "bips98_606.mtx", "hep-th.mtx", "G1.mtx", "ca-HepTh.mtx", "fe_4elt2.mtx",
        "bcsstk13.mtx", "as-caida20071105.mtx", "delaunay_n15.mtx", "Erdos981.mtx", "GD98_c.mtx", "LFAT5.mtx",
        "Stranke94.mtx", "rMatGraph_J_5_100.mtx", "west0067.mtx")
GENERATED = ("gen:rmat:scale=12,edge_factor=8", "gen:rmat:scale=13,edge_factor=16", "gen:rmat:scale=14,edge_factor=32",
             "gen:chung_lu:n=20000,avg_degree=16,exponent=2.5", "gen:chung_lu:n=20000,avg_degree=32,exponent=2.1",
             "gen:geometric:n=20000,radius=0.02", "gen:geometric:n=20000,radius=0.06,dim=3",
             "gen:gnp:n=5000,p=0.004", "gen:delaunay:n=50000,points=jittered-grid", "gen:grid3d:nx=30,ny=30,nz=30",
             "gen:stencil:kind=27pt,nx=24")
#: ``--check``: graph families no rule was fitted on (the second refit's owed check, docs/defaults.md)
CHECK = ("gen:chung_lu:n=30000,avg_degree=12,exponent=2.9", "gen:chung_lu:n=30000,avg_degree=24,exponent=3.2",
         "gen:geometric:n=30000,radius=0.012", "gen:geometric:n=15000,radius=0.03",
         "gen:stencil:kind=7pt,nx=30", "gen:stencil:kind=9pt,nx=150", "gen:gnm:n=20000,m=160000",
         "gen:rmat:scale=15,edge_factor=4", "gen:delaunay:n=100000", "gen:grid2d:nx=200,ny=200")
#: ``--check2``: the pair-density branch's check (chosen after --check; half sparse random-like,
#: half clustered, none in the earlier sets; benchmarks/diag/kclique_density_fit.py --new)
CHECK2 = ("gen:rmat:scale=16,edge_factor=8,a=0.3,b=0.25,c=0.25,d=0.2",
          "gen:chung_lu:n=100000,avg_degree=16,exponent=3.0",
          "gen:chung_lu:n=50000,avg_degree=10,exponent=2.75", "gen:gnp:n=4000,p=0.02",
          "gen:chung_lu:n=50000,avg_degree=10,exponent=2.6", "gen:geometric:n=50000,radius=0.01",
          "gen:geometric:n=40000,radius=0.04,dim=3", "gen:rmat:scale=16,edge_factor=16",
          "gen:chung_lu:n=50000,avg_degree=24,exponent=2.2", "gen:stencil:kind=27pt,nx=40")
QUICK = ("USAir97.mtx", "ca-HepTh.mtx", "gen:rmat:scale=12,edge_factor=8", "gen:geometric:n=20000,radius=0.02")
VARIANTS = ("gpu-vertex", "gpu-edge", "gpu-list")
AUTO = "gpu"
KS = (4, 5, 6, 7)
REPEAT, WARMUP = 7, 1


def load(spec: str):
    if spec.startswith("gen:"):
        from kernels.inputs import load_input

        return load_input(spec)
    return load_real(spec)


def out_degree_histogram(graph) -> list[int]:
    """How many vertices have each out-degree after the degree orientation ``gpu`` uses."""
    from kernels.algorithms.kclique.prepare import orient, simple_undirected

    dag = orient(simple_undirected(graph), "degree")
    dplus = np.diff(np.asarray(dag.indptr, dtype=np.int64))
    return np.bincount(dplus).tolist() if len(dplus) else [0]


def expected_count(graph, k: int) -> int:
    from kernels.run.runner import run_variant

    result = run_variant(graph, "kclique", "cpu-parallel", {"k": k}, target="cpu", repeat=1, warmup=0, verify=False)
    return int(result.record.to_json()["result"]["cliques"] if hasattr(result.record, "to_json")
               else result.record["result"]["cliques"])


def measure(graph, variant: str, k: int, target: str) -> dict:
    from kernels.run.runner import run_variant

    result = run_variant(graph, "kclique", variant, {"k": k}, target=target, repeat=REPEAT, warmup=WARMUP,
                         verify=False)
    rec = result.record.to_json() if hasattr(result.record, "to_json") else result.record
    return {"median_s": rec["timing"]["kernel"]["median_s"], "cliques": int(rec["result"]["cliques"]),
            "resolved": rec.get("resolved_params"),
            "auto": [n for n in rec.get("notices", []) if n.startswith("auto:")]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--inputs", help="inputs instead of the default set, separated by ';' (tests/data files, gen:...)")
    ap.add_argument("--check", action="store_true", help="the check set (graph families the rule was not fitted on)")
    ap.add_argument("--check2", action="store_true", help="the second check set (for the pair-density branch)")
    ap.add_argument("--ks", default=None, help="comma-separated k (default 4,5,6,7; --quick 4,5)")
    ap.add_argument("--max-ms", type=float, default=300.0, help="skip larger k once the best took longer than this")
    ap.add_argument("--target", default="cuda", choices=("cuda", "sim"), help="sim: a smoke test of the script")
    ap.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "results" / "kclique-auto"))
    args = ap.parse_args()

    from kernels.measure.environment import environment

    env = environment(args.target)
    which = "check2-" if args.check2 else "check-" if args.check else ""
    stem = f"kclique-auto-{which}{slug(env['device'].get('name', 'gpu'))}"
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    default_inputs = QUICK if args.quick else CHECK2 if args.check2 else CHECK if args.check else REAL + GENERATED
    inputs = [i for i in args.inputs.split(";") if i] if args.inputs else list(default_inputs)
    ks = tuple(int(k) for k in args.ks.split(",")) if args.ks else ((4, 5) if args.quick else KS)
    started = time.perf_counter()
    cases = []
    with (out_dir / f"{stem}.jsonl").open("w") as lines:
        for spec in inputs:
            try:
                graph = load(spec)
                hist = out_degree_histogram(graph)
            except Exception as exc:  # noqa: BLE001 - not a k-clique input (rectangular...): said, skipped
                say(f"{spec}: not used: {exc}")
                continue
            for k in ks:
                expected = expected_count(graph, k)
                timed = {}
                for variant in (*VARIANTS, AUTO):
                    try:
                        m = measure(graph, variant, k, args.target)
                    except Exception as exc:  # noqa: BLE001 - a failed cell is recorded, the rest go on
                        m = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                    m["verified"] = m.get("cliques") == expected
                    row = {"input": spec, "real": not spec.startswith("gen:"), "k": k, "variant": variant,
                           "expected": expected, "nnz": int(graph.nnz), "n": int(graph.n_rows),
                           "dplus_hist": hist, **m}
                    lines.write(json.dumps(row, default=str) + "\n")
                    lines.flush()
                    if "median_s" in m and m["verified"]:
                        timed[variant] = m
                    elif "median_s" in m:
                        say(f"  WRONG {spec} k={k} {variant}: {m['cliques']} cliques, expected {expected}")
                three = {v: timed[v]["median_s"] for v in VARIANTS if v in timed}
                if not three or AUTO not in timed:
                    say(f"{spec[:44]:44s} k={k}: not every variant ran ({sorted(timed)})")
                    continue
                best = min(three, key=three.get)
                ratio = timed[AUTO]["median_s"] / three[best]
                chose = (timed[AUTO].get("resolved") or {}).get("work")
                cases.append({"input": spec, "real": not spec.startswith("gen:"), "k": k, "best": best,
                              "times_s": three, "auto_s": timed[AUTO]["median_s"], "auto_chose": chose,
                              "ratio": ratio, "cliques": expected})
                say(f"{spec[:44]:44s} k={k} {expected:>14,d} cliques  " + "  ".join(
                    f"{v[4:]} {three[v] * 1e3:8.3f}" for v in three) + f"  auto({chose}) x{ratio:.2f}")
                if three[best] * 1e3 > args.max_ms:
                    say(f"  {spec}: the best took {three[best] * 1e3:.0f} ms at k={k}: larger k skipped")
                    break
    ratios = [c["ratio"] for c in cases]
    summary = {"date": _dt.date.today().isoformat(), "environment": env, "seconds": time.perf_counter() - started,
               "cases": cases, "within_10pct": sum(r <= 1.10 for r in ratios), "total": len(ratios),
               "worst": max(ratios) if ratios else None,
               "median_ratio": statistics.median(ratios) if ratios else None}
    (out_dir / f"{stem}.json").write_text(json.dumps(summary, indent=1, default=str))
    say(f"auto within 10 % of the best of {', '.join(VARIANTS)} in {summary['within_10pct']}/{summary['total']} "
        f"cases, worst x{summary['worst'] or 0:.2f}; wrote {stem}.json(l) in {summary['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
