"""What the project's kernels share about CUDA itself: ``jit`` (numba's, with a disk cache of
compiled kernels shared by the host's processes) and the cache (:mod:`kernels.cuda.kernel_cache`);
the GPU's facts read from the device (:mod:`kernels.cuda.device`), occupancy
(:mod:`kernels.cuda.occupancy`), warp shuffles and their simulator emulation
(:mod:`kernels.cuda.warp`) and the simulator's launch budgets (:mod:`kernels.cuda.simulator`)."""
