"""Graph model, readers and writers, generators, clean-up, statistics, slotted pages."""

from kernels.graph.csr import CSRGraph

__all__ = ["CSRGraph"]
