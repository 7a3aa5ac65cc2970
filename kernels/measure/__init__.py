"""How a run is measured, below the algorithms and the graph: the execution targets
(``cuda``, ``sim``, ``cpu``), the timing methods, CUDA-graph launch plans, NVTX ranges, the
energy counter and the environment every record carries. Nothing here imports an algorithm;
the runner that puts them together stands above, in :mod:`kernels.run`."""
