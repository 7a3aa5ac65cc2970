"""``graph-kernels export SWEEP.json --format kernel-tuner --out CACHE.json`` and
``graph-kernels import CACHE.json --out SWEEP.json``: sweeps to and from Kernel Tuner's cache
files (``docs/results.md``, "Kernel Tuner")."""

from __future__ import annotations

EXPORT_FORMATS = ("kernel-tuner", "csv")


def register(sub) -> None:
    p = sub.add_parser("export", help="write a sweep as a Kernel Tuner cache file (or CSV)")
    p.add_argument("sweep", help="a sweep file written by 'graph-kernels sweep' (a partial one too)")
    p.add_argument("--format", choices=EXPORT_FORMATS, default="kernel-tuner",
                   help="kernel-tuner: a cache file for KTdashboard and Kernel Tuner's simulation mode (default); "
                        "csv: one row per cell")
    p.add_argument("--out", required=True, metavar="CACHE.json", help="where to write it")
    p.set_defaults(func=run_export)

    p = sub.add_parser("import", help="turn a Kernel Tuner cache file into a sweep file")
    p.add_argument("cache", help="a Kernel Tuner cache file (one left open by a killed run too)")
    p.add_argument("--out", required=True, metavar="SWEEP.json", help="the sweep file to write")
    p.set_defaults(func=run_import)


def _writing(path, write) -> None:
    from kernels.errors import GraphKernelsError

    try:
        write()
    except OSError as exc:
        raise GraphKernelsError(f"cannot write {exc.filename or path}: {exc.strerror or exc}") from None


def run_export(args) -> int:
    from kernels.results import load_sweep, sweep_to_csv
    from kernels.results.kerneltuner import write_kernel_tuner

    sweep = load_sweep(args.sweep)
    if args.format == "csv":
        _writing(args.out, lambda: sweep_to_csv(sweep, args.out))
    else:
        _writing(args.out, lambda: write_kernel_tuner(sweep, args.out))
    print(f"wrote {len(sweep['cells'])} cells of {sweep['family']}/{sweep['variant']} to {args.out} ({args.format})")
    return 0


def run_import(args) -> int:
    from kernels.results import save_sweep
    from kernels.results.kerneltuner import read_kernel_tuner

    sweep = read_kernel_tuner(args.cache)
    _writing(args.out, lambda: save_sweep(sweep, args.out))
    counts = {}
    for c in sweep["cells"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no cells"
    print(f"{summary} over {' × '.join(f'{k} ({len(v)})' for k, v in sweep['grid'].items())}; wrote {args.out}")
    return 0
