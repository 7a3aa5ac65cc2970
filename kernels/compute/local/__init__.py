"""The local worker process: a child process (``python -m kernels worker``) that owns the CUDA
context or the simulator, spoken to through length-prefixed pickle frames (the protocol, the
worker, its client, how it is launched). The pool of them is :mod:`kernels.compute.pool`; the
backend that runs jobs in that pool is :mod:`kernels.compute.local_backend`, above both."""
