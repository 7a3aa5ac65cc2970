"""``graph-kernels self-test``: prove that a GUI-free installation works, end to end.

It does what a GPU server's first minutes do: read the bundled sample graph, run triangle
counting through the worker process on the CPU (``cpu-serial``), on numba's CUDA simulator
(``gpu-row-block``, ``block_size=32``) and, where the CUDA driver reports a GPU, on the GPU;
sweep two cells into a sweep file and read it back with its heatmap (the result-file checks:
``jsonschema``); and, where the ``cluster`` extra is installed, start a loopback Dask cluster of
one CPU worker and run a simulator job there (what ``cluster local`` and ``--scheduler`` need).
Every result must be verified and equal the known count (45 triangles in Zachary's karate club).

One line per check; exit status 0 when none failed. ``gpu-graph-explorer --self-test`` runs these
checks too when the GUI is not installed (``explorer/selftest.py`` checks the GUI's own path).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

from kernels import __version__

KNOWN_TRIANGLES = {"karate.mtx": 45}
RUN_TIMEOUT_S = 300.0        # a cold worker imports numba (seconds); the simulator is slow but the sample is tiny
CLUSTER_START_S = 120.0


@dataclass
class Check:
    name: str
    status: str              # "ok", "FAIL" or "skip"
    detail: str

    def line(self) -> str:
        return f"  {self.status:<5} {self.name}: {self.detail}"


class CheckList:
    """The checks made so far, each printed as it is recorded."""

    def __init__(self, out: Callable[[str], None] = print):
        self.out = out
        self.checks: list[Check] = []

    def record(self, name: str, status: str, detail: str) -> Check:
        check = Check(name, status, detail)
        self.checks.append(check)
        self.out(check.line())
        return check

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status == "FAIL"]

    def verdict(self) -> int:
        if self.failures:
            self.out(f"self-test FAILED: {self.failures[0].name}: {self.failures[0].detail}")
            return 1
        self.out("self-test passed")
        return 0


def gpu_reason() -> str | None:
    """Why no real-GPU run is attempted (``None``: there is a GPU, run on it)."""
    from kernels.measure.targets import forced_target, probe_gpu

    forced = forced_target()
    if forced is not None and not forced.real_gpu:
        return f"GRAPH_KERNELS_TARGET={forced}: the GPU is not used"
    if probe_gpu() is None:
        return "no CUDA driver or device found: GPU variants run on the simulator here"
    return None


def check_record(checks: CheckList, name: str, record: dict, sample: str, target: str, took: str) -> None:
    """One line for a triangle-counting run's record: verified, the known count, the target asked
    (the core's self-test and the GUI's ``--self-test`` judge their runs by it)."""
    from kernels.measure.targets import Target

    count = (record.get("result") or {}).get("triangles")
    expected = KNOWN_TRIANGLES.get(sample)
    if not record.get("verified"):
        detail = (record.get("verification") or {}).get("detail", "no verification")
        checks.record(name, "FAIL", f"{count} triangles, verification failed: {detail} ({took})")
    elif expected is not None and count != expected:
        checks.record(name, "FAIL", f"{count} triangles, expected {expected} ({took})")
    elif Target.read(record.get("target")) != Target.of(target):
        checks.record(name, "FAIL", f"ran on {record.get('target')!r} instead of {target!r} ({took})")
    else:
        checks.record(name, "ok", f"{count} triangles, verified ({took})")


def check_outcome(checks: CheckList, name: str, outcome, sample: str, target: str, started: float) -> None:
    """One line for a triangle-counting job's outcome (see :func:`check_record`)."""
    took = f"{outcome.worker or 'worker'}, {time.monotonic() - started:.1f} s"
    if not outcome.ok:
        checks.record(name, "FAIL", f"{outcome.reason} ({took})")
        return
    check_record(checks, name, outcome.record, sample, target, took)


class CoreSelfTest:
    def __init__(self, out: Callable[[str], None] = print, sample: str = "karate.mtx", cluster: bool = True):
        self.checks = CheckList(out)
        self.out = out
        self.sample = sample
        self.cluster = cluster
        self.graph = None

    def header(self) -> str:
        import kernels

        how = "frozen bundle" if getattr(sys, "frozen", False) else "Python package"
        return (f"graph-kernels {__version__} self-test ({how}, Python {sys.version.split()[0]})\n"
                f"  kernels from {os.path.dirname(kernels.__file__)}")

    def run(self) -> int:
        self.out(self.header())
        try:
            if self.read_sample():
                self.run_jobs()
                self.sweep_and_read_back()
                self.loopback_cluster()
        except Exception as exc:  # noqa: BLE001 - a self-test reports every failure in words
            self.checks.record("unexpected error", "FAIL", f"{type(exc).__name__}: {exc}")
        return self.checks.verdict()

    def read_sample(self) -> bool:
        from kernels.graph.io import read_graph
        from kernels.samples import sample_path

        started = time.monotonic()
        try:
            path = sample_path(self.sample)
            self.graph = read_graph(path)
        except (FileNotFoundError, OSError) as exc:
            self.checks.record("sample graph", "FAIL", str(exc))
            return False
        g = self.graph
        self.checks.record("sample graph", "ok", f"{path.name}: {g.num_vertices} vertices, {g.num_edges} edges "
                                                 f"({time.monotonic() - started:.1f} s)")
        return True

    def run_jobs(self) -> None:
        from kernels.compute.backend import Job
        from kernels.compute.local_backend import LocalBackend

        plan = [("cpu-serial", "cpu", {}), ("gpu-row-block", "sim", {"block_size": 32})]
        reason = gpu_reason()
        if reason is None:
            plan.append(("gpu-row-block", "cuda", {"block_size": 32}))
        with LocalBackend() as backend:
            backend.add_graph("sample", self.graph)
            for variant, target, params in plan:
                name = f"triangles/{variant} on {target}" + "".join(f" ({k}={v})" for k, v in params.items())
                started = time.monotonic()
                outcome = backend.run(Job("sample", "triangles", variant, params, target=target, repeat=1,
                                          time_limit=RUN_TIMEOUT_S))
                check_outcome(self.checks, name, outcome, self.sample, target, started)
        if reason is not None:
            self.checks.record("GPU", "skip", reason)

    def sweep_and_read_back(self) -> None:
        from kernels.compute.sweep import run_sweep
        from kernels.results import load_sweep
        from kernels.results.heatmap import heatmap_table, to_text

        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="graph-kernels-selftest-") as tmp:
            path = os.path.join(tmp, "sweep.json")
            run_sweep(self.graph, "triangles", "gpu-row-block", {"block_size": [32, 64]}, target="sim", repeat=1,
                      out=path)
            sweep = load_sweep(path)       # checked against the shipped JSON Schemas (jsonschema)
            table = to_text(heatmap_table(sweep))
        statuses = sorted({c["status"] for c in sweep["cells"]})
        if len(sweep["cells"]) != 2 or statuses != ["ok"] or "block_size" not in table:
            self.checks.record("sweep file", "FAIL", f"{len(sweep['cells'])} cells, statuses {statuses}")
            return
        self.checks.record("sweep file", "ok", f"2 cells on sim written, read back and drawn as a table "
                                               f"({time.monotonic() - started:.1f} s)")

    def loopback_cluster(self) -> None:
        if not self.cluster:
            self.checks.record("cluster", "skip", "--no-cluster")
            return
        missing = [m for m in ("dask", "distributed") if importlib.util.find_spec(m) is None]
        if missing:
            self.checks.record("cluster", "skip", f"{' and '.join(missing)} not installed: no Dask backend here "
                                                  '(pip install "gpu-graph-explorer[cluster]")')
            return
        from kernels.compute.backend import Job
        from kernels.compute.dask.backend import DaskBackend
        from kernels.compute.dask.cluster import start_local_cluster

        started = time.monotonic()
        cluster, _ = start_local_cluster(gpus=0, workers=1, port=0)
        try:
            with DaskBackend(cluster.scheduler_address) as backend:
                backend.client.wait_for_workers(1, timeout=CLUSTER_START_S)
                backend.add_graph("sample", self.graph)
                outcome = backend.run(Job("sample", "triangles", "gpu-row-block", {"block_size": 32}, target="sim",
                                          repeat=1, time_limit=RUN_TIMEOUT_S))
            check_outcome(self.checks, "cluster (loopback Dask, 1 CPU worker)", outcome, self.sample, "sim", started)
        finally:
            cluster.close()


def run_core_self_test(out: Callable[[str], None] = print, cluster: bool = True) -> int:
    return CoreSelfTest(out=out, cluster=cluster).run()
