"""``lower_bound``: binary search in a sorted slice of a device array, inside a kernel.

Shared by the kernels that look an id up in a sorted adjacency list in global memory
(k-clique's list and bitmap kernels, ``gpu-oriented``'s fallback for an owner whose hash table
would not fit shared memory). The view-generic search of :mod:`.intersection` reads its
entries through a view's functions and stays there.
"""

from __future__ import annotations

from numba import cuda


@cuda.jit(device=True)
def lower_bound(values, lo, hi, x):
    """The first position in ``values[lo:hi]`` (sorted) whose value is not below ``x``; ``hi``
    when there is none."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo
