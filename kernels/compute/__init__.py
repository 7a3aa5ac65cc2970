"""Where runs happen: the compute backends. ``local`` is the worker process on this machine
(:mod:`kernels.compute.local`); ``dask`` is a Dask distributed cluster of GPU workers. Sweeps
(:mod:`kernels.compute.sweep`) and every command that runs variants go through a backend."""
