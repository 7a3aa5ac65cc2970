"""How a sweep chooses its cells: the whole grid, a random sample, or a local search.

Spaces with several parameters have thousands of cells; measuring all of them is the default
(``grid``) but not the only way. Each strategy asks an ``evaluate(combos, limit=None)`` for the
cells it wants and gets them back (cells already in a resumed file come back without running);
``evaluate`` runs at most ``limit`` new valid cells, refuses to run more once the budget (cells
or seconds) is spent, and reports that through ``exhausted()``. Cells that break a constraint
are recorded as invalid and cost nothing.

- ``grid``: every combination, in grid order.
- ``random``: combinations in a random order (``seed``) until the budget is spent.
- ``local``: a random sample (a fifth of the cell budget, at least ``LOCAL_STARTS``), then from
  each of its ``LOCAL_STARTS`` best cells a descent that measures the cell's neighbours (one
  parameter moved one step to the next or previous value of its grid list) and moves to the
  fastest of them while it improves; it stops at a cell no neighbour improves, or when the
  budget is spent.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable

from kernels.errors import ParameterError
from kernels.results.records import Strategy

STRATEGIES = ("grid", "random", "local")
LOCAL_STARTS = 3


def check_strategy(strategy: Strategy) -> Strategy:
    """Refuse an unknown strategy or a budget that is not a positive number, in one line."""
    if strategy.name not in STRATEGIES:
        raise ParameterError("strategy", strategy.name, ", ".join(STRATEGIES))
    cells = strategy.budget_cells
    if cells is not None and (isinstance(cells, bool) or not isinstance(cells, int) or cells < 1):
        raise ParameterError("budget_cells", cells, "an integer >= 1")
    seconds = strategy.budget_seconds
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not seconds > 0 or seconds == float("inf")):
        raise ParameterError("budget_seconds", seconds, "a finite number of seconds > 0")
    if isinstance(strategy.seed, bool) or not isinstance(strategy.seed, int):
        raise ParameterError("seed", strategy.seed, "an integer")
    return strategy


def value_key(value):
    # True == 1 in Python: a boolean value must not match a numeric one
    return (type(value) is bool, value)


def unique_values(grid: dict[str, list]) -> dict[str, list]:
    """The grid with each parameter's repeated values dropped (the first kept): a combination
    is one cell of the table, measured once."""
    out = {}
    for name, values in grid.items():
        seen, kept = set(), []
        for v in values:
            if value_key(v) not in seen:
                seen.add(value_key(v))
                kept.append(v)
        out[name] = kept
    return out


class SearchSpace:
    """The combinations of a grid (``{name: [values]}``) and their one-step neighbours."""

    def __init__(self, grid: dict[str, list]):
        self.grid = grid
        self.names = list(grid)
        self._index = {n: {value_key(v): i for i, v in enumerate(vals)} for n, vals in grid.items()}

    def __len__(self) -> int:
        n = 1
        for values in self.grid.values():
            n *= len(values)
        return n

    def combos(self) -> Iterable[dict]:
        for combo in itertools.product(*(self.grid[n] for n in self.names)):
            yield dict(zip(self.names, combo, strict=True))

    def key(self, combo: dict) -> tuple:
        return tuple(value_key(combo[n]) for n in self.names)

    def neighbours(self, combo: dict) -> list[dict]:
        out = []
        for name in self.names:
            i = self._index[name][value_key(combo[name])]
            for j in (i - 1, i + 1):
                if 0 <= j < len(self.grid[name]):
                    out.append({**combo, name: self.grid[name][j]})
        return out


Evaluate = Callable[..., list[dict]]


def _speed(cell: dict) -> float | None:
    m = cell.get("median_s")
    return m if cell.get("status") == "ok" and isinstance(m, (int, float)) else None


def search(strategy: Strategy, space: SearchSpace, evaluate: Evaluate, exhausted: Callable[[], bool]) -> None:
    """Drive ``evaluate`` as ``strategy`` says (see the module's docstring)."""
    if strategy.name == "grid":
        evaluate(list(space.combos()))
        return
    order = list(space.combos())
    random.Random(strategy.seed).shuffle(order)
    if strategy.name == "random":
        evaluate(order)
        return
    budget = strategy.budget_cells or max(LOCAL_STARTS, len(space) // 4)
    sample = evaluate(order, limit=max(LOCAL_STARTS, budget // 5))
    starts = sorted((c for c in sample if _speed(c) is not None), key=_speed)[:LOCAL_STARTS]
    for start in starts:
        current = start
        while not exhausted():
            better = [c for c in evaluate(space.neighbours(current["params"]))
                      if _speed(c) is not None and _speed(c) < _speed(current)]
            if not better:
                break
            current = min(better, key=_speed)
