"""The compute side of the GUI: requests, task states and the client that runs them in the
worker process (``python -m kernels worker``) without blocking the GUI thread."""

from explorer.compute.client import ComputeClient
from explorer.compute.requests import RunRequest, SweepRequest
from explorer.compute.task import ComputeTask

__all__ = ["ComputeClient", "ComputeTask", "RunRequest", "SweepRequest"]
