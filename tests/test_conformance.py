"""Every registered variant runs on one tiny generated graph and verifies against its family's
reference: driven by the registry, so a new variant is covered without editing a list.

GPU variants run on the CUDA simulator with the small parameters their launch shape declares
(``Variant.launch.sim_params``), and the launch their shape declares for the simulator (its block,
its grid on this graph) must be one the run made; CPU and library variants run on the CPU with
their defaults. A variant that cannot run here says why (CuPy or GraphBLAS missing, a vendor
library that needs a real GPU) in a skip reason: nothing is left out silently.

The graph: G(n=14, p=0.45), undirected, connected, uniform weights in [1, 2): 88 stored entries,
37 triangles, 7 4-cliques (k-clique's default k), so every family has work to check."""

from __future__ import annotations

import math

import pytest

from kernels.algorithms.registry import families
from kernels.inputs import load_input
from kernels.measure.targets import simulator_enabled
from kernels.run.runner import run_variant

TINY = "gen:gnp:n=14,p=0.45,seed=2,weights=uniform"


@pytest.fixture(scope="module")
def tiny():
    return load_input(TINY)


def cases():
    for fam in families().values():
        for var in fam.variants.values():
            yield pytest.param(fam.name, var.name, id=f"{fam.name}/{var.name}")


def _threads(dims) -> int:
    return math.prod(dims) if isinstance(dims, tuple) else int(dims)


def _record_launches(monkeypatch) -> list[tuple[int, int]]:
    """(blocks, threads per block) of every kernel launch the simulator is asked for."""
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    seen = []
    configure = FakeCUDAKernel.__getitem__

    def recording(kernel, configuration):
        seen.append((_threads(configuration[0]), _threads(configuration[1])))
        return configure(kernel, configuration)

    monkeypatch.setattr(FakeCUDAKernel, "__getitem__", recording)
    return seen


@pytest.mark.parametrize("family, variant", list(cases()))
def test_every_variant_verifies_against_its_reference(family, variant, tiny, monkeypatch):
    fam = families()[family]
    var = fam.variants[variant]
    reason = var.available()
    if reason:
        pytest.skip(f"{family}/{variant} cannot run here: {reason}")
    launches = None
    if var.kind == "gpu":
        assert var.launch is not None, f"{family}/{variant} declares no launch shape (Variant(launch=LaunchShape(...)))"
        if not simulator_enabled():
            pytest.skip("GPU variants run here on the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)")
        target, params = "sim", dict(var.launch.sim_params)
        launches = _record_launches(monkeypatch)
    elif "cpu" in var.targets:
        target, params = "cpu", {}
    else:
        pytest.skip(f"{family}/{variant} runs only on {', '.join(var.targets)} (a vendor library on a real GPU)")
    record = run_variant(tiny, family, variant, params, target=target, repeat=1, warmup=0).record
    assert record["verified"], record["verification"]
    if launches is not None:
        resolved = record.get("resolved_params") or record["params"]     # with the run's "auto" choices
        declared = (var.launch.grid(tiny, resolved, True), var.launch.block(resolved, True))
        assert declared in launches, (f"{family}/{variant}: its launch shape says {declared[0]} blocks of "
                                      f"{declared[1]} threads on the simulator; the run launched "
                                      f"{sorted(set(launches))} (blocks, threads per block)")
