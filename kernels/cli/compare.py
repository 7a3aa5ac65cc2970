"""``graph-kernels compare A.json [B.json]``: one tuning, two GPUs (:mod:`kernels.results.portability`).

Two sweeps of one grid and input made on different GPUs, or one ``--mixed-gpus`` cluster sweep
(split by the GPU kind that ran each cell): both tables on one scale, and the portability loss
of each GPU's best cell on the other."""

from __future__ import annotations

from kernels.cli.common import print_json


def register(sub) -> None:
    p = sub.add_parser("compare", help="how a sweep's best cell carries to another GPU: two sweeps of one grid "
                       "(or one mixed-GPU cluster sweep), the portability loss both ways")
    p.add_argument("sweeps", nargs="+", metavar="SWEEP.json", help="two sweep files, or one with cells of two GPUs")
    p.add_argument("--json", action="store_true", help="the comparison as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from kernels.errors import GraphKernelsError
    from kernels.results import load_sweep
    from kernels.results.heatmap import heatmap_table, to_text
    from kernels.results.portability import compare, split_by_device

    sweeps = [load_sweep(path) for path in args.sweeps]
    if len(sweeps) == 1:
        sweeps = split_by_device(sweeps[0])
    if len(sweeps) != 2:
        raise GraphKernelsError(f"compare takes two sweeps (or one whose cells ran on two kinds of GPU); "
                                f"got {len(sweeps)}")
    result = compare(*sweeps)
    if args.json:
        print_json(result.to_json())
        return 0
    for sweep in sweeps:
        print(f"on {sweep.get('device')}:")
        print(to_text(heatmap_table(sweep)))
        print()
    print(result.sentence())
    return 0
