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
import math
import random
from collections.abc import Callable, Iterable

from kernels.errors import ParameterError
from kernels.results.records import Strategy

STRATEGIES = ("grid", "random", "local", "bayes")
LOCAL_STARTS = 3
BAYES_STARTUP = 8             # random proposals before the model is used (at least one batch)
BAYES_MODEL_SHARE = 0.6       # of the cell budget for the model's proposals; the rest polishes the best
BAYES_STALL = 16              # without a cell budget: cells measured with no better one before polishing


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

    def neighbours(self, combo: dict, *, diagonal: bool = False) -> list[dict]:
        """The cells one parameter moved one step to the next or previous value of its list;
        with ``diagonal`` also two parameters moved one step each."""
        steps = []
        for name in self.names:
            i = self._index[name][value_key(combo[name])]
            steps.append([(name, self.grid[name][j]) for j in (i - 1, i + 1) if 0 <= j < len(self.grid[name])])
        out = [{**combo, name: value} for moves in steps for name, value in moves]
        if diagonal:
            for a, b in itertools.combinations(range(len(self.names)), 2):
                out += [{**combo, na: va, nb: vb} for na, va in steps[a] for nb, vb in steps[b]]
        return out

    def distance(self, a: dict, b: dict) -> int:
        """How many parameters differ."""
        return sum(value_key(a[n]) != value_key(b[n]) for n in self.names)


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


def _ordered(values: list) -> bool:
    """Numbers (not booleans) in increasing order: their grid index is an ordinal scale."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    return numbers and len(values) > 2 and all(a < b for a, b in itertools.pairwise(values))


def _bayes(strategy: Strategy, space: SearchSpace, evaluate: Evaluate, exhausted: Callable[[], bool],
           valid: Callable[[dict], bool], batch: int) -> None:
    try:
        import optuna
    except ImportError:
        raise ParameterError("strategy", "bayes", "grid, random or local here: bayes needs Optuna "
                             '(pip install "gpu-graph-explorer[search]")') from None
    from optuna.distributions import CategoricalDistribution, IntDistribution
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = space.names
    # The grid's own values are looked up by index. A parameter of increasing numbers (block
    # sizes, tiles: mostly powers of two) is an integer over its index, so the model knows that
    # 128 lies between 64 and 256; others (reduce, dtype) are categories.
    distributions = {n: IntDistribution(0, len(space.grid[n]) - 1) if _ordered(space.grid[n])
                     else CategoricalDistribution(list(range(len(space.grid[n])))) for n in names}
    sampler = optuna.samplers.TPESampler(seed=strategy.seed, multivariate=True, constant_liar=True,
                                         n_startup_trials=max(batch, BAYES_STARTUP))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    valid_total = sum(1 for combo in space.combos() if valid(combo))
    measured: dict[tuple, float | None] = {}
    combos: dict[tuple, dict] = {}

    def tell(trial, seconds) -> None:
        if seconds is None:
            study.tell(trial, state=TrialState.FAIL)
        else:
            study.tell(trial, math.log(seconds))   # times span decades: the model fits their logarithm

    def run(batch_combos: list[dict]) -> dict:
        cells = {space.key(c["params"]): c for c in evaluate(batch_combos, limit=len(batch_combos))}
        for key, cell in cells.items():
            if cell.get("status") != "invalid":
                measured[key] = _speed(cell)
                combos[key] = cell["params"]
        return cells

    # The model's part of the budget; the rest polishes the best cell found (below). Without a
    # cell budget the polish starts when the model stops finding better cells.
    startup = max(batch, BAYES_STARTUP)
    if strategy.budget_cells is not None:
        model_share = max(startup, int(BAYES_MODEL_SHARE * min(strategy.budget_cells, valid_total)))
    else:
        model_share = valid_total
    stall = max(3 * batch, BAYES_STALL)
    best_at = 0                                    # cells measured when the best so far was found

    while not exhausted() and len(measured) < min(valid_total, model_share):
        if len(measured) >= startup and len(measured) - best_at >= stall:
            break                                  # the model has stopped improving: polish now
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
        before = _fastest_time(measured)
        cells = run(list(proposals.values()))
        if _fastest_time(measured) < before:
            best_at = len(measured)
        for key, trial in trials:
            cell = cells.get(key)
            if cell is None:                           # not run (budget or cancel): leave it to the model
                tell(trial, None)
                continue
            tell(trial, measured.get(key))
    _polish(space, run, exhausted, valid, measured, combos, batch)


def _polish(space: SearchSpace, run: Callable[[list[dict]], dict], exhausted: Callable[[], bool],
            valid: Callable[[dict], bool], measured: dict, combos: dict, batch: int) -> None:
    """The rest of the budget: a descent from the best cells measured. Each step measures the
    unmeasured valid cells one or two grid steps away (one parameter, or two at once: a ridge
    such as SpMV's ``wg / rows`` constant runs diagonally) in batches of the GPUs, and moves to
    the fastest while it improves; then from the next best start, until the budget is spent."""
    tried: set = set()
    while not exhausted():
        ranked = sorted((k for k, t in measured.items() if t is not None and k not in tried),
                        key=lambda k: measured[k])
        if not ranked:
            return
        current = ranked[0]
        tried.add(current)
        while not exhausted():
            around = [c for c in space.neighbours(combos[current], diagonal=True)
                      if valid(c) and space.key(c) not in measured]
            around.sort(key=lambda c: space.distance(c, combos[current]))      # single steps first
            for i in range(0, len(around), max(1, batch)):
                if exhausted():
                    break
                run(around[i:i + max(1, batch)])
                if _fastest(measured) != current:
                    break                          # a better cell: move there now, the budget is small
            best = _fastest(measured)
            if best == current:
                break
            current = best
            tried.add(current)


def _fastest_time(measured: dict) -> float:
    return min((t for t in measured.values() if t is not None), default=math.inf)


def _fastest(measured: dict):
    return min((k for k, t in measured.items() if t is not None), key=lambda k: measured[k])
