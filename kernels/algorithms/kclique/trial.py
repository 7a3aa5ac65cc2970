"""``work=auto`` on a GPU by measurement: each candidate kernel searches a sample of its work.

Five checks on unseen graphs showed that a rule over the graph's features (docs/defaults.md,
rule (d′)) picks the fastest of ``gpu-vertex``, ``gpu-edge`` and ``gpu-list`` in about 80 % of
cases: what decides is how each kernel's search meets this graph on this GPU, and features
computed on the host predict it only roughly. So on a real GPU ``kclique gpu`` measures it: each
candidate counts the cliques of a sample of its work items, and the fastest is chosen.

* A *sample* is every s-th work item, from the middle of the first stratum (the kernels take
  the first item and the step: ``root0``, ``root_step``). A work item is a vertex (``vertex``,
  ``list``) or an oriented edge (``edge``); ids follow the orientation's rank (degree, or the
  core-peeling order) and edges their source, so a sample spans every degree, the heavy tail
  included: a systematic sample stratified by rank, with each sampled item's whole search.
* First a *probe*: each candidate searches one s-th of its work, s = the vertices // 1,024
  between 1 and 32 (``PROBE_MIN_ITEMS``: a vertex a block of the default grid; ``PROBE_MAX_STEP``),
  timed over a warm-up, a probe and one sample (more launches a sample for kernels under 50 µs,
  which the timing batches). A sample's time is not its share of the
  full time: with a few items a block the vertex kernels wait for their heaviest block, and a
  launch's fixed cost weighs more (on skewed graphs at k = 5 the vertex kernel's sample read 4-5x
  the edge kernel's where its full search was 0.6x of it; a trial that decided on samples of
  1/12-1/32 picked wrongly in 15 of 80 cases: ``benchmarks/results/kclique-auto/trial/``). So the
  probe only estimates each full time (its time x s) and, when the candidates cannot all be
  searched whole, prunes: a candidate over ``PRUNE`` = 10 times the fastest probe is out (the
  distortion seen was up to 8x).
* Then the *decision*: every candidate is searched **whole** when their estimated full times add
  up to at most ``WHOLE_BUDGET_S`` (0.1 s), else those the pruning left, whole if they fit it,
  else on the smallest sample that keeps them within it, or, when that sample would be no larger
  than the probe's, on the probe's times. A whole search is timed as the median of 3 samples after
  a warm-up and a probe (under 2,048 vertices the probe was already whole: timed again so); a
  sampled decision over one sample. So choosing costs the
  probe (about 3 searches of a 32nd of each candidate's work from 32,768 vertices, of a larger
  share below: whole searches under 2,048 vertices, where kernels that take seconds would make it
  costly) plus at most about 0.5 s (whole searches) or 0.3 s (a sample), and compiling the
  candidates' kernels (numba's and the kernel cache's on disk), once per input and launch
  parameters in a process.
* Times are device time: launches queued behind a busy kernel, as the runner's timings are, not
  the host's launch overhead.
* A candidate that refuses the input (a bitmap kernel past its out-degree cap, scratch past the
  limit, the GPU out of memory or out of launch resources, a kernel that does not compile) is
  skipped, and the notice says why; a choice made while the GPU refused one for its state (out of
  memory) is not remembered. If every whole search is refused, the probes decide among the
  candidates that were not. Any other error (a CUDA fault) propagates: the run fails with it.
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

import math
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from kernels.algorithms.auto_rules import device_trials_allowed
from kernels.algorithms.registry import AutoChoice
from kernels.errors import COMPILER_ERROR_NAMES, GraphKernelsError, ParameterError

KINDS = ("vertex", "edge", "list")
PROBE_MIN_ITEMS = 1024
PROBE_MAX_STEP = 32
PRUNE = 10.0
WHOLE_BUDGET_S = 0.1
TRIAL_REPEAT = 3
AUTO_ENV = "GRAPH_KERNELS_KCLIQUE_AUTO"
AUTO_MODES = ("trial", "rule")
_CACHE_LIMIT = 64
_chosen: OrderedDict = OrderedDict()
_chosen_lock = threading.Lock()
#: CUDA driver errors that refuse one candidate and leave the context usable: out of memory, a launch
#: out of resources (registers or shared memory for this block size); any other CUDA error propagates
REFUSING_CUDA_CODES = {2: "CUDA_ERROR_OUT_OF_MEMORY", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}


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


def probe_step(vertices: int) -> int:
    """Every how many work items the probe searches: a vertex a block of the default grid at least
    (1,024), a 32nd at most (from 32,768 vertices); a graph under 2,048 vertices whole."""
    return int(min(PROBE_MAX_STEP, max(1, vertices // PROBE_MIN_ITEMS)))


def decision_step(estimated_s: float) -> int:
    """Whole (1) when the contenders' estimated full times fit the budget, else the smallest
    step that brings them within it."""
    return int(max(1, math.ceil(estimated_s / WHOLE_BUDGET_S)))


@dataclass(frozen=True)
class TrialTime:
    kind: str
    step: int
    items: int              # searched: every step-th of total
    total: int              # the kind's work items: vertices, or oriented edges
    seconds: float | None   # median device time of the sampled search; None when refused
    refused: str = ""
    transient: bool = False  # refused by the GPU's state (memory): the next run may measure it


def _device_seconds(execution, target, repeat: int) -> float:
    """The median of ``repeat`` launches queued behind a busy kernel, after a warm-up and a probe
    launch (:func:`kernels.measure.timing.time_kernel_cuda`): device time only, as the runner's
    timings. (One launch between two events was tried: it counts the host's launch overhead, about
    0.3 ms here, which swamped the probes and the sampled decisions: tenth check, trial/5-one-launch.)
    Direct launches where the host cannot queue them in time."""
    from kernels.measure.targets import Target

    if Target.parse(target).real_gpu:
        from kernels.measure.timing import time_kernel_cuda

        try:
            stats, _ = time_kernel_cuda(execution.launch, repeat, 1, stream=execution.stream, queued=True)
        except RuntimeError:           # the host could not queue the launches behind the busy kernel
            stats, _ = time_kernel_cuda(execution.launch, repeat, 1, stream=execution.stream)
        return stats.median_s
    from kernels.measure.timing import time_kernel_simulator

    # the simulator: wall clock of the simulation (meaningless as a time, but the path runs)
    return time_kernel_simulator(execution.launch, execution.synchronize, repeat, 0).median_s


def _refusal(exc: BaseException) -> tuple[str, bool] | None:
    """Why ``exc`` refuses one candidate (and leaves the rest measurable), and whether the GPU's
    state caused it (out of memory: another run may fit), or None: raise it."""
    from numba.core.errors import NumbaError

    if isinstance(exc, GraphKernelsError):
        return str(exc), False
    if isinstance(exc, NumbaError) or type(exc).__name__ in COMPILER_ERROR_NAMES:
        return f"its kernel could not be compiled: {type(exc).__name__}: {exc}"[:300], False
    if type(exc).__name__ == "CudaAPIError":
        code = getattr(exc, "code", None)
        try:
            code = int(code)
        except (TypeError, ValueError):
            code = None
        text = str(exc)
        if code in REFUSING_CUDA_CODES or any(name in text for name in REFUSING_CUDA_CODES.values()):
            return f"the GPU refused it: {text}"[:300], True
    return None


def candidate_params(params: dict, kind: str) -> dict:
    """The parameters a candidate runs with: ``group_size`` as given, else the kind's own rule."""
    from kernels.algorithms.auto_rules import kclique_group_size
    from kernels.algorithms.registry import is_auto

    out = dict(params, work=kind)
    if is_auto(out.get("group_size")):
        out["group_size"] = kclique_group_size(int(params["k"]), kind).value
    return out


def measure(problem, params: dict, target: str, kinds, step: int, repeat: int,
            seconds=_device_seconds) -> list[TrialTime]:
    """Each candidate's search of every ``step``-th work item, timed (``seconds(execution,
    target, repeat)``); a refusal is recorded, not raised."""
    from kernels.algorithms.kclique.gpu_exec import GpuCliqueExecution

    dag = problem.data["oriented"]
    out = []
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
            out.append(TrialTime(kind, step, execution.items, total, seconds(execution, target, repeat)))
        except Exception as exc:    # noqa: BLE001 -- a refusal skips the candidate; anything else propagates
            why = _refusal(exc)
            if why is None:
                raise
            out.append(TrialTime(kind, step, 0, total, None, *why))
        finally:
            if execution is not None:
                execution.release()
    return out


def _said(t: TrialTime) -> str:
    if t.seconds is None:
        return f"{t.kind} refused ({t.refused})"
    what = "oriented edges" if t.kind == "edge" else "vertices"
    share = "whole" if t.step == 1 else f"1/{t.step}: {t.items:,} of {t.total:,} {what}"
    return f"{t.kind} {t.seconds * 1e3:.3f} ms ({share})"


def _key(problem, params: dict, target: str) -> tuple:
    from kernels.measure.targets import Target

    device = ""
    if Target.parse(target).real_gpu:
        from numba import cuda

        dev = cuda.get_current_device()
        device = f"{dev.id}:{dev.name}"
    return (problem.graph.fingerprint, problem.data["oriented"].orientation, int(params["k"]),
            bool(params.get("per_vertex")), params.get("block_size"), params.get("group_size"),
            params.get("max_blocks"), target, device)


def choose(problem, params: dict, target: str, seconds=_device_seconds) -> AutoChoice:
    """The fastest candidate, measured: a probe on a sample estimates (and, past the budget,
    prunes), then the contenders are searched whole, or on the largest sample within the budget,
    or (when even that is no larger than the probe) decided on the probe. Every time is in the
    reason. None measured (all refused): ``list`` (the run then reports its own refusal)."""
    key = _key(problem, params, target)
    with _chosen_lock:
        if key in _chosen:
            _chosen.move_to_end(key)
            value, reason = _chosen[key]
            return AutoChoice(value, reason + "; remembered from an earlier trial in this process")
    started = time.perf_counter()
    probe = probe_step(problem.data["oriented"].n)
    probes = measure(problem, params, target, KINDS, probe, 1, seconds)
    timed = [t for t in probes if t.seconds is not None]
    finals: list[TrialTime] = []
    out: list[str] = []
    decided: list[TrialTime] = []
    if timed:
        fastest = min(t.seconds for t in timed)
        contenders = timed
        if sum(t.seconds * t.step for t in timed) > WHOLE_BUDGET_S:
            contenders = [t for t in timed if t.seconds <= PRUNE * fastest]
        out = [t.kind for t in timed if t not in contenders]
        step = decision_step(sum(t.seconds * t.step for t in contenders))
        # under 2,048 vertices the probe was the whole search, timed over one sample: the decision
        # times it again over 3 (kernels of microseconds, where one sample is noise)
        if step < probe or step == 1:
            finals = measure(problem, params, target, [t.kind for t in contenders], step,
                             TRIAL_REPEAT if step == 1 else 1, seconds)
            decided = [t for t in finals if t.seconds is not None]
            if not decided:   # every final search refused (a whole search's grid is larger): the probes
                lost = {t.kind for t in finals}
                decided = [t for t in timed if t.kind not in lost]
        else:
            decided = contenders
    said = ", ".join(_said(t) for t in probes) + ("; then " + ", ".join(_said(t) for t in finals) if finals else "")
    if not decided:
        value = "list"
        reason = "no work decomposition could be measured in full: " + said
    else:
        value = min(decided, key=lambda t: t.seconds).kind
        how = ("" if finals and any(t.seconds is not None for t in finals) else
               "; decided on the probe" + ("" if finals else " (a larger sample would not fit the budget)"))
        reason = ("measured on this GPU (device time): a probe, " + said
                  + (f"; {' and '.join(out)} out (over {PRUNE:g}x the fastest probe)" if out else "") + how
                  + f" → {value} (choosing took {(time.perf_counter() - started) * 1e3:.0f} ms, compiling included)")
    if not any(t.transient for t in probes + finals):      # out of memory may pass: then choose again
        with _chosen_lock:
            _chosen[key] = (value, reason)
            while len(_chosen) > _CACHE_LIMIT:
                _chosen.popitem(last=False)
    return AutoChoice(value, reason)
