"""How long GPU variants take on numba's CUDA simulator, against what ``kernels.run.sim_estimate``
says beforehand: the measurements its calibration constants come from.

Run from the repository root (no GPU needed; the simulator is switched on here)::

    python3 benchmarks/bench_sim_estimate.py                    # every case, ~40 minutes on a 2-core VM
    python3 benchmarks/bench_sim_estimate.py --cases small --only bfs sssp spmv/gpu-tunable
    python3 benchmarks/bench_sim_estimate.py --fit benchmarks/results/sim-estimate-vm.jsonl

Each case runs one variant on a small or medium input of ``tests/data`` (the sizes the simulator
is meant for) with ``warmup=1, repeat=2`` in this process, as the worker does, and records the
median seconds of one run, the wall time of the whole job, and the estimate's work counts at the
time. The output, one JSON line per case, goes to ``benchmarks/results/sim-estimate-<host>.jsonl``.
``--fit`` measures nothing: it recomputes every case's work counts with the current launch models
and fits each variant's costs (what ``SIM_COSTS`` in ``kernels/run/sim_estimate.py`` holds),
printing them with the range of job estimate / measured job over the cases.

The simulator runs one Python thread per CUDA thread and a ``syncthreads`` is a poll of all of a
block's threads: its speed depends on the host's scheduler as much as on its processor (between
a busy and a quiet session here, barrier-heavy kernels ran up to 3x slower and barrier-free ones
up to 4x faster), so measure in more than one session and fit them together.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"      # before anything imports numba.cuda

from _common import ROOT, load_real, say, slug  # noqa: E402

# (family, variant, input, params): small inputs, default parameters plus a block size or two
SMALL = [
    ("spmv", "gpu-naive", "lp_afiro.mtx", {"wg": 32}),
    ("spmv", "gpu-naive", "lp_afiro.mtx", {"wg": 128}),
    ("spmv", "gpu-naive", "USAir97.mtx", {"wg": 32}),
    ("spmv", "gpu-naive", "USAir97.mtx", {"wg": 256}),
    ("spmv", "gpu-tunable", "lp_afiro.mtx", {"wg": 32, "rows": 4}),
    ("spmv", "gpu-tunable", "lp_afiro.mtx", {"wg": 128, "rows": 16}),
    ("spmv", "gpu-tunable", "lp_afiro.mtx", {"wg": 64, "rows": 4, "reduce": "shared"}),
    ("spmv", "gpu-tunable", "USAir97.mtx", {"wg": 128, "rows": 32}),
    ("spmv", "gpu-tunable", "lp_afiro.mtx", {"wg": 1, "rows": 1, "reduce": "shared"}),
    ("spmv", "gpu-tunable", "lp_afiro.mtx", {"wg": 4, "rows": 2}),
    ("spmv", "gpu-tunable", "lp_afiro.mtx", {"wg": 8, "rows": 8, "reduce": "shared"}),
    ("spmv", "gpu-merge", "lp_afiro.mtx", {}),
    ("spmv", "gpu-merge", "lp_afiro.mtx", {"wg": 32}),
    ("spmv", "gpu-merge", "USAir97.mtx", {"wg": 64}),
    ("spmv", "gpu-adaptive", "lp_afiro.mtx", {"block": 32}),
    ("spmv", "gpu-adaptive", "lp_afiro.mtx", {}),
    ("spmv", "gpu-adaptive", "USAir97.mtx", {"block": 64}),
    ("triangles", "gpu-row-block", "karate.mtx", {"block_size": 32}),
    ("triangles", "gpu-row-block", "karate.mtx", {"block_size": 128}),
    ("triangles", "gpu-row-block", "dolphins.mtx", {"block_size": 64}),
    ("triangles", "gpu-row-shared", "karate.mtx", {"block_size": 32}),
    ("triangles", "gpu-row-shared", "karate.mtx", {"block_size": 128}),
    ("triangles", "gpu-row-shared", "dolphins.mtx", {"block_size": 64}),
    ("triangles", "gpu-oriented", "karate.mtx", {"block_size": 32}),
    ("triangles", "gpu-oriented", "karate.mtx", {}),
    ("triangles", "gpu-oriented", "dolphins.mtx", {"block_size": 64}),
    ("apsp", "gpu-dijkstra", "karate.mtx", {"warps_per_block": 1}),
    ("apsp", "gpu-dijkstra", "karate.mtx", {}),
    ("apsp", "gpu-dijkstra", "dolphins.mtx", {"warps_per_block": 2, "queue": "array"}),
    ("apsp", "gpu-fw-naive", "karate.mtx", {"warps_per_block": 2, "max_vertices": 16}),
    ("apsp", "gpu-fw-naive", "karate.mtx", {"max_vertices": 24}),
    ("apsp", "gpu-fw-blocked", "karate.mtx", {"tile": 8, "warps_per_block": 1, "max_vertices": 24}),
    ("apsp", "gpu-fw-blocked", "karate.mtx", {"tile": 16, "warps_per_block": 2, "max_vertices": 32}),
    ("apsp", "gpu-fw-staged", "karate.mtx", {"tile": 8, "warps_per_block": 1, "max_vertices": 24}),
    ("apsp", "gpu-fw-staged", "karate.mtx", {"tile": 16, "warps_per_block": 2, "max_vertices": 32}),
    ("kclique", "gpu", "karate.mtx", {"block_size": 32}),
    ("kclique", "gpu", "dolphins.mtx", {"block_size": 64}),
    ("kclique", "gpu-vertex", "karate.mtx", {"block_size": 32}),
    ("kclique", "gpu-vertex", "karate.mtx", {"block_size": 128}),
    ("kclique", "gpu-vertex", "dolphins.mtx", {"block_size": 64, "k": 3}),
    ("kclique", "gpu-edge", "karate.mtx", {"block_size": 32}),
    ("kclique", "gpu-edge", "dolphins.mtx", {"block_size": 32, "k": 5}),
    ("kclique", "gpu-list", "karate.mtx", {"block_size": 32}),
    ("kclique", "gpu-list", "dolphins.mtx", {"block_size": 64}),
    ("bfs", "gpu-csr", "karate.mtx", {"block": 32}),
    ("bfs", "gpu-csr", "karate.mtx", {}),
    ("bfs", "gpu-csr", "GD98_c.mtx", {"block": 64}),
    ("bfs", "gpu-csr", "karate.mtx", {"loop": "host", "block": 32}),
    ("bfs", "gpu-csr", "GD98_c.mtx", {"loop": "host"}),
    ("bfs", "gpu-slotted", "karate.mtx", {"block": 32}),
    ("bfs", "gpu-slotted", "karate.mtx", {}),
    ("bfs", "gpu-slotted", "GD98_c.mtx", {"block": 64}),
    ("bfs", "gpu-slotted", "football.mtx", {}),
    ("bfs", "gpu-slotted", "karate.mtx", {"loop": "host", "block": 32}),
    ("bfs", "gpu-slotted", "GD98_c.mtx", {"loop": "host"}),
    ("bfs", "gpu-slotted", "dolphins.mtx", {"page_size": 64, "direction": "push"}),
    ("sssp", "gpu-csr", "karate.mtx", {"block": 32}),
    ("sssp", "gpu-csr", "karate.mtx", {}),
    ("sssp", "gpu-csr", "GD98_c.mtx", {"block": 64}),
    ("sssp", "gpu-csr", "karate.mtx", {"loop": "host"}),
    ("sssp", "gpu-slotted", "karate.mtx", {"block": 32}),
    ("sssp", "gpu-slotted", "karate.mtx", {}),
    ("sssp", "gpu-slotted", "GD98_c.mtx", {"block": 64}),
    ("sssp", "gpu-slotted", "karate.mtx", {"loop": "host"}),
]
# a few larger inputs: the work each run walks (entries, levels) besides its launch shape
MEDIUM = [
    ("spmv", "gpu-naive", "airfoil1.mtx", {}),
    ("spmv", "gpu-tunable", "airfoil1.mtx", {"wg": 128, "rows": 16}),
    ("spmv", "gpu-merge", "airfoil1.mtx", {}),
    ("spmv", "gpu-adaptive", "jagmesh7.mtx", {}),
    ("triangles", "gpu-row-block", "USAir97.mtx", {"block_size": 32}),
    ("triangles", "gpu-row-shared", "lesmis.mtx", {"block_size": 32}),
    ("triangles", "gpu-oriented", "USAir97.mtx", {}),
    ("apsp", "gpu-dijkstra", "lesmis.mtx", {"warps_per_block": 1}),
    ("kclique", "gpu-vertex", "lesmis.mtx", {"block_size": 32}),
    ("bfs", "gpu-slotted", "delaunay_n10.mtx", {}),
    ("bfs", "gpu-slotted", "jagmesh7.mtx", {}),
    ("bfs", "gpu-csr", "netscience.mtx", {"block": 64}),
    ("bfs", "gpu-slotted", "USAir97.mtx", {"loop": "host"}),
    ("sssp", "gpu-slotted", "delaunay_n10.mtx", {}),
    ("sssp", "gpu-csr", "jagmesh7.mtx", {"block": 64}),
]


def declared_cases(graph: str = "karate.mtx") -> list[tuple[str, str, str, dict]]:
    """Every GPU variant of the registry with the simulator parameters its launch shape declares
    (on ``graph``): a variant added to the registry is measured, and its costs can be fitted,
    without editing the lists above."""
    from kernels.algorithms.registry import families

    return [(fam.name, var.name, graph, dict(var.launch.sim_params)) for fam in families().values()
            for var in fam.variants.values() if var.kind == "gpu" and var.launch is not None]


CASES = {"small": SMALL + declared_cases(), "medium": MEDIUM, "all": SMALL + declared_cases() + MEDIUM}


def measure(family: str, variant: str, graph, params: dict, repeat: int = 2, warmup: int = 1) -> dict:
    from kernels.run.runner import run_variant
    from kernels.run.sim_estimate import estimate

    started = time.perf_counter()
    result = run_variant(graph, family, variant, params, target="sim", repeat=repeat, warmup=warmup)
    wall = time.perf_counter() - started
    rec = result.record
    est = estimate(family, variant, graph, rec["params"], repeat=repeat, warmup=warmup)
    samples = rec["timing"]["kernel"]["samples"]
    return {"family": family, "variant": variant, "params": params, "resolved": rec.get("resolved_params"),
            "input": rec["input"]["name"], "rows": graph.n_rows, "nnz": graph.nnz,
            "run_s": statistics.median(samples), "samples": samples, "wall_s": wall,
            "runs": repeat + warmup, "verified": rec["verified"], "result": rec.get("result"),
            "estimate_s": est.seconds, "threads": est.threads, "counts": est.counts}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", help="families (or family/variant) to measure")
    p.add_argument("--cases", choices=sorted(CASES), default="all", help="which inputs (default: all)")
    p.add_argument("--fit", nargs="*", metavar="FILE.jsonl",
                   help="measure nothing: fit the costs to these files' cases and print them")
    p.add_argument("--out", help="JSON-lines file (default benchmarks/results/sim-estimate-<host>.jsonl)")
    args = p.parse_args()
    if args.fit is not None:
        return fit(args.fit or [str(ROOT / "benchmarks" / "results" / f"sim-estimate-{slug(platform.node())}.jsonl")])
    out = args.out or str(ROOT / "benchmarks" / "results" / f"sim-estimate-{slug(platform.node())}.jsonl")
    chosen = [c for c in CASES[args.cases] if not args.only or c[0] in args.only or f"{c[0]}/{c[1]}" in args.only]
    graphs: dict[str, object] = {}
    rows = []
    with open(out, "w") as fh:
        for family, variant, name, params in chosen:
            graph = graphs.setdefault(name, load_real(name))
            try:
                row = measure(family, variant, graph, params)
            except Exception as exc:  # noqa: BLE001 - one case's failure is reported, the rest still runs
                say(f"{family}/{variant} {name} {params}: FAILED {type(exc).__name__}: {exc}")
                continue
            rows.append(row)
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            say(f"{family}/{variant} {name} {params}: {row['run_s']:.3f} s a run (wall {row['wall_s']:.1f} s), "
                f"estimate {row['estimate_s'] / row['runs']:.3f} s a run, ratio "
                f"{row['estimate_s'] / row['runs'] / row['run_s']:.2f}; {row['threads']} threads, {row['counts']}")
    say()
    by_variant: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        by_variant.setdefault((row["family"], row["variant"]), []).append(row)
    for (family, variant), cases in by_variant.items():
        ratios = [c["estimate_s"] / c["runs"] / c["run_s"] for c in cases]
        say(f"{family}/{variant}: estimate/measured {min(ratios):.2f} .. {max(ratios):.2f} over {len(cases)} cases")
    say(f"python {sys.version.split()[0]} on {platform.node()}; written {out}")
    return 0


MIN_CASES_FOR_BASE = 4     # fewer cases: each run's seconds are only work counts (no constant)
# the Floyd-Warshall cases span too few sizes to tell a constant from the work (a constant there
# made a 4-vertex run cost seconds): work counts only
NO_CONSTANT = {("apsp", "gpu-fw-naive"), "apsp tiled"}
# variants that share their kernels are fitted together: more cases per cost, fewer chance fits
# (not the traversals: gpu-slotted walks pages, its medium cases cost up to twice gpu-csr's)
FIT_GROUPS = {
    ("kclique", "gpu"): "kclique", ("kclique", "gpu-vertex"): "kclique", ("kclique", "gpu-edge"): "kclique",
    ("kclique", "gpu-list"): "kclique",
    ("apsp", "gpu-fw-blocked"): "apsp tiled", ("apsp", "gpu-fw-staged"): "apsp tiled",
}


def counts_of(row: dict, graphs: dict) -> tuple[dict, float]:
    """The work counts and job overhead the current launch models give a measured case."""
    from kernels.algorithms.registry import get_variant
    from kernels.run.sim_estimate import estimate

    fam, var = get_variant(row["family"], row["variant"])
    params = fam.resolve_params(var, row["params"])
    graph = graphs.setdefault(row["input"], load_real(row["input"] + ".mtx"))
    est = estimate(row["family"], row["variant"], graph, params, repeat=0, warmup=1)
    return est.counts, est.job_s


def fit(paths: list[str]) -> int:
    """Per variant: the run's seconds as base + sum(cost_k x count_k), non-negative least squares on
    relative error (each case weighs the same, whatever its length); then how far each job's
    estimate (overhead + runs x run) lies from its measured wall time."""
    import numpy as np
    from scipy.optimize import nnls

    from kernels.run.sim_estimate import JOB_OVERHEAD_S

    rows = []
    for path in paths:
        with open(path) as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    graphs: dict = {}
    by_variant: dict[object, list[dict]] = {}
    for row in rows:
        row["counts_now"], row["job_now"] = counts_of(row, graphs)
        key = (row["family"], row["variant"])
        by_variant.setdefault(FIT_GROUPS.get(key, key), []).append(row)
    for key, cases in by_variant.items():
        names = sorted({k for c in cases for k in c["counts_now"]})
        a = np.array([[1.0] + [c["counts_now"].get(k, 0.0) for k in names] for c in cases])
        y = np.array([c["run_s"] for c in cases])
        if len(cases) < MIN_CASES_FOR_BASE or key in NO_CONSTANT:
            a[:, 0] = 0.0
        coef, _ = nnls(a / y[:, None], np.ones(len(y)))
        per = {k: float(f"{v:.3g}") for k, v in zip(names, coef[1:], strict=True) if v > 0}
        est_run = a @ coef
        ratios = [(JOB_OVERHEAD_S + c["job_now"] - JOB_OVERHEAD_S + c["runs"] * r) / c["wall_s"]
                  for c, r in zip(cases, est_run, strict=True)]
        say(f"    {key}: SimCost({coef[0]:.3g}, {per}),   # {len(cases)} cases, job estimate/measured "
            f"{min(ratios):.2f} .. {max(ratios):.2f}")
        for c, r, q in zip(cases, est_run, ratios, strict=True):
            say(f"        {c['variant']} {c['input']} {c['params']}: run {c['run_s']:.3f} s, estimate {r:.3f} s; "
                f"job {c['wall_s']:.1f} s, ratio {q:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
