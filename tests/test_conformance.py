"""Every registered variant runs on a tiny input of its family and verifies against the family's
reference: driven by the registry, so a new variant is covered without editing a list (GPU
variants on the CUDA simulator, the others where they run). Inputs are chosen per family
(``FAMILY_INPUTS``); a variant that cannot run here (CuPy or GraphBLAS missing) is skipped with
its reason."""

from __future__ import annotations

import pytest

from kernels.algorithms.registry import families
from kernels.graph.io import read_graph
from kernels.inputs import load_input
from kernels.run.runner import run_variant
from tests.conftest import data_path

# the tiny input of each family and the parameters the family needs to be given
FAMILY_INPUTS = {
    "spmv": ("lp_afiro.mtx", {}),
    "triangles": ("karate.mtx", {}),
    "apsp": ("gen:gnp:n=12,p=0.3,seed=1,weights=uniform", {}),   # Floyd-Warshall simulates n^3 threads
    "kclique": ("Stranke94.mtx", {"k": 4}),
    "bfs": ("karate.mtx", {}),
    "sssp": ("USAir97.mtx", {}),
}


def cases():
    for fam in families().values():
        for var in fam.variants.values():
            yield pytest.param(fam.name, var.name, id=f"{fam.name}/{var.name}")


@pytest.mark.slow
@pytest.mark.parametrize("family, variant", list(cases()))
def test_every_variant_verifies_against_its_reference(family, variant):
    fam = families()[family]
    var = fam.variants[variant]
    assert family in FAMILY_INPUTS, f"family {family} has no tiny input here: add one to FAMILY_INPUTS"
    reason = var.available()
    if reason:
        pytest.skip(f"{family}/{variant} cannot run here: {reason}")
    name, params = FAMILY_INPUTS[family]
    target = "sim" if var.kind == "gpu" else var.targets[0]
    if target not in var.targets:
        pytest.skip(f"{family}/{variant} runs on {var.targets}")
    graph = load_input(name) if name.startswith("gen:") else read_graph(data_path(name))
    record = run_variant(graph, family, variant, params, target=target, repeat=1, warmup=0).record
    assert record["verified"], record["verification"]
