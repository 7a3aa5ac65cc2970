"""The Dask backend: jobs run on the workers of a Dask cluster (see ``docs/cluster.md``).

``connect`` builds the client (addresses, TLS, the plain-text warning), ``tasks`` is what runs
on a Dask worker, ``backend`` is the :class:`~kernels.compute.backend.ComputeBackend`,
``cluster`` starts a scheduler and one worker per GPU on this machine."""

from __future__ import annotations

import importlib.util

INSTALL_CLUSTER = 'pip install "gpu-graph-explorer[cluster]"'


def require_dask(what: str) -> None:
    """Refuse ``what`` (``"--scheduler"``, ``"cluster local"``...) in one line when this
    installation lacks the ``cluster`` extra (``dask`` and ``distributed``): the core and the
    rest of the command line work without them."""
    from kernels.errors import ClusterError

    missing = [name for name in ("dask", "distributed") if importlib.util.find_spec(name) is None]
    if missing:
        raise ClusterError(f"{what} needs Dask ({' and '.join(missing)} missing here), which the cluster extra "
                           f"installs: {INSTALL_CLUSTER} (the [cuda] and [gui] extras include it)")
