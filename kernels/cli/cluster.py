"""``graph-kernels cluster ADDRESS`` lists a Dask cluster's workers, their GPUs and versions, and
why a worker cannot run GPU variants; ``graph-kernels cluster local`` starts a scheduler and
one worker per GPU of this machine and serves until Ctrl-C (see ``docs/cluster.md``)."""

from __future__ import annotations

import argparse
import sys
import threading
import time

from kernels.cli.cluster_options import add_cluster_options, security_from_args
from kernels.cli.common import print_json

CLOSE_TIMEOUT_S = 60.0      # for the Nannies to stop their workers on Ctrl-C
EXIT_MARGIN_S = 20.0        # past the close's timeout: the watchdog ends the process (see close_cluster)


def register(sub) -> None:
    p = sub.add_parser("cluster", help="list a Dask cluster's GPU workers, or start one on this machine "
                       "('cluster local')")
    p.add_argument("address", metavar="ADDRESS|local",
                   help="the scheduler to describe (tls://HOST:PORT), or 'local' to start one here")
    p.add_argument("--gpus", default="all", help="cluster local: all GPUs (default) or the first N (0: none)")
    p.add_argument("--workers", type=int, default=2, help="cluster local without GPUs: CPU workers (default 2)")
    p.add_argument("--host", default="127.0.0.1", help="cluster local: the interface to listen on (default "
                   "127.0.0.1, this machine only; use TLS before opening it to a network)")
    p.add_argument("--port", type=int, default=8786, help="cluster local: the scheduler's port (default 8786, "
                   "0 for any free port)")
    p.add_argument("--dashboard-port", type=int, default=0, metavar="PORT",
                   help="cluster local: the Dask dashboard's port (default 0: any free port, said at start; "
                        "needs bokeh)")
    p.add_argument("--warm", action=argparse.BooleanOptionalAction, default=None,
                   help="start each GPU worker's measuring and compile-ahead processes (imports, CUDA contexts, a "
                        "first compile) now, before any sweep, and say when they are ready: the default for "
                        "'cluster local' (--no-warm: they start with the first sweep, fewer of them); for a "
                        "running cluster, --warm does it and waits")
    p.add_argument("--json", action="store_true", help="print the workers as JSON")
    add_cluster_options(p, mixed=False)
    p.set_defaults(func=run)


def _gib(n: int | None) -> str:
    return f"{n / 2**30:.1f} GiB" if n else "-"


def format_worker(w) -> str:
    gpu = (f"{w.gpu['name']}, {_gib(w.gpu['memory_bytes'])}, compute capability {w.gpu['compute_capability']}"
           if w.gpu else "no GPU")
    v = w.versions
    versions = (f"python {v.get('python', '?')}, numba {v.get('numba', '?')}, numba-cuda {v.get('numba-cuda', '?')}, "
                f"numpy {v.get('numpy', '?')}, kernels {v.get('gpu-graph-explorer', '?')}")
    lines = [f"{w.address}  [{w.name}]  {gpu}", f"    {versions}"]
    if w.problems:
        lines.append("    cannot run GPU variants: " + "; ".join(w.problems))
    for note in w.notes:
        lines.append(f"    note: {note}")
    return "\n".join(lines)


def describe(args) -> int:
    from dataclasses import asdict

    from kernels.cli import verbosity
    from kernels.compute.dask.backend import DaskBackend
    from kernels.log import configure_dask_cli

    configure_dask_cli(verbosity(args), client=True)
    with DaskBackend(args.address, security=security_from_args(args), connect_timeout=args.connect_timeout) as backend:
        if args.warm:
            started = time.monotonic()
            states = backend.warm()
            print(warm_summary(states, time.monotonic() - started), file=sys.stderr if args.json else sys.stdout,
                  flush=True)
        workers = backend.describe()
        if args.json:
            print_json({"scheduler": backend.address, "workers": [asdict(w) for w in workers]})
            return 0
        able = sum(w.can_run_gpu for w in workers)
        print(f"scheduler {backend.address}: {len(workers)} worker(s), {able} can run GPU variants")
        for w in workers:
            print(format_worker(w))
    return 0


def serve_local(args) -> int:
    from kernels.cli import verbosity
    from kernels.compute.dask.cluster import start_local_cluster
    from kernels.compute.dask.connect import plain_text_warning
    from kernels.log import configure_dask_cli

    configure_dask_cli(verbosity(args), client=False)
    security = security_from_args(args, role="all")
    cluster, devices = start_local_cluster(args.gpus, workers=args.workers, host=args.host, port=args.port,
                                           security=security, dashboard=f"{args.host}:{args.dashboard_port}")
    # Ctrl-C (and a plain kill) set an event the main thread waits on, whatever it is doing and
    # whatever handler the cluster's libraries installed while starting: in the suite on a loaded
    # 2-core machine a Ctrl-C once went unanswered (no KeyboardInterrupt, no "stopping" line)
    stop = _stop_on_signals()
    try:
        address = cluster.scheduler_address
        what = (f"{len(devices)} GPU worker(s) (CUDA_VISIBLE_DEVICES {', '.join(devices)})" if devices
                else f"{len(cluster.workers)} CPU worker(s) (simulator and CPU jobs)")
        print(f"scheduler {address}: {what}", flush=True)
        dashboard = cluster.dashboard_link if _has_dashboard(cluster) else None
        if dashboard:
            print(f"dashboard {dashboard}", flush=True)
        print(f"use it with: graph-kernels sweep ... --scheduler {address}   (Ctrl-C stops the cluster)", flush=True)
        warning = plain_text_warning(address)
        if warning:
            print(f"graph-kernels: {warning}", file=sys.stderr, flush=True)
        if args.warm is not False and devices:
            threading.Thread(target=_warm_workers, args=(address, security, stop), name="warm-workers",
                             daemon=True).start()
        while not stop.wait(1.0):
            pass
        print("stopping the cluster", file=sys.stderr, flush=True)
        return 0
    except KeyboardInterrupt:
        print("stopping the cluster", file=sys.stderr, flush=True)
        return 0
    finally:
        # armed until the process ends: the interpreter's exit joins the workers' processes too
        close_cluster(cluster, watchdog_outlives_close=True)


def warm_summary(states: dict, seconds: float) -> str:
    """One line for the workers' warm states (``DaskBackend.warm``)."""
    if not states:
        return "no worker can run GPU variants: nothing to warm"
    warm = [s for s in states.values() if (s or {}).get("state") == "warm"]
    failed = [s for s in states.values() if (s or {}).get("state") == "failed"]
    ahead = sum(int(s.get("compile_ahead_warmed", 0)) for s in warm)
    line = (f"workers warm in {seconds:.1f} s: {len(warm)} of {len(states)} GPU worker(s), each a measuring "
            f"process and its compile-ahead processes ({ahead} in all) with their CUDA contexts")
    if failed:
        line += "; " + "; ".join(f"not warmed: {s.get('message', '?')}" for s in failed)
    return line


def _warm_workers(address: str, security, stop) -> None:
    """Warm the GPU workers (``DaskBackend.warm``) and say when they are ready; a failure is said
    and the cluster serves on (each worker then starts its processes with its first sweep)."""
    from kernels.compute.dask.backend import DaskBackend
    from kernels.errors import GraphKernelsError

    started = time.monotonic()
    try:
        with DaskBackend(address, security=security) as backend:
            states = backend.warm()
    except Exception as exc:  # noqa: BLE001 - a thread of a serving cluster: say it, serve on
        if not stop.is_set():
            why = str(exc) if isinstance(exc, GraphKernelsError) else f"{type(exc).__name__}: {exc}"
            print(f"graph-kernels: the workers were not warmed ({why}); they start their processes with the "
                  "first sweep", file=sys.stderr, flush=True)
        return
    if not stop.is_set():
        print(warm_summary(states, time.monotonic() - started), flush=True)


def _stop_on_signals():
    """An event set by SIGINT or SIGTERM (our handlers, installed now; the main thread's)."""
    import signal
    import threading

    stop = threading.Event()

    def handler(signum, frame):
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    return stop


def close_cluster(cluster, *, timeout: float = CLOSE_TIMEOUT_S, watchdog_outlives_close: bool = False,
                  exit_now=None) -> None:
    """Close the cluster, its Nannies and their workers. A second Ctrl-C ends the process at once
    (its worker processes end with it); a close that fails is said in one line.

    A watchdog ends the process (status 1, said in one line) if it is still there
    :data:`EXIT_MARGIN_S` after the close's own ``timeout``: in the test suite on a loaded 2-core
    machine ``cluster local`` once stayed up ten minutes after Ctrl-C (not reproduced since; a
    Nanny that never answers, or the interpreter's exit waiting on a worker process that outlived
    a failed close, would do it), so a user's Ctrl-C must not depend on either.
    ``watchdog_outlives_close`` leaves it armed after the close returns (for a process about to
    exit); otherwise it is cancelled then."""
    import os
    import signal
    import threading

    exit_now = exit_now or os._exit
    deadline = timeout + EXIT_MARGIN_S

    def now(signum, frame):
        print("graph-kernels: stopped without waiting for the workers", file=sys.stderr, flush=True)
        exit_now(130)

    def give_up():
        print(f"graph-kernels: the cluster did not stop within {deadline:.0f} s: stopped without waiting "
              "for the workers", file=sys.stderr, flush=True)
        exit_now(1)

    watchdog = threading.Timer(deadline, give_up)
    watchdog.daemon = True
    watchdog.start()
    previous = signal.signal(signal.SIGINT, now)
    try:
        cluster.close(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - the process ends either way: say why it was not clean
        print(f"graph-kernels: warning: the cluster did not close cleanly: {type(exc).__name__}: {exc}",
              file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGINT, previous)
        if not watchdog_outlives_close:
            watchdog.cancel()


def _has_dashboard(cluster) -> bool:
    """Whether the scheduler serves a dashboard (it needs bokeh; without it Dask serves none)."""
    try:
        return bool(cluster.scheduler.http_server and "dashboard" in cluster.scheduler.services)
    except AttributeError:
        return False


def run(args) -> int:
    if args.address == "local":
        return serve_local(args)
    return describe(args)
