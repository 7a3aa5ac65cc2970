"""Gunrock-style graph operators on the GPU, over the slotted page pool or a CSR snapshot.

The primitives of the Marrow-Graph thesis, in numba.cuda, each with a simulator-testable
form (shared memory + ``syncthreads``; no warp shuffles or ballots):

* :mod:`.advance` -- ``Advance``: from a frontier of vertices to their neighbours, either
  *load-balanced* (locate every frontier vertex's list, exclusive scan of the degrees, then
  every output position finds its source by a binary search over the scan, so each thread
  fetches exactly one neighbour) or *thread per vertex*; a functor decides which neighbours
  are emitted.
* :mod:`.filter` -- ``Filter``: keep the items a predicate accepts (flag + scan + scatter).
* :mod:`.compute` -- ``Compute``: apply a function to every item (a map).
* :mod:`.intersection` -- ``segmented_intersection``: common neighbours of vertex pairs.
* :mod:`.scan` -- the device exclusive scan they use (block scans + a scan of the block sums).
* :mod:`.views` -- how a kernel finds a vertex's adjacency list: in the page pool (through the
  mirror's vertex directory; large lists span pages) or in CSR.
* :mod:`.device_updates` -- ``DeviceUpdater``: a batch of edge updates applied to a mirror's
  pages by device kernels (planned by the scans above), replayed on the host and compared.
* :mod:`.live_pages` -- ``LivePages``: a slotted structure whose device mirror persists
  between runs, and the operators' view of it (what ``Problem.live`` carries).

Both stand here, above :mod:`kernels.graph`, because they are built on the operators (the
scans, the launch shapes, the views); the graph package never imports this one.

The submodules import ``numba.cuda``; import them only after the execution target has been
chosen (the CUDA simulator must be switched on before ``numba.cuda`` is first imported).
This package's ``__init__`` imports nothing heavy. See ``docs/traversal.md``.
"""

__all__ = ["advance", "compute", "device_updates", "filter", "intersection", "launch", "live_pages", "scan",
           "views"]
