"""What the project's kernels share about CUDA itself: ``jit`` (numba's, with a disk cache of
compiled kernels shared by the host's processes) and the cache (:mod:`kernels.cuda.kernel_cache`)."""
