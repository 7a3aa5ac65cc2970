"""The worker plugin that owns a Dask worker's kernels child processes, a
:class:`~kernels.compute.pool.WorkerPool` (see :mod:`kernels.compute.dask.tasks`): created when
the worker starts (or when a client first registers it), closed with the worker."""

from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin

from kernels.compute.dask.tasks import PLUGIN_NAME, make_pool


class KernelsPlugin(WorkerPlugin):
    name = PLUGIN_NAME
    idempotent = True        # a second client must not replace (and so kill) the processes of the first

    def __init__(self):
        self.pool = None

    def setup(self, worker) -> None:
        self.pool = make_pool(worker.address)

    def teardown(self, worker) -> None:
        if self.pool is not None:
            self.pool.close()
