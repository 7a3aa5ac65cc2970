"""``work=auto`` on a GPU by measurement: each candidate kernel searches a sample of its work.

Five checks on unseen graphs showed that a rule over the graph's features (docs/defaults.md,
rule (d′)) picks the fastest of ``gpu-vertex``, ``gpu-edge`` and ``gpu-list`` in about 80 % of
cases: what decides is how each kernel's search meets this graph on this GPU, and features
computed on the host predict it only roughly. So on a real GPU ``kclique gpu`` measures it: each
candidate counts the cliques of a sample of its work items, and the fastest is chosen.

* The sample is *every s-th work item*, from the middle of the first stratum (the kernels take
  the first item and the step: ``root0``, ``root_step``). A work item is a vertex (``vertex``,
  ``list``) or an oriented edge (``edge``); ids follow the orientation's rank (degree, or the
  core-peeling order) and edges their source, so the sample spans every degree, the heavy tail
  included: a systematic sample stratified by rank, with each sampled item's whole search.
* One ``s`` for every candidate: the vertices // ``TRIAL_MIN_ITEMS`` (8,192), between 1 and
  ``TRIAL_MAX_STEP`` (32). Each candidate then searches about 1/s of its work, so the sampled
  times compare as they are, a launch's fixed cost included on each side (scaling each by its own
  share would multiply that cost by s: the first trial, with a step per candidate, picked the edge
  kernel, whose sample was the smallest share, in 62 of 80 cases). A sample keeps at least 8,192
  vertices (8 a block of the default 1,024-block grid, so it fills the GPU as the full run does)
  and costs at most about 1/32 of each candidate's full search on large graphs; a graph of at most
  16,383 vertices is searched whole.
* Each candidate's time is the median device time of ``TRIAL_REPEAT`` launches queued behind a
  busy kernel (:func:`kernels.measure.timing.time_kernel_cuda`, ``queued``): device time, as the
  runner's timings, not the host's launch overhead.
* A candidate that refuses the input (a bitmap kernel past its out-degree cap, scratch past the
  limit, the GPU out of memory) is skipped, and the notice says why.
* ``group_size``: the value given, else each candidate's own rule (:func:`.kclique_group_size`),
  as the run after it would resolve it.

The choice is remembered per (graph, orientation, k, per-vertex, block and group size, blocks,
device) for the life of the process (a worker's second run on the same input, a sweep's cells
that share these parameters), and the notice gives every candidate's time and the trial's cost.
``GRAPH_KERNELS_KCLIQUE_AUTO=rule`` keeps the feature rule on a GPU (for comparisons);
``=trial`` forces a trial on the CUDA simulator (its times mean nothing there; the tests check
the mechanism). Compile-ahead processes (:func:`kernels.run.runner.compile_variant`) never run
a trial: they take the rule (:func:`kernels.algorithms.auto_rules.device_trials_off`).
"""

from __future__ import annotations

import os
import statistics
import time
from collections import OrderedDict
from dataclasses import dataclass

from kernels.algorithms.auto_rules import device_trials_allowed
from kernels.algorithms.registry import AutoChoice
from kernels.errors import GraphKernelsError, ParameterError

KINDS = ("vertex", "edge", "list")
TRIAL_MIN_ITEMS = 8192
TRIAL_MAX_STEP = 32
TRIAL_REPEAT = 3
AUTO_ENV = "GRAPH_KERNELS_KCLIQUE_AUTO"
AUTO_MODES = ("trial", "rule")
_CACHE_LIMIT = 64
_chosen: OrderedDict = OrderedDict()


def auto_mode(target) -> str:
    """``trial`` or ``rule``: the environment's choice, else a trial on a real GPU only."""
    from kernels.measure.targets import Target

    asked = os.environ.get(AUTO_ENV, "").strip().lower()
    if asked and asked not in AUTO_MODES:
        raise ParameterError(AUTO_ENV, asked, " or ".join(AUTO_MODES), detail="how kclique gpu chooses work=auto")
    if not device_trials_allowed():
        return "rule"
    if asked:
        return asked
    return "trial" if Target.parse(target).real_gpu else "rule"


def sample_step(items: int) -> int:
    """Every how many work items a trial searches (1: all)."""
    return int(min(TRIAL_MAX_STEP, max(1, items // TRIAL_MIN_ITEMS)))


@dataclass(frozen=True)
class TrialTime:
    kind: str
    step: int
    items: int              # searched: every step-th of total
    total: int              # the kind's work items: vertices, or oriented edges
    seconds: float | None   # median device time of the sampled search; None when refused
    refused: str = ""


def _device_seconds(execution, target) -> float:
    from kernels.measure.targets import Target

    if Target.parse(target).real_gpu:
        from kernels.measure.timing import time_kernel_cuda

        stats, _ = time_kernel_cuda(execution.launch, TRIAL_REPEAT, 1, stream=execution.stream, queued=True)
        return stats.median_s
    times = []                     # the simulator: host time of each launch (meaningless, but the path runs)
    for _ in range(TRIAL_REPEAT):
        t0 = time.perf_counter()
        execution.launch()
        execution.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def candidate_params(params: dict, kind: str) -> dict:
    """The parameters a candidate runs with: ``group_size`` as given, else the kind's own rule."""
    from kernels.algorithms.auto_rules import kclique_group_size
    from kernels.algorithms.registry import is_auto

    out = dict(params, work=kind)
    if is_auto(out.get("group_size")):
        out["group_size"] = kclique_group_size(int(params["k"]), kind).value
    return out


def measure(problem, params: dict, target: str, kinds=KINDS, seconds=_device_seconds) -> list[TrialTime]:
    """Each candidate's sampled search, timed (``seconds(execution, target)``)."""
    from kernels.algorithms.kclique.gpu_exec import GpuCliqueExecution

    dag = problem.data["oriented"]
    out = []
    step = sample_step(dag.n)         # one share of the work for every candidate: their times compare as they are
    for kind in kinds:
        total = dag.num_edges if kind == "edge" else dag.n
        p = candidate_params(params, kind)
        execution = None
        try:
            if p["group_size"] > p["block_size"]:
                raise ParameterError("group_size", p["group_size"], f"at most block_size ({p['block_size']})")
            execution = GpuCliqueExecution(problem, p, target, kind, sample_step=step)
            execution.compile()
            execution.upload()
            out.append(TrialTime(kind, step, execution.items, total, seconds(execution, target)))
        except GraphKernelsError as exc:
            out.append(TrialTime(kind, step, 0, total, None, str(exc)))
        except Exception as exc:    # noqa: BLE001 -- the GPU's own refusal (out of memory): not a candidate
            if type(exc).__name__ not in ("CudaAPIError", "CudaDriverError", "CudaSupportError"):
                raise
            out.append(TrialTime(kind, step, 0, total, None, f"{type(exc).__name__}: {exc}"))
        finally:
            if execution is not None:
                execution.release()
    return out


def _key(problem, params: dict, target: str) -> tuple:
    from kernels.measure.targets import Target

    device = ""
    if Target.parse(target).real_gpu:
        from numba import cuda

        dev = cuda.get_current_device()
        device = f"{dev.id}:{dev.name}"
    graph = problem.graph
    return (getattr(graph, "fingerprint", id(graph)), problem.data["oriented"].orientation, int(params["k"]),
            bool(params.get("per_vertex")), params.get("block_size"), params.get("group_size"),
            params.get("max_blocks"), target, device)


def choose(problem, params: dict, target: str, seconds=_device_seconds) -> AutoChoice:
    """The fastest candidate on a sample of its work, with every candidate's time in the reason.
    None measured (all refused): ``list`` (the run then reports its own refusal)."""
    key = _key(problem, params, target)
    if key in _chosen:
        _chosen.move_to_end(key)
        value, reason = _chosen[key]
        return AutoChoice(value, reason + "; remembered from an earlier trial in this process")
    started = time.perf_counter()
    times = measure(problem, params, target, seconds=seconds)
    took = time.perf_counter() - started
    timed = [t for t in times if t.seconds is not None]
    parts = []
    for t in times:
        what = "oriented edges" if t.kind == "edge" else "vertices"
        share = f"all {t.total:,} {what}" if t.step == 1 else f"{t.items:,} of {t.total:,} {what}"
        parts.append(f"{t.kind} {t.seconds * 1e3:.3f} ms ({share})" if t.seconds is not None
                     else f"{t.kind} refused ({t.refused})")
    if not timed:
        value = "list"
        reason = "a trial of every work decomposition was refused: " + "; ".join(parts)
    else:
        best = min(timed, key=lambda t: t.seconds)
        value = best.kind
        reason = (f"measured: each decomposition searched a sample of its work on this GPU, device time, median "
                  f"of {TRIAL_REPEAT}: " + ", ".join(parts) + f" → {value} (the trial took {took * 1e3:.0f} ms, "
                  "compiling included)")
    _chosen[key] = (value, reason)
    while len(_chosen) > _CACHE_LIMIT:
        _chosen.popitem(last=False)
    return AutoChoice(value, reason)
