"""Algorithm families (SpMV, triangles, APSP, k-cliques, BFS/SSSP) and their registry."""

from kernels.algorithms.registry import families, get_family, get_variant

__all__ = ["families", "get_family", "get_variant"]
