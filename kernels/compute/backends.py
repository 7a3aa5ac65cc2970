"""Which compute backend: :func:`open_backend` opens the local one without a scheduler address
and a Dask one with it. It stands above both implementations (and the seam they share,
:mod:`kernels.compute.backend`), so neither the seam nor a backend imports the other."""

from __future__ import annotations

from kernels.compute.backend import ComputeBackend


def open_backend(scheduler: str | None = None, *, security=None, mixed_gpus: bool = False,
                 env: dict | None = None, connect_timeout: float = 20.0, worker_client=None) -> ComputeBackend:
    """A local backend without a scheduler address, else a Dask backend connected to it.

    ``security`` is a ``distributed.Security`` (see :func:`kernels.compute.dask.connect.make_security`);
    ``mixed_gpus`` lets one sweep use GPUs of different kinds; ``env`` and ``worker_client``
    configure the local worker process."""
    if scheduler is None:
        from kernels.compute.local_backend import LocalBackend

        return LocalBackend(env=env, client=worker_client)
    from kernels.compute.dask.backend import DaskBackend

    return DaskBackend(scheduler, security=security, mixed_gpus=mixed_gpus, connect_timeout=connect_timeout)
