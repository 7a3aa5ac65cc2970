"""The local backend: a child process (``python -m kernels worker``) that owns the CUDA
context or the simulator, spoken to through length-prefixed pickle frames."""
