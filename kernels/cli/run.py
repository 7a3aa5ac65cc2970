"""``graph-kernels run FAMILY VARIANT INPUT``: one timed, verified run."""

from __future__ import annotations

import sys

import numpy as np

from kernels.cli.cluster_options import add_cluster_options, run_on_cluster, scheduler_from_args
from kernels.cli.common import launch_mode, print_json, progress_of, repetitions, warmups
from kernels.measure.targets import TARGETS

EXIT_VERIFICATION_FAILED = 3


def register(sub) -> None:
    p = sub.add_parser("run", help="run one variant on one input, timed and verified")
    p.add_argument("family")
    p.add_argument("variant")
    p.add_argument("input", help="graph file, or gen:KIND:opt=value,... for a generated graph")
    add_run_options(p)
    p.add_argument("--output", metavar="PATH.npy", help="write the variant's full output")
    p.add_argument("--json", action="store_true", help="print the run record as JSON")
    p.add_argument("--record", metavar="FILE.jsonl", help="append the run record to a JSON-lines file")
    p.add_argument("--per-vertex", action="store_true", help="per-vertex output (sets per_vertex=true)")
    p.add_argument("--predecessors", action="store_true", help="APSP: keep the predecessor matrix")
    p.set_defaults(func=run)


def add_run_options(p) -> None:
    p.add_argument("--target", choices=TARGETS, help="where GPU variants run (default: "
                   "cuda with a GPU, else the simulator)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE", help="a parameter (repeatable)")
    p.add_argument("--repeat", type=repetitions, default=5, help="timed repetitions, >= 1 (default 5)")
    p.add_argument("--warmup", type=warmups, default=1, help="untimed warm-up launches, >= 0 (default 1)")
    p.add_argument("--launch", type=launch_mode, default="auto", metavar="{auto,graph,direct,queued}",
                   help="timed launches on a GPU: auto (default: device time wherever it can be had: CUDA-graph "
                        "replays, else launches queued behind a busy kernel, else direct), graph (the record "
                        "notes a fallback and why), direct (numba launches), queued (device time of any variant)")
    p.add_argument("--energy", action="store_true",
                   help="on a GPU, also the energy per launch and the mean power, from NVML's energy counter around "
                        "half a second of the timed launches (nvidia-ml-py, in the cuda extra)")
    p.add_argument("--seed", type=int, default=0, help="seed of generated inputs (e.g. SpMV's x)")
    p.add_argument("--format", help="force the input format")
    add_cluster_options(p)


def save_output(output, path: str) -> None:
    if isinstance(output, dict):
        np.savez(path, **{k: np.asarray(v) for k, v in output.items()})
    else:
        np.save(path, np.asarray(output))


def format_record(rec: dict) -> str:
    t = rec["timing"]
    k = t["kernel"]
    m = rec["metric"]
    lines = [
        f"{rec['family']}/{rec['variant']} on {rec['input']['name']} [{rec['target']}] "
        f"params {' '.join(f'{a}={b}' for a, b in rec['params'].items()) or '-'}",
        f"  result    {rec['result']}",
        f"  verified  {'yes' if rec['verified'] else 'NO'} against {rec['verification']['reference']}"
        + (f": {rec['verification']['detail']}" if rec["verification"]["detail"] else ""),
        f"  kernel    median {k['median_s'] * 1e3:.4g} ms (min {k['min_s'] * 1e3:.4g}, max "
        f"{k['max_s'] * 1e3:.4g}, cv {k['cv']:.1%}, {len(k['samples'])} samples x "
        f"{k['launches_per_sample']} launches, {t['method']}"
        + (", CUDA graph replays" if t.get("launch") == "graph" else "") + ")",
        f"  stages    compile {t['compile_s'] * 1e3:.4g} ms, host->device {t['h2d_s'] * 1e3:.4g} ms, "
        f"device->host {t['d2h_s'] * 1e3:.4g} ms",
    ]
    edges = rec["input"].get("traversed_edges")
    for metric in rec.get("metrics", [m]):
        if metric["value"] is not None:
            line = f"  metric    {metric['value']:.4g} {metric['unit']} ({metric['name']})"
            if metric["name"] == "GTEPS" and edges is not None:
                # Graph500's count, with the time it is divided by beside it (docs/traversal.md, Metrics)
                line += (f": {edges:,} input edges of the reached component (undirected edges once) / "
                         f"{k['median_s'] * 1e3:.4g} ms")
            lines.append(line)
    lines.extend(_roofline_and_energy_lines(rec))
    flags = [f for f, on in (("launch-bound", t["launch_bound"]), ("fits in L2", t["fits_in_l2"])) if on]
    if flags:
        lines.append(f"  flags     {', '.join(flags)}")
    lines.append(f"  device    {rec['environment']['device'].get('name')}")
    for n in rec.get("notices", []):
        lines.append(f"  note      {n}")
    return "\n".join(lines)


def _roofline_and_energy_lines(rec: dict) -> list[str]:
    """The work model's figures and where the run sits against the device's measured limits
    (kernels/roofline); the energy window's figures (kernels/measure/energy.py)."""
    from kernels.roofline.percent import roofline_point, why_not_on_roofline

    lines = []
    roof = rec.get("roofline")
    if isinstance(roof, dict):
        from kernels.memory import format_bytes

        lines.append(f"  work      {format_bytes(roof['bytes'])}, {roof['ops']:,.4g} {roof['op']} operations "
                     f"(intensity {roof['ops'] / roof['bytes']:.3g} per byte; docs/roofline.md)" if roof["bytes"] else
                     f"  work      {roof['ops']:,.4g} {roof['op']} operations")
        point = roofline_point(rec)
        if point is None:
            lines.append(f"  roofline  {why_not_on_roofline(rec)}")
        elif point.above:
            lines.append("  roofline  above the measured roof: the input stayed in L2 between the timed launches")
        else:
            lines.append(f"  roofline  {point.pct_bandwidth:.0f} % of the measured bandwidth, "
                         f"{point.pct_bound:.0f} % of the {'memory' if point.memory_bound else point.op} bound")
    e = rec.get("energy")
    if isinstance(e, dict):
        clocks = f"SM {e['sm_clock_mhz']} MHz"
        if "sm_clock_min_mhz" in e and e["sm_clock_min_mhz"] != e["sm_clock_max_mhz"]:
            clocks = f"SM {e['sm_clock_min_mhz']}-{e['sm_clock_max_mhz']} MHz"
        reasons = ", ".join(e.get("throttle_reasons") or []) or "none"
        lines.append(f"  energy    {e['joules_per_launch'] * 1e3:.4g} mJ per launch, {e['watts']:.0f} W over "
                     f"{e['window_s']:.2f} s; {clocks}, memory {e['memory_clock_mhz']} MHz; throttle: {reasons}")
    return lines


def collect_params(args) -> dict:
    from kernels.algorithms.registry import parse_param_assignments

    params = parse_param_assignments(args.param)
    if getattr(args, "per_vertex", False):
        params["per_vertex"] = "true"
    if getattr(args, "predecessors", False):
        params["predecessors"] = "true"
    return params


def _say_simulator_estimate(args, fam, var, graph, params) -> None:
    """A GPU variant on the simulator can take minutes: say how long before it starts (stderr)."""
    from kernels.measure.targets import Target, default_gpu_target
    from kernels.run.sim_estimate import estimate

    if not var.is_gpu or not Target.parse(args.target or default_gpu_target()).simulated:
        return
    est = estimate(fam.name, var.name, graph, fam.resolve_params(var, params), repeat=args.repeat,
                   warmup=args.warmup)
    print(f"graph-kernels: {fam.name}/{var.name} will take {est.describe()}", file=sys.stderr)


def run(args) -> int:
    from kernels.cli.common import load_input_shown
    from kernels.results import append_record
    from kernels.run.runner import run_variant

    params = collect_params(args)
    # validate names and values before reading a possibly large input
    from kernels.algorithms.registry import get_variant

    fam, var = get_variant(args.family, args.variant)
    fam.resolve_params(var, params)
    graph = load_input_shown(args, args.input, format=args.format)
    if scheduler_from_args(args):
        result = run_on_cluster(args, graph, params)
    else:
        _say_simulator_estimate(args, fam, var, graph, params)
        from kernels.run.runner import FIXED_STEPS

        steps = args.warmup + args.repeat + FIXED_STEPS
        with progress_of(args).task(f"{args.family}/{args.variant}", total=steps, unit="steps") as task:
            result = run_variant(graph, args.family, args.variant, params, target=args.target,
                                 repeat=args.repeat, warmup=args.warmup, seed=args.seed, launch=args.launch,
                                 energy=args.energy,
                                 progress=lambda stage, done, total: task.update(completed=done, postfix=stage))
    rec = result.record
    if args.output:
        save_output(result.output, args.output)
    if args.record:
        append_record(args.record, rec)
    if args.json:
        print_json(rec)
    else:
        print(format_record(rec))
    if not rec["verified"]:
        print(f"graph-kernels: verification FAILED: {rec['verification']['detail']}", file=sys.stderr)
        return EXIT_VERIFICATION_FAILED
    return 0
