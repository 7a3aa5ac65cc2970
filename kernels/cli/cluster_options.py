"""The options that send ``run``, ``sweep`` and ``dynamic`` to a Dask cluster, and the backend
they open (see ``docs/cluster.md``)."""

from __future__ import annotations

from kernels.cli.common import positive_seconds
from kernels.compute.backend import SCHEDULER_ENV


def add_cluster_options(p, *, mixed: bool = True) -> None:
    g = p.add_argument_group("cluster (docs/cluster.md)")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help=f"run on the workers of the Dask scheduler at ADDRESS (tls://HOST:PORT, or tcp:// on a "
                   f"trusted network); default: ${SCHEDULER_ENV}, else this machine")
    g.add_argument("--tls-ca-file", metavar="CA.pem", help="TLS: the CA that signed the cluster's certificates "
                   "(or $GRAPH_KERNELS_TLS_CA)")
    g.add_argument("--tls-cert", metavar="CERT.pem", help="TLS: this client's certificate (or $GRAPH_KERNELS_TLS_CERT)")
    g.add_argument("--tls-key", metavar="KEY.pem", help="TLS: this client's private key (or $GRAPH_KERNELS_TLS_KEY)")
    g.add_argument("--connect-timeout", type=positive_seconds, default=20.0, metavar="S",
                   help="seconds to wait for the scheduler: when connecting, and to reconnect after the connection "
                        "was lost before the cells still out count as lost (default 20)")
    if mixed:
        g.add_argument("--mixed-gpus", action="store_true",
                       help="use GPUs of every kind (by default one kind, so that times are comparable)")


def security_from_args(args, role: str = "client"):
    from kernels.compute.dask.connect import TlsFiles, make_security

    tls = TlsFiles.from_options(getattr(args, "tls_ca_file", None), getattr(args, "tls_cert", None),
                                getattr(args, "tls_key", None))
    return make_security(tls, role=role)


def scheduler_from_args(args) -> str | None:
    from kernels.compute.backend import scheduler_address

    return scheduler_address(getattr(args, "scheduler", None))


def open_backend_from_args(args):
    """The Dask backend for ``--scheduler`` (or ``$GRAPH_KERNELS_SCHEDULER``), else the local one."""
    from kernels.compute.backends import open_backend

    address = scheduler_from_args(args)
    security = security_from_args(args) if address else None
    if address:
        from kernels.cli import verbosity
        from kernels.log import configure_dask_cli

        configure_dask_cli(verbosity(args), client=True)
    return open_backend(address, security=security, mixed_gpus=getattr(args, "mixed_gpus", False),
                        connect_timeout=getattr(args, "connect_timeout", 20.0))


def run_on_cluster(args, graph, params: dict):
    """``graph-kernels run --scheduler``: the run as one job on the cluster → a ``RunResult``."""
    from kernels.compute.backend import Job
    from kernels.run.runner import RunResult

    with open_backend_from_args(args) as backend:
        key = f"run-{graph.fingerprint}"
        backend.add_graph(key, graph)
        outcome = backend.run(Job(key, args.family, args.variant, params, target=args.target, repeat=args.repeat,
                                  warmup=args.warmup, seed=args.seed, want_output=bool(args.output),
                                  time_limit=getattr(args, "time_limit", None),
                                  launch=getattr(args, "launch", "auto"), energy=getattr(args, "energy", False)))
        outcome.raise_if_failed()
        outcome.record["worker"] = outcome.worker
        return RunResult(record=outcome.record, output=outcome.output)


DYNAMIC_FORWARDED = (("algorithm", "--algorithm"), ("batch", "--batch"), ("rounds", "--rounds"),
                     ("source", "--source"), ("page_size", "--page-size"), ("sync_strategy", "--sync-strategy"),
                     ("seed", "--seed"), ("repeat", "--repeat"), ("apply", "--apply"))


def run_dynamic_on_cluster(args, graph) -> tuple[dict, str, str]:
    """``graph-kernels dynamic --scheduler``: the whole experiment as one job on a GPU worker (it
    keeps a device mirror across rounds, so it cannot be split) → (result, target, worker)."""
    from kernels.results import append_record

    with open_backend_from_args(args) as backend:
        target = args.target or backend.default_target(args.algorithm, "gpu-slotted")
        command = ["dynamic", "--target", target]
        for attr, option in DYNAMIC_FORWARDED:
            command += [option, str(getattr(args, attr))]
        for assignment in args.param or []:
            command += ["--param", assignment]
        reply = backend.run_command(graph, command, "--summary", target=target,
                                    time_limit=getattr(args, "time_limit", None))
    result = reply["result"]
    if args.records:
        from pathlib import Path

        Path(args.records).write_text("")
        for rec in result["records"]:
            append_record(args.records, rec)
    return result, target, reply["worker"]
