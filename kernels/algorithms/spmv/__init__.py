"""The SpMV family (the Persian paper): y = A·x on a CSR matrix, x seeded random.

Variants: ``cpu-serial``, ``cpu-parallel``, ``scipy`` (the reference); on the GPU
``gpu-naive`` (one thread per row), ``gpu-tunable`` (the paper's kernel, specialised on
``wg`` x ``rows``), ``gpu-merge`` (merge-path, load-balanced), ``gpu-adaptive`` (rows binned by
length, one launch) and ``cusparse`` (the vendor baseline through CuPy); ``graphblas`` (SuiteSparse:GraphBLAS, the CPU
baseline, optional). GPU code lives in its
own modules, imported only when a GPU variant is made (see ``docs/spmv.md``). Metrics: GFLOP/s
(2·nnz / t) and effective bandwidth (values, column indices, row pointers, x and y each counted
once).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from kernels.algorithms import auto_rules, graphblas_support
from kernels.algorithms.execution import HostExecution
from kernels.algorithms.registry import (
    AUTO,
    Constraint,
    Family,
    LaunchShape,
    Metric,
    Param,
    Problem,
    Variant,
    Verification,
    block_param,
    ceil_div,
    lazy_make,
    register_family,
)
from kernels.algorithms.spmv import vendor
from kernels.cuda.simulator import SPMV_THREADS, capped_blocks

DTYPES = {"fp64": np.float64, "fp32": np.float32}
# relative tolerance on |y - y_ref| measured against sum_j |a_ij x_j| (the row's magnitude),
# so cancellation in a row cannot make a correct result look wrong
TOLERANCE = {"fp64": 1e-10, "fp32": 2e-4}


def _prepare(graph, params, seed) -> Problem:
    dtype = DTYPES[params["dtype"]]
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, graph.n_cols).astype(dtype)
    # no copy when the weights already have the precision (a 10^8-entry matrix is 0.8 GB)
    values = (graph.weights.astype(dtype, copy=False) if graph.weights is not None
              else np.ones(graph.nnz, dtype=dtype))
    indptr = graph.indptr
    indices = graph.indices
    item = np.dtype(dtype).itemsize
    nbytes = values.nbytes + indices.nbytes + (graph.n_rows + 1) * 4 + graph.n_cols * item + graph.n_rows * item
    return Problem(graph=graph, data={"indptr": indptr, "indices": indices, "values": values, "x": x,
                                      "dtype": dtype},
                   size={"nnz": graph.nnz, "bytes": int(nbytes), "dtype": params["dtype"]})


def _reference(problem: Problem, params):
    d = problem.data
    a = problem.graph.to_scipy(dtype=np.float64)
    a.data = d["values"].astype(np.float64)
    x = d["x"].astype(np.float64)
    # |A| built by hand: scipy's abs() would first sum duplicates in place, and the graph's
    # arrays are read-only; summing |a_ij x_j| over the stored entries bounds any kernel's error
    magnitude = sp.csr_matrix((np.abs(a.data), a.indices, a.indptr), shape=a.shape)
    return {"y": a @ x, "scale": magnitude @ np.abs(x)}


def _verify(output, ref, problem: Problem, params) -> Verification:
    y = np.asarray(output, dtype=np.float64)
    if y.shape != ref["y"].shape:
        return Verification(False, "scipy", f"output has shape {y.shape}, expected {ref['y'].shape}")
    tol = TOLERANCE[params["dtype"]]
    expected = ref["y"]
    # a matrix with NaN or infinite entries: such rows must be NaN (or the same infinity) in
    # both, the others within tolerance; a NaN anywhere else is a difference
    same_special = (np.isnan(y) & np.isnan(expected)) | (np.isinf(expected) & (y == expected))
    with np.errstate(invalid="ignore"):
        err = np.abs(y - expected)
    bound = tol * (ref["scale"] + 1e-300) + 1e-300
    finite = np.isfinite(expected)          # (an infinite row's bound is infinite: no tolerance there)
    bad = ~((finite & (err <= bound)) | same_special)  # NaN where the reference has a number is bad
    if not bad.any():
        worst = float(np.max(err[finite] / bound[finite])) * tol if finite.any() else 0.0
        special = int(same_special.sum())
        note = f"; {special} rows NaN or infinite in both, as the matrix's entries make them" if special else ""
        return Verification(True, "scipy", f"max relative error {worst:.2e} (tolerance {tol:g}){note}")
    with np.errstate(invalid="ignore"):
        order = np.argsort(-np.where(bad, np.where(np.isnan(err) | ~finite, np.inf, err / bound), -1.0))[:5]
    order = order[bad[order]]
    worst = [{"row": int(i), "got": float(y[i]), "expected": float(ref["y"][i]),
              "abs_error": float(err[i])} for i in order]
    return Verification(False, "scipy", f"{int(bad.sum())} of {len(y)} rows differ beyond tolerance {tol:g}",
                        worst)


def _summarize(output, problem) -> dict:
    y = np.asarray(output, dtype=np.float64)
    return {"rows": int(len(y)), "norm2": float(np.linalg.norm(y)), "sum": float(y.sum())}


def _gflops(problem, seconds):
    return 2.0 * problem.size["nnz"] / seconds / 1e9


def _bandwidth(problem, seconds):
    return problem.size["bytes"] / seconds / 1e9


FAMILY = register_family(Family(
    name="spmv",
    title="Sparse matrix-vector product y = A x (CSR)",
    description="The Persian paper's tunable CSR SpMV and its baselines; x is seeded random.",
    needs="any sparse matrix (rectangular too); unweighted entries count as 1",
    prepare=_prepare,
    reference=_reference,
    verify=_verify,
    summarize=_summarize,
    metrics=(Metric("GFLOP/s", "GFLOP/s", _gflops, "2 nnz / t"),
             Metric("bandwidth", "GB/s", _bandwidth,
                    "values + column indices + row pointers + x + y, each counted once, / t")),
    reference_name="scipy",
    params=(Param("dtype", str, "fp64", "floating-point precision of values, x and y",
                  choices=("fp64", "fp32")),),
    reference_key=lambda params: (params["dtype"],),
))


def _host_variant(fn):
    def make(problem: Problem, params, target):
        from kernels.algorithms.spmv.cpu import empty_output

        d = problem.data
        y = empty_output(problem.graph.n_rows, d["dtype"])
        return HostExecution(fn(), d["indptr"], d["indices"], d["values"], d["x"], y)
    return make


def _scipy_make(problem: Problem, params, target):
    a = problem.graph.to_scipy(dtype=problem.data["dtype"])
    a.data = problem.data["values"]
    x = problem.data["x"]
    return HostExecution(lambda: a @ x)


def _serial():
    from kernels.algorithms.spmv.cpu import spmv_serial
    return spmv_serial


def _parallel():
    from kernels.algorithms.spmv.cpu import spmv_parallel
    return spmv_parallel


FAMILY.add(Variant("cpu-serial", "cpu-serial", "one loop over rows (numba njit), the paper's figure 4",
                   _host_variant(_serial)))
FAMILY.add(Variant("cpu-parallel", "cpu-parallel", "rows in parallel (numba prange), the paper's OpenMP "
                   "version (figure 8)", _host_variant(_parallel)))
FAMILY.add(Variant("scipy", "library", "scipy.sparse CSR product (the reference)", _scipy_make))


# ---- GPU variants (numba.cuda; their modules import numba.cuda, so only inside make) ------

POWERS_TO_256 = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _blocks(work: int, threads: int, simulator: bool) -> int:
    """One block per work item; on the simulator at most SPMV_THREADS threads in all (the kernels
    grid-stride over the rest; on a GPU past 2^20 blocks)."""
    return capped_blocks(work, threads, SPMV_THREADS) if simulator else max(1, int(work))


def tunable_rows(params: dict) -> int:
    """``rows`` of gpu-tunable; ``auto`` (chosen from the input after the shape is asked) is counted
    as its widest choice, 32 threads a row: the most row blocks."""
    rows = params["rows"]
    return max(int(params["wg"]) // 32, 1) if rows == AUTO else int(rows)


def _adaptive_pieces(graph, params: dict) -> int:
    """gpu-adaptive's pieces of work, from the degrees: short rows a block's worth of rows a piece
    (block / threads_per_row rows in short_mode group, block rows in stream), medium rows a warp
    each, long rows in chunks of ``long_row``. Not yet chosen: ``threads_per_row`` counts as 4,
    ``short_mode=auto`` as group (its choice wherever the product fits in L2), ``long_row`` as its
    rule says."""
    deg = np.diff(np.asarray(graph.indptr, dtype=np.int64))
    block, short_row = int(params["block"]), int(params["short_row"])
    long_row = params["long_row"]
    long_row = auto_rules.spmv_long_row(int(graph.nnz), short_row).value if long_row == AUTO else int(long_row)
    medium = int(((deg > short_row) & (deg <= long_row)).sum())
    chunks = int(sum(ceil_div(d, long_row) for d in deg[deg > long_row]))
    lanes = 4 if params["threads_per_row"] == AUTO else int(params["threads_per_row"])
    per_piece = block if params["short_mode"] == "stream" else max(block // lanes, 1)
    return ceil_div(graph.n_rows, per_piece) + ceil_div(medium, max(block // 32, 1)) + chunks


FAMILY.add(Variant(
    "gpu-naive", "gpu", "one thread per row (the paper's figure 6, ViennaCL's kernel): uncoalesced loads",
    lazy_make("kernels.algorithms.spmv.gpu_naive:make"),
    params=(Param("wg", int, 128, "threads per block", minimum=32, maximum=1024, power_of_two=True),),
    launch=LaunchShape(block_param("wg"), lambda g, p, sim: _blocks(ceil_div(g.n_rows, p["wg"]), p["wg"], sim),
                       sim_params={"wg": 32}, ptx="kernels.algorithms.spmv.gpu_naive:ptx_kernels",
                       text="wg threads a block, one row a thread"),
))
FAMILY.add(Variant(
    "gpu-tunable", "gpu", "the paper's figure 7: wg/rows threads per row with coalesced loads, partial sums "
    "reduced per row; the kernel is specialised (compiled) for each (wg, rows)",
    lazy_make("kernels.algorithms.spmv.gpu_tunable:make"),
    params=(Param("wg", int, 128, "threads per block (work-group size)", minimum=1, maximum=1024,
                  power_of_two=True, sweep_values=POWERS_TO_256),
            Param("rows", int, AUTO, "rows per block; wg/rows threads cooperate on a row; auto: wg / threads per "
                  "row, from the row lengths (docs/defaults.md)", minimum=1,
                  maximum=1024, power_of_two=True, sweep_values=POWERS_TO_256, auto=auto_rules.tunable_rows_rule),
            Param("reduce", str, "shuffle", "how a row's partial sums are combined: warp shuffles (a shared-"
                  "memory exchange under the simulator) or the paper's shared-memory tree",
                  choices=("shuffle", "shared"))),
    constraints=(Constraint("rows <= wg", "each row needs at least one thread"),),
    launch=LaunchShape(block_param("wg"),
                       lambda g, p, sim: _blocks(ceil_div(g.n_rows, tunable_rows(p)), p["wg"], sim),
                       sim_params={"wg": 32, "rows": 8}, ptx="kernels.algorithms.spmv.gpu_tunable:ptx_kernels",
                       text="wg threads a block, rows rows a block"),
))
FAMILY.add(Variant(
    "gpu-merge", "gpu", "merge-path SpMV (Merrill & Garland): every thread gets the same number of rows + entries, "
    "so long rows and empty rows cost no imbalance",
    lazy_make("kernels.algorithms.spmv.gpu_balanced:make"),
    params=(Param("wg", int, 128, "threads per block", minimum=32, maximum=1024, power_of_two=True,
                  sweep_values=(64, 128, 256)),
            Param("ipt", int, 7, "merge-path items (rows + entries) per thread; odd values avoid shared-memory "
                  "bank conflicts", minimum=1, maximum=32, sweep_values=(3, 5, 7, 9, 11, 15))),
    constraints=(Constraint("wg * ipt <= 2048", "a block's tile of wg*ipt items is staged in shared memory"),),
    launch=LaunchShape(block_param("wg"),
                       lambda g, p, sim: _blocks(ceil_div(g.n_rows + g.nnz, p["wg"] * p["ipt"]), p["wg"], sim),
                       sim_params={"wg": 32, "ipt": 3}, ptx="kernels.algorithms.spmv.gpu_balanced:ptx_kernels",
                       text="wg threads a block, a tile of wg*ipt rows + entries a block (after a partition "
                            "kernel of one thread per tile boundary)"),
))
FAMILY.add(Variant(
    "gpu-adaptive", "gpu", "row-binned CSR (CSR-adaptive style) in one launch: short rows in natural order, "
    "threads_per_row lanes a row or 32 rows a warp with a segmented scan (chosen from the columns' spread); "
    "medium rows a warp each; long rows split into chunks over many blocks; streaming loads for the matrix",
    lazy_make("kernels.algorithms.spmv.gpu_adaptive:make"),
    params=(Param("block", int, 128, "threads per block", minimum=32, maximum=1024, power_of_two=True,
                  sweep_values=(128, 256, 512)),
            Param("short_row", int, 64, "rows with at most this many entries are short: handled in natural order "
                  "by short_mode", minimum=0, maximum=4096, sweep_values=(16, 32, 64, 128)),
            Param("long_row", int, AUTO, "rows with more entries are split into chunks of at most this many "
                  "entries, one block each; auto: nnz / 1024 as a power of two in 256..16384 (docs/defaults.md)",
                  minimum=1, maximum=1 << 24, power_of_two=True, sweep_values=(256, 1024, 4096, 16384, 65536),
                  auto=auto_rules.adaptive_long_row_rule),
            Param("short_mode", str, "auto", "short rows: 'group' = threads_per_row lanes share a row (gpu-tunable "
                  "style, best when neighbouring rows gather nearby x); 'stream' = a warp walks 32 rows' entries with "
                  "a segmented scan (best for scattered columns); 'auto' = stream when the product does not fit in a "
                  "50 MB L2 and a sample of the short rows gathers more than 0.5 distinct 128-byte lines of x per "
                  "entry, else group",
                  choices=("auto", "group", "stream")),
            Param("threads_per_row", int, AUTO, "lanes sharing a short row (group mode only); auto: from the short "
                  "rows' lengths (docs/defaults.md)", minimum=1,
                  maximum=32, power_of_two=True, sweep_values=(2, 4, 8), auto=auto_rules.adaptive_threads_rule),
            Param("loads", str, "auto", "matrix loads: 'stream' = ld.global.cs (evict-first: keeps more of x in L2), "
                  "'plain' = ordinary loads, 'auto' = streaming except in group-mode short rows (whose lines are "
                  "reused from L1)", choices=("auto", "stream", "plain"))),
    constraints=(Constraint("short_row <= long_row", "a row is short, medium (a warp) or long (chunks)"),),
    launch=LaunchShape(block_param("block"), lambda g, p, sim: _blocks(_adaptive_pieces(g, p), p["block"], sim),
                       sim_params={"block": 32}, ptx="kernels.algorithms.spmv.gpu_adaptive:ptx_kernels",
                       text="block threads a block, one piece a block: short rows by the block's worth, a "
                            "warp a medium row, a chunk of a long row"),
))
FAMILY.add(Variant(
    "cusparse", "vendor", "NVIDIA cuSPARSE through CuPy (cupyx), the vendor baseline",
    vendor.make, available=vendor.available,
))
FAMILY.add(Variant(
    "graphblas", "library", "SuiteSparse:GraphBLAS GrB_mxv (plus_times semiring, multi-threaded) through "
    "python-graphblas: the CPU baseline a performance engineer would use",
    lazy_make("kernels.algorithms.spmv.graphblas:make"), available=graphblas_support.unavailable,
))
