"""Run one variant on one input: validate, prepare, time every stage, verify, record.

This is what ``graph-kernels run``, the worker process and the sweeps call. Parameters and
inputs are checked before anything runs; a failed verification is reported with the worst
differences, never hidden; kernel faults and out-of-memory become project errors.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from kernels.algorithms.registry import Family, Variant, Verification, get_variant
from kernels.errors import GraphKernelsError, ParameterError, ResourceLimitError, TargetUnavailableError
from kernels.measure.environment import environment
from kernels.measure.targets import activate, default_gpu_target
from kernels.measure.timing import (
    Timing,
    time_kernel_cpu,
    time_kernel_cuda,
    time_kernel_simulator,
    time_stage,
)
from kernels.results.records import RunRecord


class KernelFailure(GraphKernelsError):
    """The kernel (or the library it calls) failed while running."""


@dataclass
class RunResult:
    record: dict
    output: Any


_reference_cache: dict = {}
_REFERENCE_CACHE_LIMIT = 8


def choose_target(variant: Variant, requested: str | None) -> str:
    if requested is None:
        if variant.kind == "gpu":
            requested = default_gpu_target()
        else:
            requested = variant.targets[0]
    if requested not in variant.targets:
        raise TargetUnavailableError(
            f"variant '{variant.family}/{variant.name}' ({variant.kind}) runs on "
            f"{' or '.join(variant.targets)}, not on '{requested}'")
    reason = variant.available()
    if reason:
        raise TargetUnavailableError(f"variant '{variant.family}/{variant.name}' is unavailable: {reason}")
    if requested in ("cuda", "sim"):
        activate(requested)
    return requested


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


def run_variant(graph, family: str, variant: str, params: dict | None = None, *,
                target: str | None = None, repeat: int = 5, warmup: int = 1, seed: int = 0,
                verify: bool = True) -> RunResult:
    """Run ``family/variant`` on ``graph`` and return its record and output."""
    fam, var = get_variant(family, variant)
    resolved = fam.resolve_params(var, params)
    check_repetitions(repeat, warmup)
    target = choose_target(var, target)
    problem = fam.prepare(graph, resolved, seed)
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    try:
        execution = var.make(problem, resolved, target)
        sync = execution.synchronize
        compile_s = time_stage(execution.compile, sync)
        h2d_s = time_stage(execution.upload, sync)
        reset = execution.reset if execution.needs_reset else None
        launch_bound = False
        if target == "cuda":
            kernel, launch_bound = time_kernel_cuda(execution.launch, repeat, warmup, reset)
            method = "cuda events"
        elif target == "sim":
            kernel = time_kernel_simulator(execution.launch, sync, repeat, warmup, reset)
            method = "perf_counter (CUDA simulator: not GPU time)"
        else:
            kernel = time_kernel_cpu(execution.launch, repeat, warmup, reset)
            method = "perf_counter"
        box = {}
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
    if target == "cuda" and l2 and execution.device_bytes:
        fits_in_l2 = execution.device_bytes <= l2

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

    median = kernel.median_s
    metrics = [{"name": m.name, "unit": m.unit,
                "value": m.compute(problem, median) if median > 0 else None} for m in fam.metrics]
    timing = Timing(compile_s=compile_s, h2d_s=h2d_s, kernel=kernel, d2h_s=d2h_s, method=method,
                    launch_bound=launch_bound, fits_in_l2=fits_in_l2, repeat=repeat, warmup=warmup)
    record = RunRecord(
        timestamp=started, family=fam.name, variant=var.name, kind=var.kind, target=target, params=resolved,
        seed=seed,
        input={"name": graph.name, "fingerprint": graph.fingerprint, "source": graph.source,
               "rows": graph.n_rows, "cols": graph.n_cols, "nnz": graph.nnz,
               "edges": graph.num_edges, "directed": graph.directed, **problem.size},
        notices=list(problem.notices), result=fam.summarize(output, problem), verified=bool(verification.ok),
        verification=verification.to_json(), timing=timing.to_json(), metrics=metrics, environment=env,
    ).to_json()
    return RunResult(record=record, output=output)
