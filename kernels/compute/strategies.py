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
- ``bayes``: a model-based search (Optuna's TPE sampler, multivariate, with the "constant liar"
  for proposals still being measured) that proposes cells in **batches as large as the GPUs the
  backend has**, so that every GPU of a cluster measures at once (Kernel Tuner's Bayesian
  strategy proposes one cell at a time). It never sends an invalid cell (a broken constraint is
  told to the model as a failure, unmeasured) nor one already measured (its time is told
  again); it stops when the budget is spent or every valid cell has been measured. The budget
  defaults to a third of the grid.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable

from kernels.errors import ParameterError
from kernels.results.records import Strategy

STRATEGIES = ("grid", "random", "local", "bayes")
LOCAL_STARTS = 3
BAYES_STARTUP = 8             # random proposals before the model is used (at least one batch)


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


def search(strategy: Strategy, space: SearchSpace, evaluate: Evaluate, exhausted: Callable[[], bool], *,
           valid: Callable[[dict], bool] | None = None, batch: int = 1) -> None:
    """Drive ``evaluate`` as ``strategy`` says (see the module's docstring). ``valid(combo)`` says
    whether a combination keeps the constraints (``bayes`` proposes only those); ``batch`` is how
    many cells the backend measures at once."""
    if strategy.name == "bayes":
        _bayes(strategy, space, evaluate, exhausted, valid or (lambda combo: True), max(1, batch))
        return
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


def _bayes(strategy: Strategy, space: SearchSpace, evaluate: Evaluate, exhausted: Callable[[], bool],
           valid: Callable[[dict], bool], batch: int) -> None:
    try:
        import optuna
    except ImportError:
        raise ParameterError("strategy", "bayes", "grid, random or local here: bayes needs Optuna "
                             '(pip install "gpu-graph-explorer[search]")') from None
    from optuna.distributions import CategoricalDistribution
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = space.names
    # Optuna's categories must be plain values; the grid's own values are looked up by index
    distributions = {n: CategoricalDistribution(list(range(len(space.grid[n])))) for n in names}
    sampler = optuna.samplers.TPESampler(seed=strategy.seed, multivariate=True, constant_liar=True,
                                         n_startup_trials=max(batch, BAYES_STARTUP))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    valid_total = sum(1 for combo in space.combos() if valid(combo))
    measured: dict[tuple, float | None] = {}

    def tell(trial, seconds) -> None:
        if seconds is None:
            study.tell(trial, state=TrialState.FAIL)
        else:
            study.tell(trial, seconds)

    while not exhausted() and len(measured) < valid_total:
        proposals, trials, asked = {}, [], 0
        while len(proposals) < batch and asked < 50 * batch and len(measured) + len(proposals) < valid_total:
            asked += 1
            trial = study.ask(distributions)
            combo = {n: space.grid[n][trial.params[n]] for n in names}
            key = space.key(combo)
            if not valid(combo):
                tell(trial, None)                      # a broken constraint: the model learns it, no GPU runs it
            elif key in measured:
                tell(trial, measured[key])             # already measured: its time again
            elif key in proposals:
                tell(trial, None)                      # proposed twice in one batch: once is enough
            else:
                proposals[key] = combo
                trials.append((key, trial))
        if not proposals:
            break
        cells = {space.key(c["params"]): c for c in evaluate(list(proposals.values()), limit=len(proposals))}
        for key, trial in trials:
            cell = cells.get(key)
            if cell is None:                           # not run (budget or cancel): leave it to the model
                tell(trial, None)
                continue
            seconds = _speed(cell)
            measured[key] = seconds
            tell(trial, seconds)
