"""Which execution targets the Run dock offers, and which worker process serves each.

Qt-free. The GUI never imports ``numba.cuda``: the machine's GPU is found by the driver probe
of :mod:`kernels.measure.targets`, and kernels run in a worker process. A worker runs either on the
real GPU or on the CUDA simulator (the simulator must be chosen before ``numba.cuda`` is
imported, so one process cannot do both); CPU variants run in the simulator worker, which
never initialises a GPU context for them.
"""

from __future__ import annotations

from kernels.measure.targets import TARGETS, Target, default_gpu_target, forced_target, probe_gpu, target_label


def machine_targets() -> tuple[str, ...]:
    """Targets this machine can run: ``cuda`` only with a GPU; the simulator and CPU always."""
    forced = forced_target()
    if forced is not None and not forced.is_gpu:
        return (str(forced),)
    return tuple(str(t) for t in Target.devices() if not t.real_gpu or probe_gpu() is not None)


def targets_for(variant) -> list[str]:
    """The variant's targets that this machine has, best first."""
    here = machine_targets()
    return [t for t in TARGETS if t in variant.targets and t in here]     # best first: cuda, sim, cpu


def default_target_for(variant) -> str | None:
    """What ``graph-kernels run`` would choose for the variant, if this machine has it."""
    offered = targets_for(variant)
    if not offered:
        return None
    preferred = default_gpu_target() if variant.kind == "gpu" else variant.targets[0]
    return preferred if preferred in offered else offered[0]


def unavailable_reason(variant) -> str | None:
    """Why the variant cannot run here (``None`` when it can)."""
    reason = variant.available()
    if reason:
        return reason
    if not targets_for(variant):
        wanted = " or ".join(variant.targets)
        return f"it runs on {wanted}, which this machine does not have ({target_label('cpu')} here)" \
            if any(Target.parse(t).real_gpu for t in variant.targets) else f"it runs on {wanted} only"
    return None


def describe_target(target: Target | str) -> str:
    target = Target.of(target)
    if target.real_gpu:
        return f"{target} — {target_label(target)}"
    return f"{target} — CUDA simulator (slow, correct)" if target.simulated else f"{target} — numba on the host"
