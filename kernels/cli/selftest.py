"""``graph-kernels self-test``: check this installation without the GUI (see :mod:`kernels.selftest`)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("self-test", help="check this installation: the sample graph, a CPU, a simulator (and a GPU) "
                       "kernel through the worker, a sweep file read back, a loopback Dask cluster")
    p.add_argument("--no-cluster", action="store_true",
                   help="skip the loopback Dask cluster (a few seconds; needs the cluster extra)")
    p.set_defaults(func=run)


def run(args) -> int:
    from kernels.selftest import run_core_self_test

    return run_core_self_test(cluster=not args.no_cluster)
