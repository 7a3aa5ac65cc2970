"""Graph traversal families: ``bfs`` (levels) and ``sssp`` (distances) from a source.

Each family module (:mod:`.bfs`, :mod:`.sssp`) registers CPU variants (numba), the SciPy
reference and two GPU variants built from :mod:`kernels.operators`: ``gpu-csr`` on a CSR
snapshot and ``gpu-slotted`` on the device page pool of a slotted graph. See
``docs/traversal.md``. This package imports nothing heavy at load time.
"""
