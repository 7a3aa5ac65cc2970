"""The SpMV family (the Persian paper): y = A·x on a CSR matrix, x seeded random.

Variants: ``cpu-serial``, ``cpu-parallel``, ``scipy`` (the reference), and the GPU variants
registered from their own modules. Metrics: GFLOP/s (2·nnz / t) and effective bandwidth
(values, column indices, row pointers, x and y each counted once).
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms.execution import HostExecution
from kernels.algorithms.registry import Family, Metric, Param, Problem, Variant, Verification, register_family

DTYPES = {"fp64": np.float64, "fp32": np.float32}
# relative tolerance on |y - y_ref| measured against sum_j |a_ij x_j| (the row's magnitude),
# so cancellation in a row cannot make a correct result look wrong
TOLERANCE = {"fp64": 1e-10, "fp32": 2e-4}


def _prepare(graph, params, seed) -> Problem:
    dtype = DTYPES[params["dtype"]]
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, graph.n_cols).astype(dtype)
    values = (graph.weights if graph.weights is not None else np.ones(graph.nnz)).astype(dtype)
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
    return {"y": a @ d["x"].astype(np.float64), "scale": abs(a) @ np.abs(d["x"].astype(np.float64))}


def _verify(output, ref, problem: Problem, params) -> Verification:
    y = np.asarray(output, dtype=np.float64)
    if y.shape != ref["y"].shape:
        return Verification(False, "scipy", f"output has shape {y.shape}, expected {ref['y'].shape}")
    tol = TOLERANCE[params["dtype"]]
    err = np.abs(y - ref["y"])
    bound = tol * (ref["scale"] + 1e-300) + 1e-300
    bad = ~(err <= bound)  # NaN counts as bad
    if not bad.any():
        worst = float(np.max(err / bound)) * tol if len(err) else 0.0
        return Verification(True, "scipy", f"max relative error {worst:.2e} (tolerance {tol:g})")
    order = np.argsort(-np.where(np.isnan(err), np.inf, err / bound))[:5]
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
