"""Run one variant on one input: validate, prepare, time every stage, verify, record.

This is what ``graph-kernels run``, the worker process and the sweeps call. Parameters and
inputs are checked before anything runs; a failed verification is reported with the worst
differences, never hidden; kernel faults and out-of-memory become project errors.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import logging
import re
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernels.algorithms.auto_rules import device_trials_off
from kernels.algorithms.execution import Execution
from kernels.algorithms.registry import Family, Variant, Verification, check_vertex_params, get_variant
from kernels.errors import (
    DEVICE_ERROR_NAMES,
    GraphKernelsError,
    ParameterError,
    ResourceLimitError,
    TargetUnavailableError,
)
from kernels.measure.cuda_graphs import check_launch_mode, plan_launches
from kernels.measure.environment import environment
from kernels.measure.nvtx_ranges import stage_ranges
from kernels.measure.targets import Target, activate, default_gpu_target
from kernels.measure.timing import (
    Timing,
    time_kernel_cpu,
    time_kernel_cuda,
    time_kernel_simulator,
    time_stage,
)
from kernels.results.records import RunRecord

logger = logging.getLogger(__name__)

# the steps a run reports to ``progress``: compile, upload, each launch, download, verify
FIXED_STEPS = 4


class KernelFailure(GraphKernelsError):
    """The kernel (or the library it calls) failed while running."""


@dataclass
class RunResult:
    record: dict
    output: Any


_reference_cache: dict = {}
_REFERENCE_CACHE_LIMIT = 8


def choose_target(variant: Variant, requested: Target | str | None) -> str:
    """The target ``variant`` runs on (``requested``, else its default), this process prepared
    for it; returned as its text, which the variant's ``make`` and the record take."""
    if requested is None:
        requested = default_gpu_target() if variant.kind == "gpu" else variant.targets[0]
    chosen = Target.of(requested)
    if str(chosen) not in variant.targets:
        raise TargetUnavailableError(
            f"variant '{variant.family}/{variant.name}' ({variant.kind}) runs on "
            f"{' or '.join(variant.targets)}, not on '{chosen}'")
    reason = variant.available()
    if reason:
        raise TargetUnavailableError(f"variant '{variant.family}/{variant.name}' is unavailable: {reason}")
    if chosen.is_gpu:
        activate(chosen)
    return str(chosen)


def check_repetitions(repeat, warmup) -> None:
    """``repeat`` >= 1 timed runs after ``warmup`` >= 0 untimed ones (bools are not counts)."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ParameterError("repeat", repeat, "an integer >= 1")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ParameterError("warmup", warmup, "an integer >= 0")


def reference_output(family: Family, problem, params: dict, graph, seed: int):
    key = (family.name, graph.fingerprint, family.reference_key(params), seed)
    if key not in _reference_cache:
        if len(_reference_cache) >= _REFERENCE_CACHE_LIMIT:
            _reference_cache.pop(next(iter(_reference_cache)))
        _reference_cache[key] = family.reference(problem, params)
    return _reference_cache[key]


def _translate(exc: BaseException) -> GraphKernelsError:
    text = str(exc)
    if isinstance(exc, MemoryError) or "OUT_OF_MEMORY" in text or "out of memory" in text.lower():
        return ResourceLimitError(f"out of memory while running the kernel: {text or 'MemoryError'}")
    return KernelFailure(f"the kernel failed: {type(exc).__name__}: {text}")


@contextlib.contextmanager
def performance_warnings_as_notices(notices: list):
    """Turn numba's ``NumbaPerformanceWarning``s raised inside into notices (once per message);
    every other warning is passed on as it came."""
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:        # outside the catching context: what is passed on is not caught again
        for w in caught:
            if type(w.message).__name__ == "NumbaPerformanceWarning":
                plain = re.sub(r"\x1b\[[0-9;]*m", "", str(w.message))       # numba highlights its messages
                text = f"numba: {' '.join(plain.split())}"
                if text not in notices:
                    notices.append(text)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


_said_without_energy: set = set()


def _energy_of(launch, reset, notices: list) -> dict | None:
    """``--energy``: NVML's counter around repeated timed launches (:mod:`kernels.measure.energy`);
    why there are no figures goes to the notices, once per process."""
    from numba import cuda

    from kernels.measure.energy import measure_energy

    def again() -> None:
        if reset is not None:
            reset()
        launch()

    figures, why = measure_energy(again, cuda.synchronize, getattr(cuda.get_current_device(), "uuid", None))
    if why and why not in _said_without_energy:
        _said_without_energy.add(why)
        notices.append(why)
    return figures


def _roofline_of(fam: Family, var: Variant, problem, params: dict, record: dict) -> dict | None:
    """The run's work model (bytes, operations: :mod:`kernels.roofline`) and, on a real GPU whose
    peaks were measured before (``graph-kernels device-peaks``), those peaks: never measured here,
    a probe would load the GPU between two timed runs. A model that fails is a notice, not a
    failed run."""
    from kernels.roofline import work_of
    from kernels.roofline.peaks import stored_peaks

    try:
        work = work_of(fam.name, var.name, problem, params, record.get("result") or {})
    except Exception as exc:  # noqa: BLE001 - the run's own figures stand without it
        record["notices"].append(f"roofline model failed ({type(exc).__name__}: {exc})")
        return None
    if work is None:
        return None
    out = work.to_json()
    if Target.read(record.get("target")) == Target.CUDA:
        peaks = stored_peaks(record["environment"]["device"])
        if peaks is not None:
            out["peaks"] = peaks
    return out


def compile_variant(graph, family: str, variant: str, params: dict | None = None, *, target: str = "cuda",
                    seed: int = 0) -> dict:
    """Run a cell up to its compile stage and stop: every kernel it needs is compiled into the
    disk cache (:mod:`kernels.cuda.kernel_cache`), nothing is uploaded or timed. This is what a
    compile-ahead process does for a cell the measuring process will run later
    (:mod:`kernels.compute.precompile`); the returned cache figures say what it compiled."""
    from kernels.cuda import kernel_cache

    fam, var = get_variant(family, variant)
    resolved = fam.resolve_params(var, params)
    target = choose_target(var, target)
    before = kernel_cache.STATS.copy()
    started = _dt.datetime.now(_dt.timezone.utc)
    if var.kind != "gpu" or not Target.parse(target).real_gpu:
        return {"skipped": f"{var.kind} variant on {target}: nothing to compile ahead"}
    problem = fam.prepare(graph, resolved, seed)
    resolved = resolved_ahead(fam, var, problem, resolved, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # a compile-ahead process's warnings reach nobody
        try:
            execution = var.make(problem, resolved, target)
            execution.compile()
            execution.release()
        except GraphKernelsError:
            raise
        except Exception as exc:  # the measuring process meets the same error, and reports it there
            raise _translate(exc) from exc
    out = kernel_cache.STATS.copy().since(before).to_json()
    out["wall_s"] = (_dt.datetime.now(_dt.timezone.utc) - started).total_seconds()
    return out


def resolved_ahead(fam: Family, var: Variant, problem, params: dict, target: str) -> dict:
    """``params`` with every ``auto`` resolved as a compile-ahead process must: without launching
    anything on the device (no measured trial beside the measuring process; a rule instead)."""
    with device_trials_off():
        resolved, _ = fam.resolve_auto(var, problem, params, target)
    return resolved


def run_variant(graph, family: str, variant: str, params: dict | None = None, *,
                target: str | None = None, repeat: int = 5, warmup: int = 1, seed: int = 0,
                verify: bool = True, live=None, launch: str = "auto", energy: bool = False,
                progress: Callable[[str, int, int], None] | None = None) -> RunResult:
    """Run ``family/variant`` on ``graph`` and return its record and output.

    ``live`` (a :class:`~kernels.operators.live_pages.LivePages` whose structure ``graph`` is the
    CSR snapshot of): a variant declaring ``live_pages`` runs on its device mirror, synced
    before the run; the record's ``structure`` field says so, with the sync's cost. Other
    variants run on ``graph`` and their record says ``"structure": {"live": false}``.

    ``progress(stage, done, total)`` is told when each stage starts (``compile``, ``upload``,
    ``kernel``, ``download``, ``verify``) and after each launch, with the steps done so far out of
    ``warmup + repeat + 4``; it is called outside the timed regions. The problem's notices are
    logged (INFO) as well as kept in the record. On a real GPU, with the optional ``nvtx``
    package, each stage is an NVTX range named ``family/variant stage`` for Nsight Systems.

    ``launch`` (``auto``, ``graph``, ``direct``): on a real GPU, whether the timed launches are
    replays of a CUDA graph captured from the variant's launch (see
    :mod:`kernels.measure.cuda_graphs`); the record's ``timing.launch`` says which ran, and a
    notice says why a graph was not used when one was asked for."""
    fam, var = get_variant(family, variant)
    resolved = fam.resolve_params(var, params)
    check_repetitions(repeat, warmup)
    check_launch_mode(launch)
    target = choose_target(var, target)
    on = Target.parse(target)
    check_vertex_params(fam, resolved, graph, live.graph if live is not None else None)
    run_started = time.perf_counter()
    energy_figures = None
    problem = fam.prepare(graph, resolved, seed)
    stages = {"prepare_s": time.perf_counter() - run_started}
    if live is not None and var.live_pages:
        problem.live = live
    # "auto" values become concrete here, from the prepared input: the record keeps both
    asked = resolved
    from kernels.cuda import kernel_cache

    # before "auto": a measured trial's compiles count in the record's cache figures
    cache_before = kernel_cache.STATS.copy()
    resolving = time.perf_counter()
    with performance_warnings_as_notices(problem.notices):
        try:
            resolved, auto_notices = fam.resolve_auto(var, problem, asked, target)
        except Exception as exc:
            # a measured trial's kernel failed on the device: the run's failure, in words; a rule's
            # own bug (any other exception) surfaces as the bug it is
            if type(exc).__name__ not in DEVICE_ERROR_NAMES:
                raise
            raise _translate(exc) from exc
    stages["auto_s"] = time.perf_counter() - resolving   # a rule's features, or a measured trial (kclique)
    problem.notices.extend(auto_notices)
    for notice in problem.notices:
        logger.info("%s/%s on %s: %s", fam.name, var.name, graph.name, notice)
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    total_steps = FIXED_STEPS + warmup + repeat
    steps = {"done": 0}

    def report(stage: str, advance: int = 0) -> None:
        steps["done"] += advance
        if progress is not None:
            progress(stage, steps["done"], total_steps)

    stage_range = stage_ranges(f"{fam.name}/{var.name}", target)
    # numba's performance warnings (a grid of one block...) are facts about this run: they go to the
    # record's notices, not to stderr once per cell (a cluster's log)
    with performance_warnings_as_notices(problem.notices):
        try:
            execution = var.make(problem, resolved, target)
            sync = execution.synchronize
            report("compile")
            with stage_range("compile"):
                compile_s = time_stage(execution.compile, sync)
            report("upload", 1)
            with stage_range("upload"):
                h2d_s = time_stage(execution.upload, sync)
            if type(execution).preprocess is not Execution.preprocess:  # only executions that have one
                with stage_range("preprocess"):
                    execution.preprocess()  # times itself (its figures go to the result statistics)
            report("kernel", 1)
            reset = execution.reset if execution.needs_reset else None
            launch_bound = False
            launch_mode = "direct"

            def tick() -> None:
                report("kernel", 1)

            with stage_range("kernel"):
                if on.real_gpu:
                    planned = time.perf_counter()
                    plan = plan_launches(execution, target, launch)
                    stages["capture_s"] = time.perf_counter() - planned
                    launch_mode = plan.mode
                    if plan.notice:
                        problem.notices.append(plan.notice)
                        logger.info("%s/%s on %s: %s", fam.name, var.name, graph.name, plan.notice)
                    try:
                        kernel, launch_bound = time_kernel_cuda(plan.launch, repeat, warmup, reset, tick,
                                                                stream=plan.stream, queued=plan.mode == "queued")
                        if energy:
                            energy_figures = _energy_of(plan.launch, reset, problem.notices)
                    except BaseException:
                        with contextlib.suppress(Exception):  # the timing's own error is the one to report
                            plan.close()
                        raise
                    plan.close()
                    method = ("cuda events (launches queued behind a busy kernel: device time, host overhead hidden)"
                              if launch_mode == "queued" else "cuda events")
                elif on.simulated:
                    kernel = time_kernel_simulator(execution.launch, sync, repeat, warmup, reset, tick)
                    method = "perf_counter (CUDA simulator: not GPU time)"
                else:
                    kernel = time_kernel_cpu(execution.launch, repeat, warmup, reset, tick)
                    method = "perf_counter"
            report("download")
            box = {}
            with stage_range("download"):
                d2h_s = time_stage(lambda: box.setdefault("out", execution.download()), sync)
            output = box["out"]
            execution.release()
        except GraphKernelsError:
            raise
        except Exception as exc:  # a kernel fault, a CUDA error, a numba typing error...
            raise _translate(exc) from exc

    fits_in_l2 = None
    env = environment(target)
    l2 = env["device"].get("l2_cache_bytes")
    if on.real_gpu and l2 and execution.device_bytes:
        fits_in_l2 = execution.device_bytes <= l2

    report("verify", 1)
    verify_started = time.perf_counter()
    if not verify:
        verification = Verification(ok=True, reference="none", detail="verification skipped")
    elif var.name == fam.reference_name:
        verification = Verification(ok=True, reference=fam.reference_name,
                                    detail="this variant is the reference")
    else:
        try:
            ref = reference_output(fam, problem, resolved, graph, seed)
            verification = fam.verify(output, ref, problem, resolved)
        except GraphKernelsError:
            raise
        except Exception as exc:  # the oracle itself failed: say so, do not pretend it verified
            raise KernelFailure(f"the reference ({fam.reference_name}) failed: {type(exc).__name__}: {exc}") from exc

    stages["verify_s"] = time.perf_counter() - verify_started
    median = kernel.median_s
    metrics = [{"name": m.name, "unit": m.unit,
                "value": m.compute(problem, median) if median > 0 else None} for m in fam.metrics]
    cache = kernel_cache.STATS.copy().since(cache_before).to_json() if on.real_gpu else None
    stages["total_s"] = time.perf_counter() - run_started
    timing = Timing(compile_s=compile_s, h2d_s=h2d_s, kernel=kernel, d2h_s=d2h_s, method=method,
                    launch_bound=launch_bound, fits_in_l2=fits_in_l2, repeat=repeat, warmup=warmup,
                    launch=launch_mode, cache=cache,
                    stages={k: round(v, 6) for k, v in stages.items()})
    record = RunRecord(
        timestamp=started, family=fam.name, variant=var.name, kind=var.kind, target=target, params=asked,
        resolved_params=resolved if auto_notices else None, seed=seed,
        input={"name": graph.name, "fingerprint": graph.fingerprint, "source": graph.source,
               "rows": graph.n_rows, "cols": graph.n_cols, "nnz": graph.nnz,
               "edges": graph.num_edges, "directed": graph.directed, **problem.size},
        notices=list(problem.notices), result=fam.summarize(output, problem), verified=bool(verification.ok),
        verification=verification.to_json(), timing=timing.to_json(), metrics=metrics, environment=env,
    ).to_json()
    if var.is_gpu and on.is_gpu:
        roofline = _roofline_of(fam, var, problem, resolved, record)
        if roofline is not None:
            record["roofline"] = roofline
    if energy_figures is not None:
        from kernels.measure.energy import per_joule, per_watt

        record["energy"] = energy_figures
        record["metrics"] = [*record["metrics"], *per_watt(record["metrics"], energy_figures),
                             *per_joule(record["result"], energy_figures)]
    if live is not None:
        record["structure"] = (live.record_json() if problem.live is not None else
                               {"live": False, "reason": f"{var.name} runs on the CSR snapshot of the pages"})
    report("done", 1)
    return RunResult(record=record, output=output)
