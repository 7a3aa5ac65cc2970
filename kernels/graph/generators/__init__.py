"""Seeded generators of graphs and sparse matrices (benchmark inputs for the kernels).

Every generator is deterministic for a seed (``numpy.random.default_rng(seed)``), returns a
:class:`~kernels.graph.csr.CSRGraph` named after its parameters (``rmat_s20_ef16``) with
``source = "generated: <kind> <params> seed=<s>"``, and is registered in
:data:`GENERATORS` with the option metadata the command line and the GUI build forms from.
Graph generators take ``weights=None | "uniform" | "integer"`` and ``weight_range=(lo, hi)``.
See ``docs/generators.md``.
"""

# Importing the modules registers their generators.
from kernels.graph.generators.erdos_renyi import gnm, gnp
from kernels.graph.generators.geometric import delaunay, geometric
from kernels.graph.generators.powerlaw import chung_lu, powerlaw_matrix
from kernels.graph.generators.registry import (
    GENERATORS,
    GeneratorSpec,
    OptionSpec,
    generate,
    generator_spec,
)
from kernels.graph.generators.rmat import rmat
from kernels.graph.generators.structured import complete, grid2d, grid3d, stencil

__all__ = [
    "GENERATORS", "GeneratorSpec", "OptionSpec", "generate", "generator_spec",
    "chung_lu", "complete", "delaunay", "geometric", "gnm", "gnp", "grid2d", "grid3d",
    "powerlaw_matrix", "rmat", "stencil",
]
