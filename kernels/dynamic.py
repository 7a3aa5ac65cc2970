"""The dynamic-graph experiment (the Marrow-Graph thesis, section 5.6): when does editing a
slotted graph in place and syncing its dirty pages pay off against rebuilding a CSR?

``run_dynamic(graph, algorithm="bfs", batch=0.001, rounds=3, ...)`` builds a
:class:`~kernels.graph.slotted.SlottedGraph` and its :class:`~kernels.graph.device.DeviceMirror`,
then for every round:

1. applies a random batch of ``batch x edges`` edge edits on the host -- half removals of
   existing edges, half insertions of new ones (no self-loops, no repeats) -- timed;
2. **dynamic path**: ``mirror.sync()`` uploads the dirty pages (bytes, pages, strategy,
   time), then ``gpu-slotted`` BFS/SSSP runs on the live device pool;
3. **static path**: ``mirror.rebuild_csr_and_upload()`` rebuilds the CSR from scratch on
   the host and uploads all of it (rebuild and upload timed apart), then ``gpu-csr`` runs;
4. both outputs are verified against SciPy on the edited graph.

Round 0 runs both paths once on the unedited graph, as the baseline. Before it, every kernel
is compiled and every host path the rounds take (the slotted edit engine, the page sync, the
CSR rebuild: numba functions compiled at their first call) runs once on a tiny graph, so no
column counts compiling (``compile_s`` is reported apart). The syncs, the rebuild and the
upload are timed with ``time.perf_counter`` around the work followed by ``cuda.synchronize()``
(the mirror's clock). A rerun is timed as ``graph-kernels run`` times a kernel: after a
warm-up, by CUDA events over ``repeat`` launches, as device time (the launches queued behind a
busy kernel, where the traversal never waits for the device: ``loop=device``; events around
direct launches otherwise) — ``run_s``; the host's wall time of one call (numba's dispatch, the
wait) is ``call_s``, reported beside it and left out of the totals, as run does. Under the CUDA
simulator the times are simulator times (``perf_counter``) and the records say so. The edit
time is reported but left out of both totals: both paths need the edits applied to some host copy.

Output: one JSON line per round (``records``), and a summary (medians over the edit rounds,
the speedup ``static total / dynamic total`` and whether the dynamic path paid off).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kernels.errors import InputRequirementError, ParameterError
from kernels.measure.targets import Target

ALGORITHMS = ("bfs", "sssp")
# how a round's edits reach the pages: "engine" (the host's one-edge-at-a-time edits, then a
# sync of the dirty pages), "host" (one vectorised host batch, then a sync) or "gpu" (kernels on
# the device pages, replayed on the host and checked page for page: docs/updates.md)
APPLY_PATHS = ("engine", "host", "gpu")


@dataclass
class DynamicSettings:
    algorithm: str = "bfs"
    batch: float = 0.001          # edits per round, as a fraction of the edges
    rounds: int = 3
    page_size: int | None = None  # None: chosen by the graph's size (kernels.graph.stats.page_size_for)
    source: int = 0
    seed: int = 0
    balance: str = "lb"
    direction: str = "optimizing"
    block: int = 256
    loop: str = "device"          # as the families' default: one cooperative launch (host: a launch a level)
    sync_strategy: str = "auto"
    repeat: int = 5               # timed reruns per path and round (after one warm-up)
    apply: str = "engine"         # APPLY_PATHS
    notices: list = field(default_factory=list)

    def validate(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ParameterError("algorithm", self.algorithm, " or ".join(ALGORITHMS))
        if not 0.0 < float(self.batch) <= 1.0:
            raise ParameterError("batch", self.batch, "a fraction of the edges, 0 < batch <= 1")
        if int(self.rounds) < 1:
            raise ParameterError("rounds", self.rounds, "an integer >= 1")
        if self.apply not in APPLY_PATHS:
            raise ParameterError("apply", self.apply, ", ".join(APPLY_PATHS))

    def choose_page_size(self, graph) -> None:
        """The page size by the graph's size when none was given: the default of every command and the GUI."""
        if self.page_size is None:
            from kernels.graph.page_size import page_size_for

            self.page_size = page_size_for(graph)

    def gpu_params(self) -> dict:
        params = {"balance": self.balance, "block": self.block, "page_size": self.page_size, "loop": self.loop}
        if self.algorithm == "bfs":
            params["direction"] = self.direction
        return params


# ---- edit batches ----------------------------------------------------------------------------

def _entry_keys(csr) -> np.ndarray:
    """row * n + column of every entry, ascending (rows in order, columns sorted within rows)."""
    return csr.row_of_entry().astype(np.int64) * csr.n_rows + csr.indices


def random_edit_batch(csr, count: int, rng: np.random.Generator):
    """``count`` edits: ``(remove_u, remove_v, add_u, add_v)``, half removals of existing
    edges and half insertions of absent ones, all distinct, no self-loops. For an undirected
    graph each edge is named once (``u < v``)."""
    n = csr.n_rows
    rows = csr.row_of_entry()
    cols = csr.indices
    candidates = np.flatnonzero(rows != cols) if csr.directed else np.flatnonzero(rows < cols)
    n_remove = min(count // 2, len(candidates))
    n_add = count - n_remove
    pick = rng.choice(len(candidates), size=n_remove, replace=False) if n_remove else np.zeros(0, np.int64)
    rem_u = rows[candidates[pick]].astype(np.int64)
    rem_v = cols[candidates[pick]].astype(np.int64)

    keys = _entry_keys(csr)
    free_pairs = n * (n - 1) // (1 if csr.directed else 2) - len(candidates)
    if n_add > free_pairs:
        raise InputRequirementError(f"cannot insert {n_add} new edges: '{csr.name}' has only {free_pairs} "
                                    "vertex pairs left without an edge (use a smaller --batch)")
    add_u = np.zeros(0, np.int64)
    add_v = np.zeros(0, np.int64)
    while len(add_u) < n_add:
        want = 2 * (n_add - len(add_u)) + 16
        u = rng.integers(0, n, want)
        v = rng.integers(0, n, want)
        if not csr.directed:
            u, v = np.minimum(u, v), np.maximum(u, v)
        keep = u != v
        u, v = u[keep], v[keep]
        k = u * n + v
        exists = np.zeros(len(k), dtype=bool)
        if len(keys):
            pos = np.minimum(np.searchsorted(keys, k), len(keys) - 1)
            exists = keys[pos] == k
        u, v = np.concatenate([add_u, u[~exists]]), np.concatenate([add_v, v[~exists]])
        _, first = np.unique(u * n + v, return_index=True)
        first.sort()                                     # keep draw order, drop repeats
        add_u, add_v = u[first][:n_add], v[first][:n_add]
    return rem_u, rem_v, add_u, add_v


# ---- timing ----------------------------------------------------------------------------------

def _timed(fn, sync) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    sync()
    return time.perf_counter() - t0, out


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(statistics.median(values)) if values else None


# ---- the experiment --------------------------------------------------------------------------

def warm_up_host_paths(csr, page_size: int, weight_dtype, apply: str = "engine") -> None:
    """Run the host paths of a round once on a tiny graph of the same kind, so that numba
    compiles them here and not inside a timed column (an edit round through a cluster once read
    10.9 s for 422 edits, the rebuild 6.5 s: compiling)."""
    from kernels.graph.csr import CSRGraph
    from kernels.graph.device import DeviceMirror
    from kernels.graph.slotted import SlottedGraph

    src, dst = [0, 1, 2, 3], [1, 2, 3, 0]
    if not csr.directed:                     # an undirected CSR holds both directions of each edge
        src, dst = src + dst, dst + src
    weights = np.ones(len(src)) if weight_dtype is not None else None
    tiny = CSRGraph.from_edges(4, src, dst, directed=csr.directed, weights=weights, name="warm-up")
    g = SlottedGraph.from_csr(tiny, page_size=page_size)
    mirror = DeviceMirror(g, upload=False)
    mirror.upload_full()
    g.add_edges(np.array([0]), np.array([2]), np.ones(1) if weight_dtype is not None else None)
    g.remove_edges(np.array([0]), np.array([1]))
    mirror.sync()
    mirror.rebuild_csr_and_upload()
    g.to_csr()
    if apply in ("host", "gpu"):             # the batch paths compile at their first batch too
        w = (np.ones(1),) if weight_dtype is not None else ()
        g.apply_updates(insert=(np.array([0]), np.array([1])) + w, delete=(np.array([0]), np.array([2])))
    if apply == "gpu":
        from kernels.operators.device_updates import DeviceUpdater

        DeviceUpdater(mirror).apply(insert=(np.array([0]), np.array([2])) + w, delete=(np.array([0]), np.array([1])))

class DynamicExperiment:
    """State of one experiment: the slotted graph, its mirror, the two GPU runners."""

    def __init__(self, graph, settings: DynamicSettings, *, target: Target | str):
        from numba import cuda

        from kernels.algorithms.registry import get_family
        from kernels.algorithms.traversal.common import prepare_traversal
        from kernels.algorithms.traversal.gpu_exec import compile_like, output_array, traversal
        from kernels.graph.device import DeviceMirror
        from kernels.graph.slotted import SlottedGraph
        from kernels.operators.launch import Workspace
        from kernels.operators.views import slotted_view

        self.cuda = cuda
        self.settings = s = settings
        self.target = target = Target.of(target)
        self.family = get_family(s.algorithm)
        sssp = s.algorithm == "sssp"
        problem = prepare_traversal(graph, {"source": s.source}, weighted=sssp, what=s.algorithm.upper())
        s.notices.extend(problem.notices)
        csr = problem.data["graph"]
        self.weighted = sssp and csr.weights is not None
        csr = csr.with_(weights=problem.data["weights"] if self.weighted else None)
        self.csr = csr
        self.weight_range = ((float(csr.weights.min()), float(csr.weights.max()))
                             if self.weighted and csr.nnz else None)
        self.rng = np.random.default_rng(s.seed)
        params = s.gpu_params()

        self.build_s, self.graph = _timed(lambda: SlottedGraph.from_csr(csr, page_size=s.page_size), lambda: None)
        self.mirror = DeviceMirror(self.graph, upload=False)
        self.initial_upload = self.mirror.upload_full()
        t0 = time.perf_counter()
        if target.real_gpu:
            for kind in ("slotted", "csr"):
                compile_like(s.algorithm, kind, params, directed=csr.directed, weighted=self.weighted,
                             weight_dtype=self.graph.weight_dtype)
        warm_up_host_paths(csr, s.page_size, self.graph.weight_dtype if self.weighted else None, s.apply)
        self.compile_s = time.perf_counter() - t0
        self.slotted_runner = traversal(s.algorithm, "slotted", params, weighted=self.weighted, workspace=Workspace())
        self.csr_runner = traversal(s.algorithm, "csr", params, weighted=self.weighted, workspace=Workspace())
        self._slotted_view = slotted_view
        self._output = output_array
        self.updater = None
        if s.apply == "gpu":
            from kernels.operators.device_updates import DeviceUpdater

            self.updater = DeviceUpdater(self.mirror)

    def sync(self) -> None:
        self.cuda.synchronize()

    def _run(self, runner, view):
        """``(timing, output)``: the rerun timed as ``run`` times a kernel (see the module)."""
        from kernels.algorithms.traversal.device_loop import DeviceLoopTraversal
        from kernels.measure.timing import time_kernel_cuda, time_kernel_simulator

        out = self._output(self.settings.algorithm, view.n_vertices)
        source = self.settings.source

        def launch():
            runner.run(view, source, out)

        self.sync()
        call_s, _ = _timed(launch, self.sync)          # one call as an application makes it (also a warm-up)
        repeat = max(1, int(self.settings.repeat))
        if self.target.real_gpu:
            queued = isinstance(runner, DeviceLoopTraversal)     # one launch that never waits for the device
            stats, _ = time_kernel_cuda(launch, repeat, 1, queued=queued)
            how = "cuda events, launches queued (device time)" if queued else "cuda events, direct launches"
        else:        # simulated time means little and costs much: the call above was the warm-up, one more
            repeat = 1
            stats = time_kernel_simulator(launch, self.sync, repeat, 0)
            how = "perf_counter (CUDA simulator)"
        timing = {"run_s": stats.median_s, "run_min_s": stats.min_s, "run_cv": stats.cv, "call_s": call_s,
                  "timed": how, "repeat": repeat}
        return timing, out.copy_to_host()[: view.n_vertices]

    def _verify(self, output, reference) -> tuple[bool, str]:
        v = self.family.verify(output, reference, None, {})
        return bool(v.ok), v.detail

    def _reference(self, csr):
        from kernels.algorithms.traversal.reference import bfs_levels, sssp_distances

        if self.settings.algorithm == "bfs":
            return bfs_levels(csr, self.settings.source)
        w = csr.weights if csr.weights is not None else np.ones(csr.nnz)
        return sssp_distances(csr, w, self.settings.source)

    def _new_weights(self, count: int):
        if not self.weighted:
            return None
        lo, hi = self.weight_range
        return self.rng.uniform(lo, hi, count) if hi > lo else np.full(count, lo)

    def round(self, number: int) -> dict:
        """Edit (unless round 0), then both paths; returns the round's record."""
        from kernels.operators.views import csr_view

        s, g, mirror = self.settings, self.graph, self.mirror
        removed = added = 0
        edit_s = 0.0
        batch_record = None
        sync_report = None
        device_apply_s = 0.0
        if number > 0:
            count = max(1, int(round(s.batch * g.num_edges)))
            rem_u, rem_v, add_u, add_v = random_edit_batch(self.csr, count, self.rng)
            weights = self._new_weights(len(add_u))
            insert = (add_u, add_v) + ((weights,) if weights is not None else ())

            def edit():
                if len(rem_u):
                    g.remove_edges(rem_u, rem_v)
                if len(add_u):
                    g.add_edges(add_u, add_v, weights)
            removed, added = len(rem_u), len(add_u)
            if s.apply == "engine":
                edit_s, _ = _timed(edit, lambda: None)
            elif s.apply == "host":
                edit_s, report = _timed(lambda: g.apply_updates(insert=insert, delete=(rem_u, rem_v)), lambda: None)
                batch_record = report.as_dict()
            if s.apply == "gpu":
                # the device applies the batch (this is what brings it up to date: no sync), the
                # host replays it (its time is the edit column) and both are compared
                result = self.updater.apply(insert=insert, delete=(rem_u, rem_v))
                device_apply_s = result.report.seconds
                edit_s = result.host.seconds
                batch_record = result.as_dict()
            else:
                sync_report = mirror.sync(strategy=s.sync_strategy)
        slotted_t, slotted_out = self._run(self.slotted_runner, self._slotted_view(mirror))
        slotted_s = slotted_t["run_s"]

        csr_report = mirror.rebuild_csr_and_upload()
        indptr, indices, weights = mirror.csr
        view = csr_view(indptr, indices, weights if self.weighted else None, n_vertices=g.next_vertex_id,
                        n_entries=g.num_entries, directed=g.directed)
        csr_t, csr_out = self._run(self.csr_runner, view)
        csr_s = csr_t["run_s"]

        self.csr = g.to_csr()                       # the edited graph, for the reference and the next batch
        reference = self._reference(self.csr)
        slotted_ok, slotted_detail = self._verify(slotted_out, reference)
        csr_ok, csr_detail = self._verify(csr_out, reference)

        sync_s = sync_report.seconds if sync_report else device_apply_s
        dynamic_total = sync_s + slotted_s
        upload_s = csr_report.seconds - csr_report.rebuild_seconds
        static_total = csr_report.seconds + csr_s
        return {
            "round": number, "algorithm": s.algorithm, "batch_fraction": s.batch if number else 0.0,
            "apply": s.apply, "batch": batch_record,
            "edits": {"removed": removed, "added": added, "edges_after": g.num_edges, "entries_after": g.num_entries},
            "edit_s": edit_s,
            "dynamic": {"sync_s": sync_s, "sync_bytes": sync_report.bytes if sync_report else 0,
                        "sync_pages": sync_report.pages if sync_report else 0,
                        "sync_copies": sync_report.copies if sync_report else 0,
                        "sync_strategy": sync_report.strategy if sync_report else ("device batch" if batch_record
                                                                                   and s.apply == "gpu" else ""),
                        "reallocated": bool(sync_report.reallocated) if sync_report else False,
                        "run_s": slotted_s, "rerun": slotted_t, "total_s": dynamic_total, "verified": slotted_ok,
                        "detail": slotted_detail, "run": dict(self.slotted_runner.last_run)},
            "static": {"rebuild_s": csr_report.rebuild_seconds, "upload_s": upload_s,
                       "upload_bytes": csr_report.bytes, "run_s": csr_s, "rerun": csr_t, "total_s": static_total,
                       "verified": csr_ok, "detail": csr_detail, "run": dict(self.csr_runner.last_run)},
            "speedup": static_total / dynamic_total if dynamic_total > 0 else None,
            "pages": g.num_pages, "dirty_share": (sync_report.pages / max(g.physical_pages_used, 1)
                                                  if sync_report else 0.0),
        }


def summarize_rounds(records: list[dict], experiment: DynamicExperiment | None = None) -> dict:
    """Medians over the edit rounds (round 0, the baseline, is reported apart)."""
    edits = [r for r in records if r["round"] > 0]
    base = next((r for r in records if r["round"] == 0), None)

    def med(path):
        out = []
        for r in edits:
            x = r
            for key in path:
                x = x[key]
            out.append(x)
        return _median(out)

    speedups = [r["speedup"] for r in edits if r["speedup"]]
    summary = {
        "rounds": len(edits),
        "edits_per_round": med(["edits", "removed"]) + med(["edits", "added"]) if edits else 0,
        "edit_s": med(["edit_s"]),
        "sync_s": med(["dynamic", "sync_s"]), "sync_bytes": med(["dynamic", "sync_bytes"]),
        "slotted_run_s": med(["dynamic", "run_s"]), "dynamic_total_s": med(["dynamic", "total_s"]),
        "rebuild_s": med(["static", "rebuild_s"]), "upload_s": med(["static", "upload_s"]),
        "upload_bytes": med(["static", "upload_bytes"]), "csr_run_s": med(["static", "run_s"]),
        "static_total_s": med(["static", "total_s"]),
        "speedup_median": _median(speedups), "speedup_min": min(speedups) if speedups else None,
        "dynamic_pays_off": bool(speedups) and min(speedups) > 1.0,
        "all_verified": all(r["dynamic"]["verified"] and r["static"]["verified"] for r in records),
        "baseline": ({"slotted_run_s": base["dynamic"]["run_s"], "csr_run_s": base["static"]["run_s"]}
                     if base else None),
    }
    if experiment is not None:
        s = experiment.settings
        g = experiment.graph
        summary.update({
            "algorithm": s.algorithm, "batch_fraction": s.batch, "page_size": s.page_size, "source": s.source,
            "seed": s.seed, "params": s.gpu_params(), "target": str(experiment.target),
            "graph": {"name": experiment.csr.name, "vertices": g.num_vertices, "edges": g.num_edges,
                      "entries": g.num_entries, "directed": g.directed, "weighted": experiment.weighted,
                      "pages": g.num_pages},
            "build_s": experiment.build_s, "compile_s": experiment.compile_s,
            "initial_upload": {"bytes": experiment.initial_upload.bytes,
                               "seconds": experiment.initial_upload.seconds},
            "clock": ("edits, syncs, rebuild and upload: perf_counter + cuda.synchronize(); reruns: as graph-kernels "
                      "run times kernels (CUDA events after a warm-up, device time; call_s the host's wall time of "
                      "one call)" + (" (CUDA simulator: host copies and simulated kernels, not GPU times)"
                                     if experiment.target.simulated else "")),
            "notices": list(s.notices),
        })
    return summary


def run_dynamic(graph, settings: DynamicSettings | None = None, *, target: str | None = None,
                records_path: str | Path | None = None, progress=None, **overrides) -> dict:
    """Run the experiment; returns ``{"summary": ..., "records": [...]}``.

    ``settings`` (or keyword overrides of :class:`DynamicSettings`) choose the algorithm,
    the batch fraction, the rounds and the GPU parameters; ``records_path`` gets one JSON line
    per round as it finishes; ``progress(record)`` is called after each round."""
    from kernels.measure.targets import activate, default_gpu_target
    from kernels.results import append_record

    settings = settings or DynamicSettings()
    for key, value in overrides.items():
        setattr(settings, key, value)
    settings.validate()
    settings.choose_page_size(graph)
    target = Target.of(target or default_gpu_target())
    if not target.is_gpu or target.on_cluster:
        raise ParameterError("target", str(target), "cuda or sim (the experiment runs GPU kernels)")
    activate(target)
    experiment = DynamicExperiment(graph, settings, target=target)
    records = []
    if records_path is not None:
        Path(records_path).parent.mkdir(parents=True, exist_ok=True)
        Path(records_path).write_text("")
    for number in range(settings.rounds + 1):
        rec = experiment.round(number)
        records.append(rec)
        if records_path is not None:
            append_record(records_path, rec)
        if progress is not None:
            progress(rec)
    return {"summary": summarize_rounds(records, experiment), "records": records}


def format_round(rec: dict) -> str:
    d, s = rec["dynamic"], rec["static"]
    ok = "yes" if d["verified"] and s["verified"] else "NO"
    speed = f"{rec['speedup']:.2f}x" if rec["speedup"] else "-"
    ms = [rec["edit_s"], d["sync_s"], d["run_s"], d["total_s"], s["rebuild_s"], s["upload_s"], s["run_s"],
          s["total_s"]]
    cells = " ".join(f"{x * 1e3:9.2f}" for x in ms)
    edits = rec["edits"]["removed"] + rec["edits"]["added"]
    return (f"{rec['round']:>5} {edits:>9,} {d['sync_bytes'] / 2**20:9.2f} {cells} {speed:>8} {ok:>4}")


ROUND_HEADER = (f"{'round':>5} {'edits':>9} {'sync MiB':>9} {'edit ms':>9} {'sync ms':>9} {'slot ms':>9} "
                f"{'dyn ms':>9} {'rebld ms':>9} {'upld ms':>9} {'csr ms':>9} {'stat ms':>9} {'speedup':>8} {'ok':>4}")
