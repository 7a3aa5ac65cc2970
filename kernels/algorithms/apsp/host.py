"""Executions of the CPU variants (numba) and of the SciPy variant.

Floyd–Warshall works in place, so its execution keeps the initial matrix and restores it
before every timed launch (``needs_reset``; the copy is not timed). Building that dense
matrix from the CSR is the ``upload`` stage on the CPU. Dijkstra writes every entry of its
output each launch and needs no reset.
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms.apsp import cpu
from kernels.algorithms.apsp.memory import check_host
from kernels.algorithms.apsp.negative_cycle import raise_if_negative_diagonal
from kernels.algorithms.apsp.problem import PRED_BYTES, PRED_DTYPE
from kernels.algorithms.apsp.verification import METHOD_NAMES, scipy_apsp, scipy_method
from kernels.algorithms.execution import Execution


def _tiny_inputs(dtype):
    """A 2-vertex graph 0 -> 1 to compile numba functions for ``dtype`` without the real input."""
    return (np.array([0, 1, 1], dtype=np.int64), np.array([1], dtype=np.int32), np.ones(1, dtype=dtype))


def pack(dist, pred):
    return dist if pred is None else {"dist": dist, "pred": pred}


def _pred_or_dummy(n: int, with_pred: bool) -> np.ndarray:
    return np.empty((n, n) if with_pred else (1, 1), dtype=PRED_DTYPE)


class DijkstraCPU(Execution):
    def __init__(self, problem, parallel: bool):
        d = problem.data
        self.problem = problem
        self.fn = cpu.dijkstra_array_parallel if parallel else cpu.dijkstra_heap_all
        self.with_pred = d["predecessors"]
        self.dist = self.pred = None

    def compile(self) -> None:
        dtype = self.problem.data["dtype"]
        self.fn(*_tiny_inputs(dtype), np.empty((2, 2), dtype=dtype), _pred_or_dummy(2, self.with_pred),
                self.with_pred)

    def upload(self) -> None:
        d = self.problem.data
        self.dist = np.empty((d["n"], d["n"]), dtype=d["dtype"])
        self.pred = _pred_or_dummy(d["n"], self.with_pred)

    def launch(self) -> None:
        d = self.problem.data
        self.fn(d["indptr"], d["indices"], d["weights"], self.dist, self.pred, self.with_pred)

    def download(self):
        return pack(self.dist, self.pred if self.with_pred else None)


class FloydWarshallCPU(Execution):
    needs_reset = True

    def __init__(self, problem, parallel: bool, variant: str):
        d = self.data = problem.data
        self.problem = problem
        self.with_pred = d["predecessors"]
        if self.with_pred:
            self.fn = cpu.fw_parallel_pred if parallel else cpu.fw_serial_pred
        else:
            self.fn = cpu.fw_parallel if parallel else cpu.fw_serial
        item = np.dtype(d["dtype"]).itemsize
        check_host(variant, d["n"], 2 * (item + (PRED_BYTES if self.with_pred else 0)),
                   "the initial and the working distance matrix" + (" and predecessor matrix" if self.with_pred
                                                                    else ""))

    def _run(self, dist, pred):
        if self.with_pred:
            self.fn(dist, pred)
        else:
            self.fn(dist)

    def compile(self) -> None:
        dtype = self.data["dtype"]
        dist = np.empty((2, 2), dtype=dtype)
        pred = _pred_or_dummy(2, self.with_pred)
        cpu.fill_initial(*_tiny_inputs(dtype), dist, pred, self.with_pred)
        self._run(dist, pred)

    def upload(self) -> None:
        d = self.data
        n = d["n"]
        self.initial = np.empty((n, n), dtype=d["dtype"])
        self.initial_pred = _pred_or_dummy(n, self.with_pred)
        cpu.fill_initial(d["indptr"], d["indices"], d["weights"], self.initial, self.initial_pred, self.with_pred)
        self.dist = np.empty_like(self.initial)
        self.pred = np.empty_like(self.initial_pred)
        self.reset()

    def reset(self) -> None:
        np.copyto(self.dist, self.initial)
        np.copyto(self.pred, self.initial_pred)

    def launch(self) -> None:
        self._run(self.dist, self.pred)

    def download(self):
        raise_if_negative_diagonal(self.dist, self.problem)
        self.initial = self.initial_pred = None
        return pack(self.dist, self.pred if self.with_pred else None)


class ScipyAPSP(Execution):
    """``scipy.sparse.csgraph.shortest_path`` with the cheaper exact method for the input."""

    def __init__(self, problem):
        d = self.data = problem.data
        self.problem = problem
        self.method = scipy_method(d["n"], len(d["indices"]), bool(d["negative_count"]))
        # SciPy computes in float64 whatever the run's dtype, plus its own copies
        check_host("scipy", d["n"], 8 * 2 + (8 if d["predecessors"] else 0),
                   "SciPy's float64 distance matrix and its dense working copy")
        problem.notices.append(f"scipy method: {self.method} ({METHOD_NAMES[self.method]})")
        if self.method == "FW":
            problem.size["relaxations"] = float(d["n"]) ** 3
            problem.size["relaxations_counted"] = "n^3 (Floyd-Warshall)"
        else:
            problem.size["relaxations"] = float(d["n"]) * len(d["indices"])
            problem.size["relaxations_counted"] = "n*m (Dijkstra: every edge once per source)"
        self._result = None

    def compile(self) -> None:
        pass  # nothing to compile; the first launch is timed like the others

    def launch(self) -> None:
        d = self.data
        if d["predecessors"]:
            dist, pred = scipy_apsp(self.problem, self.method, predecessors=True)
            pred = np.where(pred < 0, -1, pred).astype(PRED_DTYPE)
            self._result = pack(dist.astype(d["dtype"], copy=False), pred)
        else:
            self._result = scipy_apsp(self.problem, self.method).astype(d["dtype"], copy=False)

    def download(self):
        if self._result is None:
            self.launch()
        return self._result
