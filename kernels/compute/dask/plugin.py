"""The worker plugin that owns a Dask worker's kernels child processes (see
:mod:`kernels.compute.dask.tasks`): created when the worker starts (or when a client first
registers it), closed with the worker."""

from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin

from kernels.compute.dask.tasks import PLUGIN_NAME, Children


class KernelsPlugin(WorkerPlugin):
    name = PLUGIN_NAME
    idempotent = True        # a second client must not replace (and so kill) the children of the first

    def __init__(self):
        self.children: Children | None = None

    def setup(self, worker) -> None:
        self.children = Children()

    def teardown(self, worker) -> None:
        if self.children is not None:
            self.children.close()
