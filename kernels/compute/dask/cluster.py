"""``graph-kernels cluster local``: a Dask scheduler and one worker per GPU on this machine.

Each GPU gets a ``distributed.Nanny`` (so a worker that dies is restarted) with one thread,
``CUDA_VISIBLE_DEVICES`` set to that GPU and the resource ``GPU=1``: the same workers
``dask worker ... --resources GPU=1`` starts on a server (see ``docs/cluster.md``). Without a
GPU (or with ``gpus=0``) it starts CPU workers, which run simulator and CPU jobs.
"""

from __future__ import annotations

import os

from kernels.compute.dask import require_dask
from kernels.errors import ClusterError, ParameterError


def gpu_devices(gpus: str | int) -> list[str]:
    """The ``CUDA_VISIBLE_DEVICES`` value of each GPU worker: ``all`` or the first ``N``."""
    from kernels.measure.targets import gpu_count

    visible, count = os.environ.get("CUDA_VISIBLE_DEVICES"), gpu_count()
    if visible is not None:          # this shell was pinned already: share out the GPUs it may use
        ids = [v.strip() for v in visible.split(",") if v.strip()][:count]
    else:
        ids = [str(i) for i in range(count)]
    if gpus == "all":
        return ids
    try:
        n = int(gpus)
    except (TypeError, ValueError):
        raise ParameterError("--gpus", gpus, "all or a number of GPUs >= 0") from None
    if n < 0:
        raise ParameterError("--gpus", gpus, "all or a number of GPUs >= 0")
    if n > len(ids):
        raise ParameterError("--gpus", gpus, f"at most {len(ids)} (the GPUs this machine has)")
    return ids[:n]


def worker_specs(devices: list[str], cpu_workers: int, env: dict | None = None) -> dict:
    from distributed import Nanny

    extra = dict(env or {})
    specs = {}
    for device in devices:
        specs[f"gpu-{device}"] = {"cls": Nanny, "options": {
            "nthreads": 1, "resources": {"GPU": 1}, "env": {**extra, "CUDA_VISIBLE_DEVICES": device}}}
    if not devices:
        for i in range(cpu_workers):
            specs[f"cpu-{i}"] = {"cls": Nanny, "options": {"nthreads": 1, "env": dict(extra)}}
    return specs


def start_local_cluster(gpus: str | int = "all", *, workers: int = 1, host: str = "127.0.0.1", port: int = 0,
                        security=None, dashboard: str | None = None, env: dict | None = None):
    """A running ``distributed.SpecCluster`` (close it when done) and its GPU devices."""
    require_dask("starting a local cluster (cluster local)")
    from distributed import Scheduler, SpecCluster

    devices = gpu_devices(gpus)
    if not devices and workers < 1:
        raise ParameterError("--workers", workers, "an integer >= 1 (CPU workers, used when there is no GPU)")
    protocol = "tls://" if security is not None else "tcp://"
    if dashboard is None:                       # Dask's default, 8787, may be taken (or be --port itself)
        dashboard = f"{host}:0"
    scheduler = {"cls": Scheduler, "options": {"host": host, "port": port, "protocol": protocol,
                                               "dashboard_address": dashboard, "security": security}}
    specs = worker_specs(devices, workers, env)
    for spec in specs.values():
        spec["options"].update(host=host, protocol=protocol, security=security)
    check_port_free(host, port)
    try:
        cluster = SpecCluster(workers=specs, scheduler=scheduler, security=security, name="graph-kernels")
    except (OSError, TimeoutError, RuntimeError) as exc:
        cause = exc
        while cause.__cause__ is not None:          # Dask wraps the socket's error in two RuntimeErrors
            cause = cause.__cause__
        raise ClusterError(f"could not start the local cluster on {host}:{port}: {cause}") from None
    return cluster, devices


def check_port_free(host: str, port: int) -> None:
    """Refuse a taken scheduler port in one line, before Dask starts anything (port 0: any free one)."""
    import errno
    import socket

    if not port:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ClusterError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)    # as tornado binds: TIME_WAIT is not taken
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ClusterError(f"port {port} on {host} is taken (another Dask scheduler or dashboard?): "
                                   "choose another with --port, or --port 0 for any free port") from None
            raise ClusterError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
