"""The APSP family's own error: a negative cycle (importable without numba)."""

from __future__ import annotations

from kernels.errors import InputRequirementError

MAX_LISTED = 8


class NegativeCycleError(InputRequirementError):
    """The graph has a cycle of negative total weight: shortest paths are undefined."""

    def __init__(self, graph_name: str, cycle: list[int], weight: float | None, *, undirected: bool = False,
                 witness: int | None = None):
        self.cycle = list(cycle)
        self.weight = weight
        self.vertex = cycle[0] if cycle else witness
        if cycle:
            shown = cycle if len(cycle) <= MAX_LISTED else cycle[:MAX_LISTED - 1]
            path = " -> ".join(str(v) for v in shown)
            path += f" -> {cycle[0]}" if len(cycle) <= MAX_LISTED else f" -> ... ({len(cycle)} vertices) -> {cycle[0]}"
            text = f"'{graph_name}' has a negative cycle {path} (total weight {weight:.6g})"
            if undirected and len(cycle) == 2:
                text += "; an undirected edge of negative weight is a negative cycle by itself"
        else:
            text = f"'{graph_name}' has a negative cycle through vertex {witness}"
        super().__init__(text + ": shortest paths are undefined")
