"""``gpu-spgemm``: the report's rejected cuSPARSE method, ``sum((L·L) ∘ L)`` through CuPy.

``L`` holds each undirected edge once, as ``L[i, j]`` with ``i`` ranked above ``j``:
``ordering=natural`` ranks by id (``L = tril(A, -1)``, the report's choice), ``ordering=degree``
by (degree, id), which bounds the work of ``L·L`` on skewed graphs. ``L·L`` counts, for each
pair, the paths through a middle vertex; ``∘ L`` keeps pairs that are edges; the sum is the
number of triangles. Values are float32 (exact while one pair has fewer than 2²⁴ common
neighbours); the sum is taken in float64 (exact below 2⁵³).

The report dropped this method for its memory use and speed, so both are recorded: the
result summary has the product's stored entries and bytes, and the CuPy memory pool's
footprint after the first product (an upper bound of the peak of what CuPy and cuSPARSE
allocated). ``CUSPARSE_STATUS_INSUFFICIENT_RESOURCES`` and out-of-memory become a
:class:`ResourceLimitError` that says so.

**The 2³¹ multiply-add limit.** cuSPARSE's SpGEMM with 32-bit indices (what CuPy calls)
returns an *empty* product, without an error, when ``L·L`` takes more than 2³¹ - 1
multiply-adds (``Σ_k colcount(k) · rowcount(k)``): on an H100 with CuPy 14.2 every R-MAT of
scale 20-22 (4.4·10⁹ to 5·10¹⁰ multiply-adds, in either ordering) gave a product of 0 stored
entries and a count of 0, while every input below the limit (R-MAT 16: 2·10⁸) was exact.
The multiply-adds are counted on the host before the product (one pass over ``L``), recorded
in the summary (``product_flops``), and a product over the limit is refused in one sentence
instead of returning a wrong count. A wrong count the check misses is still not hidden: the
runner's verification marks the run wrong.

CuPy is imported only when a run is made, never at module import.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from kernels.algorithms.execution import Execution
from kernels.algorithms.registry import Problem
from kernels.errors import ResourceLimitError

INT32_MAX = 2**31 - 1
FLOPS_LIMIT = INT32_MAX   # multiply-adds of L·L beyond which cuSPARSE returns an empty product


def product_flops(lower) -> int:
    """Multiply-adds of ``lower @ lower`` (SciPy CSR): row ``i`` of the product adds row ``k``
    for each ``k`` in row ``i``, so column ``k``'s count times row ``k``'s length, summed."""
    row_len = np.diff(lower.indptr).astype(np.int64)
    col_count = np.bincount(lower.indices, minlength=lower.shape[1]).astype(np.int64)
    return int(row_len @ col_count[: len(row_len)])


def unavailable() -> str | None:
    """Why the variant cannot run here, without importing CuPy or initialising CUDA."""
    from kernels.measure.targets import probe_gpu

    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed (pip install cupy-cuda12x, or cupy-cuda13x for CUDA 13)"
    if probe_gpu() is None:
        return "no CUDA GPU found"
    return None


def lower_triangle(graph, ordering: str):
    """SciPy CSR of ``L`` (float32 ones, sorted rows) in the given ordering."""
    import scipy.sparse as sp

    n = graph.n_rows
    rows = graph.row_of_entry()
    cols = graph.indices
    if ordering == "natural":
        keep = cols < rows
    else:
        deg = np.diff(graph.indptr)
        rank_key = deg.astype(np.int64) * max(n, 1) + np.arange(n, dtype=np.int64)
        keep = rank_key[cols] < rank_key[rows]
    lower = sp.csr_matrix((np.ones(int(keep.sum()), dtype=np.float32), (rows[keep], cols[keep])), shape=(n, n))
    lower.sort_indices()
    return lower


def _resource_error(exc: BaseException, what: str) -> ResourceLimitError | None:
    text = f"{type(exc).__name__}: {exc}"
    if "INSUFFICIENT_RESOURCES" in text:
        return ResourceLimitError(
            f"cuSPARSE SpGEMM ran out of resources computing {what} ({text}); this memory use is "
            "why the course report dropped the SpGEMM method")
    if "OutOfMemory" in text or "out of memory" in text.lower() or "ALLOC_FAILED" in text:
        return ResourceLimitError(f"out of device memory computing {what} with CuPy/cuSPARSE ({text})")
    return None


class SpgemmExecution(Execution):
    def __init__(self, problem: Problem, params: dict):
        self.problem = problem
        self.ordering = params["ordering"]
        self.stats = problem.data["stats"]
        self.measured = False
        self.total = None

    def compile(self) -> None:
        import cupy
        import cupyx.scipy.sparse

        self.cupy = cupy
        self.sparse = cupyx.scipy.sparse

    def upload(self) -> None:
        lower = lower_triangle(self.problem.graph, self.ordering)
        if lower.nnz > INT32_MAX:
            raise ResourceLimitError(f"L has {lower.nnz} entries: cuSPARSE needs fewer than 2^31")
        flops = product_flops(lower)
        self.stats["product_flops"] = flops
        if flops > FLOPS_LIMIT:
            raise ResourceLimitError(
                f"gpu-spgemm: L·L ({self.ordering} order) on '{self.problem.graph.name}' takes {flops:,} "
                f"multiply-adds, more than cuSPARSE's 32-bit SpGEMM handles ({FLOPS_LIMIT:,}): it would return "
                "an empty product and a count of 0 without an error; use gpu-oriented")
        self.pool = self.cupy.get_default_memory_pool()
        self.lower = self.sparse.csr_matrix(
            (self.cupy.asarray(lower.data), self.cupy.asarray(lower.indices.astype(np.int32)),
             self.cupy.asarray(lower.indptr.astype(np.int32))), shape=lower.shape)
        self.device_bytes = int(lower.data.nbytes + lower.nnz * 4 + (lower.shape[0] + 1) * 4)
        self.stats["lower_nnz"] = int(lower.nnz)
        self.stats["input_bytes"] = self.device_bytes

    def launch(self) -> None:
        cupy = self.cupy
        what = f"L·L ({self.ordering} order, L with {self.lower.nnz} entries)"
        try:
            if not self.measured:
                self.pool.free_all_blocks()  # so the pool's size after the product is its footprint
                held_before = self.pool.total_bytes()
            paths = self.lower @ self.lower
            closed = paths.multiply(self.lower)
            self.total = cupy.sum(closed.data, dtype=cupy.float64)
            if not self.measured:
                cupy.cuda.Device().synchronize()
                self.stats["product_nnz"] = int(paths.nnz)
                self.stats["product_bytes"] = int(paths.data.nbytes + paths.indices.nbytes + paths.indptr.nbytes)
                self.stats["pool_bytes_after_product"] = int(self.pool.total_bytes() - held_before)
                self.measured = True
            del paths, closed
        except Exception as exc:
            self.pool.free_all_blocks()  # leave the device usable for whatever runs next
            translated = _resource_error(exc, what)
            if translated is not None:
                raise translated from exc
            raise

    def synchronize(self) -> None:
        self.cupy.cuda.Device().synchronize()

    def download(self):
        return np.int64(round(float(self.total.get())))

    def release(self) -> None:
        self.lower = None
        self.total = None
        self.pool.free_all_blocks()


def make_spgemm(problem: Problem, params: dict, target: str) -> SpgemmExecution:
    return SpgemmExecution(problem, params)
