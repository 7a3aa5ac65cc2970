"""``graph-kernels dynamic INPUT --batch F --rounds N --algorithm bfs|sssp``: the dynamic-graph
experiment (edit the slotted graph, sync dirty pages and rerun ``gpu-slotted``, against
rebuilding and uploading a CSR and rerunning ``gpu-csr``; see :mod:`kernels.dynamic`)."""

from __future__ import annotations

import sys

from kernels.cli.cluster_options import add_cluster_options, run_dynamic_on_cluster, scheduler_from_args
from kernels.cli.common import positive_int, print_json
from kernels.graph.page_size import PAGE_SIZE_DEFAULT_TEXT
from kernels.measure.targets import GPU_TARGETS

EXIT_VERIFICATION_FAILED = 3


def register(sub) -> None:
    p = sub.add_parser("dynamic", help="edit a slotted graph in rounds: sync + rerun against rebuild + upload + "
                       "rerun (BFS or SSSP), every round verified")
    p.add_argument("input", help="graph file, or gen:KIND:opt=value,... for a generated graph")
    p.add_argument("--algorithm", choices=("bfs", "sssp"), default="bfs", help="what to rerun (default bfs)")
    p.add_argument("--batch", type=float, default=0.001,
                   help="edge edits per round, as a fraction of the edges (default 0.001 = 0.1 %%)")
    p.add_argument("--rounds", type=int, default=3, help="edit rounds after the baseline (default 3)")
    p.add_argument("--source", type=int, default=0, help="source vertex (default 0)")
    p.add_argument("--page-size", type=int, default=None,
                   help=f"words per slotted page (default: {PAGE_SIZE_DEFAULT_TEXT}, as info and the GUI choose)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="GPU parameter: balance=lb|tpv, block=N, direction=push|optimizing, loop=device|host "
                        "(repeatable)")
    p.add_argument("--apply", choices=("engine", "host", "gpu"), default="engine",
                   help="how each round's edits reach the pages: engine = the host's one-edge-at-a-time edits "
                        "then a sync (default), host = one vectorised host batch then a sync, gpu = kernels on the "
                        "device pages, replayed on the host and checked page for page (docs/updates.md)")
    p.add_argument("--sync-strategy", choices=("auto", "runs", "span", "staged"), default="auto",
                   help="how the mirror uploads dirty pages (default auto)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random edits (default 0)")
    p.add_argument("--repeat", type=positive_int, default=5,
                   help="timed reruns of each path per round, after a warm-up, as run times kernels (default 5)")
    p.add_argument("--target", choices=GPU_TARGETS, help="real GPU or the CUDA simulator (default: cuda "
                   "with a GPU, else sim)")
    p.add_argument("--records", metavar="FILE.jsonl", help="write one JSON line per round")
    p.add_argument("--summary", metavar="FILE.json", help="write the summary (and the rounds) as JSON")
    p.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    p.add_argument("--format", help="force the input format")
    add_cluster_options(p, mixed=False)
    p.add_argument("--time-limit", type=float, default=3600.0,
                   help="with --scheduler: seconds the experiment may take on the worker (default 3600)")
    p.set_defaults(func=run)


def _settings(args):
    from kernels.algorithms.registry import get_variant, parse_param_assignments
    from kernels.dynamic import DynamicSettings

    given = parse_param_assignments(args.param)
    if args.page_size is not None:
        given["page_size"] = str(args.page_size)
    given["source"] = str(args.source)
    fam, var = get_variant(args.algorithm, "gpu-slotted")
    params = fam.resolve_params(var, given)   # names, values and ranges checked by the registry
    return DynamicSettings(algorithm=args.algorithm, batch=args.batch, rounds=args.rounds,
                           page_size=params["page_size"] if args.page_size is not None else None,
                           source=params["source"], seed=args.seed,
                           balance=params["balance"], direction=params.get("direction", "push"),
                           block=params["block"], loop=params.get("loop", "device"),
                           sync_strategy=args.sync_strategy, repeat=args.repeat, apply=args.apply)


def run(args) -> int:
    from kernels.cli.common import load_input_shown
    from kernels.dynamic import ROUND_HEADER, format_round, run_dynamic
    from kernels.measure.targets import activate, default_gpu_target
    from kernels.results import write_json_atomic

    settings = _settings(args)
    settings.validate()
    remote = scheduler_from_args(args)
    target = args.target or (None if remote else default_gpu_target())
    if not remote:
        activate(target)                 # before anything imports numba.cuda
    graph = load_input_shown(args, args.input, format=args.format)
    settings.choose_page_size(graph)
    if remote:
        result, target, worker = run_dynamic_on_cluster(args, graph)
        if not args.json:
            print(f"dynamic experiment on {worker}: {settings.algorithm} on {graph.name}, batch "
                  f"{settings.batch:.4%} of the edges, {settings.rounds} rounds, page size {settings.page_size} "
                  f"[{target}]")
            print(ROUND_HEADER)
            for rec in result["records"]:
                print(format_round(rec))
    elif not args.json:
        print(f"dynamic experiment: {settings.algorithm} on {graph.name}, batch {settings.batch:.4%} of the edges, "
              f"{settings.rounds} rounds, page size {settings.page_size}, edits applied by {settings.apply} [{target}]")
        print(ROUND_HEADER)

    def progress(rec):
        if not args.json:
            print(format_round(rec), flush=True)

    if not remote:
        result = run_dynamic(graph, settings, target=target, records_path=args.records, progress=progress)
    summary = result["summary"]
    if args.summary:
        write_json_atomic(args.summary, result)
    if args.json:
        print_json(summary)
    else:
        for notice in summary.get("notices", []):
            print(f"note: {notice}")
        speed = summary["speedup_median"]
        print(f"median over {summary['rounds']} rounds: dynamic (sync + rerun) "
              f"{summary['dynamic_total_s'] * 1e3:.3f} ms, static (rebuild + upload + rerun) "
              f"{summary['static_total_s'] * 1e3:.3f} ms -> "
              + (f"{speed:.2f}x" if speed else "-")
              + (" (the dynamic structure pays off)" if summary["dynamic_pays_off"] else
                 " (the dynamic structure does not pay off every round)"))
        print(f"clock: {summary['clock']}")
    if not summary["all_verified"]:
        print("graph-kernels: verification FAILED in at least one round (see the records)", file=sys.stderr)
        return EXIT_VERIFICATION_FAILED
    return 0
