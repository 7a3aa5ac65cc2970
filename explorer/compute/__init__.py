"""The compute side of the GUI: task states and the client that runs requests
(:mod:`explorer.model.requests`) in the worker process (``python -m kernels worker``) without
blocking the GUI thread."""

from explorer.compute.client import ComputeClient
from explorer.compute.task import ComputeTask

__all__ = ["ComputeClient", "ComputeTask"]
