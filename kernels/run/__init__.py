"""One run of a variant, above the algorithms: the runner that validates, prepares, times
every stage and verifies a variant (:mod:`.runner`), the simulator's time estimate of a job
(:mod:`.sim_estimate`) and the PTX check of the GPU kernels (:mod:`.ptx_check`,
``python -m kernels.run.ptx_check``). How a stage is timed and which target runs it stay
below the algorithms, in :mod:`kernels.measure`; where a run happens is
:mod:`kernels.compute`'s business."""
