"""Roofline and energy on a real GPU: one input per family, each run placed against the device's
measured limits, with its energy per launch (issue 28, parts 1 and 2).

Run from the repository root on the GPU machine (numba-cuda; nvidia-ml-py for the energy; no GUI
needed)::

    python3 benchmarks/bench_roofline.py              # about 2-3 minutes on one H100
    python3 benchmarks/bench_roofline.py --remeasure  # measure the device's peaks again first

First the device's peaks (``graph-kernels device-peaks``: device-to-device copy bandwidth, fma /
add+min / int32 peak rates), measured once per device and kept in the user cache. Then one input
per family, sized to live in DRAM (not in the 50 MB L2): SpMV (``gpu-adaptive``, ``gpu-tunable``)
on R-MAT scale 20 with uniform weights; triangles (``gpu-oriented``, ``gpu-row-block``) on R-MAT
18; BFS and SSSP (``gpu-csr``) on R-MAT 20; APSP (``gpu-fw-blocked``, ``gpu-dijkstra``) on R-MAT
12 (4,096 vertices, weighted); k-clique (``gpu``, k = 4) on R-MAT 16, its count checked against
``cpu-parallel`` (the plain-Python reference is too slow there). Every run is verified, timed as
CUDA-graph replays where it can be (``--launch auto``), and measured with ``--energy``.

Writes, under benchmarks/results/roofline/: ``roofline-<device>.json`` (the peaks and one row per
run: bytes, operations, intensity, achieved rates, % of bandwidth and of the bound or "above the
roof: L2-resident", energy per launch, watts, rate per watt, clocks and throttle reasons),
``roofline-<device>.jsonl`` (the run records) and ``roofline-<device>.svg`` (the chart, the same
drawing as the GUI's Roofline tab). Prints a table last.

``--target sim --smoke`` runs tiny inputs on the CUDA simulator (the flow only: no peaks there,
so no chart).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _common import say, shown_path, slug  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "roofline"


def inputs(smoke: bool) -> dict:
    """name -> zero-argument builder (built on first use, kept for the runs that share it)."""
    from kernels.graph.generators import rmat

    if smoke:
        return {"big": lambda: rmat(6, 8, seed=1, weights="uniform"), "mid": lambda: rmat(6, 8, seed=2),
                "apsp": lambda: rmat(5, 4, seed=3, weights="uniform"), "clique": lambda: rmat(6, 8, seed=4)}
    return {"big": lambda: rmat(20, 16, seed=1, weights="uniform"), "mid": lambda: rmat(18, 16, seed=2),
            "apsp": lambda: rmat(12, 16, seed=3, weights="uniform"), "clique": lambda: rmat(16, 16, seed=4)}


def cases(smoke: bool) -> list[tuple[str, str, str, dict]]:
    small = {"block_size": 32} if smoke else {}
    return [
        ("spmv", "gpu-adaptive", "big", {}),
        ("spmv", "gpu-tunable", "big", {}),
        ("triangles", "gpu-oriented", "mid", {}),
        ("triangles", "gpu-row-block", "mid", dict(small)),
        ("bfs", "gpu-csr", "big", {}),
        ("sssp", "gpu-csr", "big", {}),
        ("apsp", "gpu-fw-blocked", "apsp", {}),
        ("apsp", "gpu-dijkstra", "apsp", {}),
        ("kclique", "gpu", "clique", {"k": 4}),
    ]


def check_kclique(graph, record: dict, target: str) -> str:
    """The GPU count against cpu-parallel's (numba kClist, checked against the reference by the tests)."""
    from kernels.run.runner import run_variant

    cpu = run_variant(graph, "kclique", "cpu-parallel", {"k": record["params"]["k"]}, target="cpu", repeat=1,
                      warmup=0, verify=False).record
    got, expected = record["result"]["cliques"], cpu["result"]["cliques"]
    if got != expected:
        raise SystemExit(f"kclique/gpu counted {got} 4-cliques, cpu-parallel {expected}: not reporting it")
    return f"{got:,} 4-cliques, equal to cpu-parallel's count"


def summarize(record: dict) -> dict:
    from kernels.roofline.percent import roofline_point, why_not_on_roofline

    roof = record.get("roofline") or {}
    k = record["timing"]["kernel"]
    row = {"family": record["family"], "variant": record["variant"], "input": record["input"]["name"],
           "params": record.get("resolved_params") or record["params"], "verified": record["verified"],
           "launch": record["timing"].get("launch"), "median_s": k["median_s"], "fits_in_l2": record["timing"].get(
               "fits_in_l2"), "bytes": roof.get("bytes"), "ops": roof.get("ops"), "op": roof.get("op"),
           "model": roof.get("model")}
    point = roofline_point(record)
    if point is not None:
        row.update({"intensity": point.intensity, "achieved_GBps": point.bandwidth / 1e9,
                    "achieved_Gops": point.rate / 1e9, "above_roof": point.above,
                    "pct_bandwidth": point.pct_bandwidth, "pct_bound": point.pct_bound,
                    "bound": "memory" if point.memory_bound else point.op})
    else:
        row["no_point"] = why_not_on_roofline(record)
    e = record.get("energy")
    if e:
        row["energy"] = {key: e.get(key) for key in ("joules_per_launch", "watts", "sm_clock_mhz", "sm_clock_min_mhz",
                                                      "sm_clock_max_mhz", "memory_clock_mhz", "throttle_reasons")}
        row["per_energy"] = {m["name"]: m["value"] for m in record["metrics"] if m["name"].endswith(("/W", "/J"))}
    return row


def table(rows: list[dict]) -> str:
    lines = [f"{'run':<28} {'median':>10} {'GB/s':>8} {'G op/s':>9} {'%bw':>5} {'%bound':>6} {'mJ/launch':>10} "
             f"{'W':>5}"]
    for r in rows:
        pct = ("L2", "L2") if r.get("above_roof") else tuple(
            f"{r[k]:.0f}" if r.get(k) is not None else "-" for k in ("pct_bandwidth", "pct_bound"))
        e = r.get("energy") or {}
        lines.append(f"{r['family'] + '/' + r['variant']:<28} {r['median_s'] * 1e3:>8.3f}ms "
                     f"{r.get('achieved_GBps', 0):>8,.0f} {r.get('achieved_Gops', 0):>9,.1f} {pct[0]:>5} {pct[1]:>6} "
                     f"{(e.get('joules_per_launch') or 0) * 1e3:>10.4g} {e.get('watts') or 0:>5.0f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=("cuda", "sim"), default="cuda")
    ap.add_argument("--smoke", action="store_true", help="tiny inputs (with --target sim: the flow only)")
    ap.add_argument("--remeasure", action="store_true", help="measure the device's peaks again")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    from kernels.measure.targets import activate

    activate(args.target)
    from kernels.measure.environment import device_description, environment
    from kernels.results import plain
    from kernels.roofline import peaks as kept
    from kernels.run.runner import run_variant

    started = time.perf_counter()
    device = device_description(args.target)
    peaks = None
    if args.target == "cuda":
        from kernels.roofline.probes import probe_device

        peaks, measured = kept.measure_peaks(device, probe_device, remeasure=args.remeasure)
        say(f"peaks of {device['name']} ({'measured now' if measured else 'kept from ' + peaks['measured']}): "
            f"copy {peaks['bandwidth_Bps'] / 1e9:,.0f} GB/s, "
            + ", ".join(f"{k} {v / 1e9:,.0f} G/s" for k, v in peaks["rates"].items()))
    builders, graphs = inputs(args.smoke), {}
    records, rows = [], []
    for family, variant, key, params in cases(args.smoke):
        if key not in graphs:
            t0 = time.perf_counter()
            graphs[key] = builders[key]()
            say(f"input {graphs[key].name}: {graphs[key].n_rows:,} vertices, {graphs[key].nnz:,} entries "
                f"({time.perf_counter() - t0:.1f} s)")
        graph = graphs[key]
        t0 = time.perf_counter()
        verify = family != "kclique" or args.smoke
        record = run_variant(graph, family, variant, params, target=args.target, repeat=5 if not args.smoke else 1,
                             warmup=1 if not args.smoke else 0, verify=verify, energy=args.target == "cuda").record
        note = "" if verify else "; " + check_kclique(graph, record, args.target)
        if not record["verified"]:
            raise SystemExit(f"{family}/{variant} on {graph.name}: wrong result ({record['verification']['detail']})")
        records.append(record)
        rows.append(summarize(record))
        say(f"{family}/{variant} on {graph.name}: median {record['timing']['kernel']['median_s'] * 1e3:.4g} ms "
            f"({time.perf_counter() - t0:.1f} s{note})")
        for n in record["notices"]:
            if "NVML" in n or "energy" in n:
                say(f"  note: {n}")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"roofline-{slug(device['name'])}{'-smoke' if args.smoke else ''}"
    with open(f"{stem}.jsonl", "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(plain(r)) + "\n")
    summary = {"device": device, "environment": environment(args.target), "peaks": peaks,
               "runs": rows, "wall_s": time.perf_counter() - started,
               "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
               "script": "benchmarks/bench_roofline.py" + (" --smoke" if args.smoke else "")}
    Path(f"{stem}.json").write_text(json.dumps(plain(summary), indent=1), encoding="utf-8")
    written = [f"{stem}.json", f"{stem}.jsonl"]
    if peaks is not None:
        from kernels.roofline.chart import roofline_chart

        try:
            from kernels.roofline.figure import save_roofline
        except ImportError as exc:      # the figures are in the JSON: the picture can be drawn later
            say(f"no SVG: matplotlib is missing ({exc}); explorer.render roofline draws it from the .jsonl")
        else:
            save_roofline(roofline_chart(records), f"{stem}.svg",
                          f"Roofline on {device['name']}: one input per family (bench_roofline.py)")
            written.append(f"{stem}.svg")
    say(table(rows))
    say(f"wrote {', '.join(shown_path(Path(p)) for p in written)} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
