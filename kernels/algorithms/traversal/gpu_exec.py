"""The ``gpu-csr`` and ``gpu-slotted`` executions of the BFS and SSSP families.

* ``gpu-csr`` uploads the (cleaned) CSR snapshot: int64 row pointers, int32 columns, float64
  weights for SSSP.
* ``gpu-slotted`` builds a :class:`~kernels.graph.slotted.SlottedGraph` with the run's
  ``page_size`` when the execution is made (host preparation, not timed, as the family's
  ``prepare``), and its host->device stage is the device mirror's full upload of the page
  pool and index. The traversal then runs on the live pool, as the dynamic experiment does
  after each edit batch.
* ``gpu-slotted`` given the live pages of an edited document (``problem.live``, see
  :mod:`kernels.operators.live_pages`) builds nothing: its host->device stage is the sync of
  that structure's persistent mirror (a full upload the first time, then the dirty pages),
  and the ``page_size`` parameter does not apply (the structure has its own; a notice says so).

``loop`` picks how the levels are driven: ``device`` (default) runs the whole traversal in one
cooperative launch (:mod:`.device_loop`), ``host`` the host loop of :mod:`.gpu_bfs` /
:mod:`.gpu_sssp` (several launches and one counter read-back per level).

Compile stage, on a real GPU: every kernel the run can take is compiled by a traversal of a
tiny graph with the same array types (host loop: the bottom-up step and the frontier filter
included, the warm-up alternates directions every level; device loop: its one kernel, whose
cooperative grid limit is then cached), so the kernel timings hold no compilation.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from kernels.algorithms.auto_rules import BEAMER_ALPHA, BEAMER_BETA
from kernels.algorithms.execution import Execution
from kernels.algorithms.traversal.device_loop import DeviceLoopTraversal
from kernels.algorithms.traversal.frontier_loop import FrontierLoopTraversal
from kernels.algorithms.traversal.gpu_bfs import GpuBfs
from kernels.algorithms.traversal.gpu_sssp import GpuSssp
from kernels.measure.targets import Target
from kernels.operators.launch import Workspace
from kernels.operators.views import slotted_view, upload_csr


def traversal(algorithm: str, kind: str, params: dict, *, weighted: bool, workspace: Workspace | None = None):
    """A :class:`FrontierLoopTraversal` for the variants with ``alpha`` (``gpu-do``) or ``delta``
    (``gpu-nearfar``), a :class:`DeviceLoopTraversal` for ``loop="device"`` (the default), else a
    :class:`GpuBfs` or :class:`GpuSssp` (the host loop; also when ``params`` has no ``loop``, as
    the dynamic experiment's)."""
    if "alpha" in params or "delta" in params:
        return FrontierLoopTraversal(algorithm, kind, weighted=weighted, balance=params["balance"],
                                     block=params["block"], alpha=params.get("alpha", BEAMER_ALPHA),
                                     beta=params.get("beta", BEAMER_BETA), delta=params.get("delta", 1.0),
                                     hops=params.get("hops", 0), workspace=workspace)
    if params.get("loop", "host") == "device":
        return DeviceLoopTraversal(algorithm, kind, weighted=weighted, balance=params["balance"],
                                   direction=params.get("direction", "push"), block=params["block"],
                                   workspace=workspace)
    if algorithm == "bfs":
        return GpuBfs(kind, balance=params["balance"], direction=params.get("direction", "push"),
                      block=params["block"], workspace=workspace)
    return GpuSssp(kind, weighted=weighted, balance=params["balance"], block=params["block"], workspace=workspace)


def output_array(algorithm: str, n: int):
    return cuda.device_array(max(n, 1), dtype=np.int32 if algorithm == "bfs" else np.float64)


def _warm_up_graph(directed: bool, weighted: bool):
    """A path 0-1-2-3-4 plus a hub 5 linked to all (so lists of both lengths exist)."""
    from kernels.graph.csr import CSRGraph

    src = np.array([0, 1, 2, 3, 5, 5, 5, 5, 5])
    dst = np.array([1, 2, 3, 4, 0, 1, 2, 3, 4])
    w = np.linspace(1.0, 2.0, len(src)) if weighted else None
    return CSRGraph.from_edges(6, src, dst, w, directed=directed, both_directions=not directed, name="warm-up")


def compile_like(algorithm: str, kind: str, params: dict, *, directed: bool, weighted: bool,
                 page_size: int = 16, weight_dtype=np.float64) -> None:
    """Compile every kernel of a run by running it on a tiny graph with the same array types."""
    tiny = _warm_up_graph(directed, weighted)
    if kind == "csr":
        view = upload_csr(tiny, weights=weighted)
    else:
        from kernels.graph.device import DeviceMirror
        from kernels.graph.slotted import SlottedGraph

        view = slotted_view(DeviceMirror(SlottedGraph.from_csr(tiny, page_size=page_size,
                                                               weight_dtype=weight_dtype)))
    runner = traversal(algorithm, kind, params, weighted=weighted)
    if isinstance(runner, GpuBfs):
        runner.alternate = True         # the device loop is one kernel: its run compiles every branch
    out = output_array(algorithm, view.n_vertices)
    runner.run(view, 0, out)
    cuda.synchronize()


class GpuTraversalExecution(Execution):
    def __init__(self, problem, params: dict, target: str, algorithm: str, kind: str):
        self.problem, self.params, self.target = problem, dict(params), target
        self.algorithm, self.kind = algorithm, kind
        d = problem.data
        self.graph = d["graph"]
        self.source = d["source"]
        self.weighted = algorithm == "sssp" and self.graph.weights is not None
        self.slotted = None
        self.live = problem.live if kind == "slotted" else None
        optimizing = params.get("direction") == "optimizing" or "alpha" in params
        if algorithm == "bfs" and optimizing and self.graph.directed:
            problem.notices.append("direction-optimizing BFS needs an undirected graph (the bottom-up step "
                                   "reads a vertex's own list as its in-neighbours): ran top-down only")
        if algorithm == "sssp" and self.graph.weights is None:
            problem.notices.append("the GPU kernels use unit weights without reading a weight array")
        if self.live is not None:
            self.slotted = self.live.graph
            problem.notices.append(f"ran on the document's live pages ({self.slotted.page_size} words each): "
                                   f"the page_size parameter ({params['page_size']}) does not apply")
        elif kind == "slotted":
            from kernels.graph.slotted import SlottedGraph

            csr = self.graph
            if algorithm == "sssp" and csr.weights is not None:
                csr = csr.with_(weights=d["weights"])
            elif algorithm == "bfs" and csr.weights is not None:
                csr = csr.with_(weights=None)      # BFS never reads weights: keep them off the device
            self.slotted = SlottedGraph.from_csr(csr, page_size=params["page_size"])
        self.workspace = Workspace()
        self.runner = traversal(algorithm, kind, params, weighted=self.weighted, workspace=self.workspace)
        if isinstance(self.runner, FrontierLoopTraversal) and Target.parse(target).simulated:
            problem.notices.append("simulator: one block of one warp ran (its warp votes are block-wide exchanges "
                                   f"there); block={params['block']} applies on a GPU")
        self.view = self.mirror = self.out = None
        n, m = self.graph.n_rows, self.graph.nnz
        item = 4 if algorithm == "bfs" else 8
        self.device_bytes = int((n + 1) * 8 + m * 4 + (m * 8 if self.weighted else 0) + n * item)

    def compile(self) -> None:
        if not Target.parse(self.target).real_gpu:
            return                                  # the simulator compiles nothing
        compile_like(self.algorithm, self.kind, self.params, directed=self.graph.directed, weighted=self.weighted,
                     weight_dtype=self.slotted.weight_dtype if self.slotted is not None else np.float64)

    def upload(self) -> None:
        if self.kind == "csr":
            csr = self.graph
            if self.weighted:
                csr = csr.with_(weights=self.problem.data["weights"])
            self.view = upload_csr(csr, weights=self.weighted)
        elif self.live is not None:
            self.live.sync()                        # the dirty pages only (all of them the first time)
            self.mirror = self.live.mirror
            self.view = self.live.view()
            self.device_bytes = int(self.mirror.device_bytes + self.graph.n_rows * (4 if self.algorithm == "bfs"
                                                                                     else 8))
        else:
            from kernels.graph.device import DeviceMirror

            self.mirror = DeviceMirror(self.slotted)
            self.view = slotted_view(self.mirror)
            self.device_bytes = int(self.mirror.device_bytes + self.graph.n_rows * (4 if self.algorithm == "bfs"
                                                                                     else 8))
        self.out = output_array(self.algorithm, self.view.n_vertices)

    @property
    def capturable(self) -> bool:
        """The device loop is one cooperative launch on ``self.stream`` that reads nothing back:
        a CUDA graph may hold it (its ~50 µs of numba dispatch is most of a 15-level traversal).
        The host loop reads the frontier's size back every level."""
        return isinstance(self.runner, DeviceLoopTraversal | FrontierLoopTraversal)

    def launch(self) -> None:
        if isinstance(self.runner, DeviceLoopTraversal | FrontierLoopTraversal):
            self.runner.run(self.view, self.source, self.out, stream=self.stream)
        else:
            self.runner.run(self.view, self.source, self.out)

    def synchronize(self) -> None:
        cuda.synchronize()

    def download(self):
        out = self.out.copy_to_host()[: self.graph.n_rows]
        if self.runner.last_run:
            self.problem.size.update({f"last_{k}": v for k, v in self.runner.last_run.items()})
        return out

    def release(self) -> None:
        self.workspace.release()
        self.view = self.mirror = self.out = None


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`) of a traversal variant: its
    one-launch kernel (the device loop of gpu-csr / gpu-slotted, the frontier loop with the
    hardware warp intrinsics of gpu-do / gpu-nearfar) on its views (CSR; slotted pages with fp64
    and fp32 weight pools), for the argument types its ``run`` passes. The host loop's operators
    are checked with the operators."""
    from numba import types

    from kernels.algorithms.traversal import device_loop, frontier_loop
    from kernels.cuda.jit import array_type
    from kernels.operators.views import view_types

    bfs = variant.family == "bfs"
    frontier = "alpha" in {p.name for p in variant.params} or "delta" in {p.name for p in variant.params}
    views = {name: t for name, t in view_types().items() if (name == "csr") != ("slotted" in variant.name)}
    i32, i64, f64, n = array_type(np.int32), array_type(np.int64), array_type(np.float64), types.int64
    i64_3d = array_type(np.int64, 3)
    out = i32 if bfs else f64
    # (weighted, group, optimizing)
    if frontier:
        shapes = ((False, 32, True), (False, 1, False)) if bfs else ((True, 32, False), (False, 1, False))
    else:
        shapes = ((False, 32, False), (False, 32, True), (False, 1, True)) if bfs else \
            ((True, 32, False), (False, 1, False))
    kernels = []
    for view_name, g in views.items():
        kind = "csr" if view_name == "csr" else "slotted"
        for weighted, group, optimizing in shapes:
            tag = (f"{view_name} {variant.family}{' weighted' if weighted else ''} group={group}"
                   f"{' optimizing' if optimizing else ''}")
            if frontier:
                # (g, n, m, source, out, bits, stamp, small, chunks, counters, result, fb, far, pending, fstamp,
                #  tune, trace)
                # the arguments FrontierLoopTraversal.run passes, so both name one functools.cache entry;
                # near-far also with its block-local hops compiled in (runs with hops > 0)
                args = (g, n, n, n, out, i64, i32, i64_3d, i64_3d, i64, i64, array_type(np.uint32, 2), i32, i32,
                        i32, f64, i64_3d)
                for hops in (False, True) if not bfs else (False,):
                    kernel = frontier_loop.frontier_loop_kernel(kind, variant.family, weighted, 256, group,
                                                                optimizing, True, False, frontier_loop.MAX_REGISTERS,
                                                                hops)
                    kernels.append((f"frontier loop[{tag}{' hops' if hops else ''}]", kernel, args))
            else:
                # (g, n, m, source, out, bits, stamp, small, chunks, counters, result, trace)
                kernel = device_loop.device_loop_kernel(kind, variant.family, weighted, 256, group, optimizing)
                kernels.append((f"device loop[{tag}]", kernel,
                                (g, n, n, n, out, i64, i32, i64_3d, i64_3d, i64, i64, i64_3d)))
    return kernels
