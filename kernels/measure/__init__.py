"""How one run is made and measured, in this process: the execution targets (``cuda``,
``sim``, ``cpu``), the runner that validates, times and verifies a variant, the timing
methods, and the environment every record carries. Where the run happens is
:mod:`kernels.compute`'s business."""
