"""The registry of algorithm families, their variants, launch parameters and metrics.

Everything the command line, the sweeps and the GUI know about an algorithm comes from the
metadata declared here (Kernel Tuner style: parameters are lists of allowed values or ranges,
constraints are small expressions such as ``"rows <= wg"``; a GPU variant's launch shape and
its small simulator parameters, :class:`LaunchShape`). Adding a variant touches the family module
that registers it, the module of its kernels and its doc (``docs/adding-an-algorithm.md``).

A family module must import only NumPy/SciPy at module level; GPU code (``numba.cuda``) is
imported inside ``Variant.make`` so that listing algorithms never initialises CUDA (the GUI
process must not, and the CUDA simulator must be chosen before ``numba.cuda`` is imported).
"""

from __future__ import annotations

import importlib
import logging
import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernels.errors import ConstraintError, GraphKernelsError, ParameterError
from kernels.measure.targets import GPU_TARGETS, Target

KINDS = ("cpu-serial", "cpu-parallel", "library", "gpu", "vendor")
PLUGINS_ENV = "GRAPH_KERNELS_PLUGINS"
# set to 1: built-in families only (no entry points, no GRAPH_KERNELS_PLUGINS): the README's
# table is generated so, and it starts the program past a plug-in that breaks it
NO_PLUGINS_ENV = "GRAPH_KERNELS_NO_PLUGINS"

logger = logging.getLogger(__name__)

# Family modules registered on first use of the registry, in the order they are listed.
FAMILY_MODULES: list[str] = [
    "kernels.algorithms.spmv",
    "kernels.algorithms.triangles",
    "kernels.algorithms.apsp",
    "kernels.algorithms.kclique",
    "kernels.algorithms.traversal.bfs",
    "kernels.algorithms.traversal.sssp",
]


# ---- parameters ------------------------------------------------------------------------

#: the value a parameter with an ``auto`` rule accepts: the run chooses it from the input
AUTO = "auto"


@dataclass(frozen=True)
class AutoChoice:
    """What an ``auto`` rule chose, and why in words (one clause: the features and the rule)."""

    value: Any
    reason: str


#: an ``auto`` rule: ``(problem, params, target) -> AutoChoice``; ``params`` hold the concrete
#: values of the parameters declared before this one (their own ``auto`` already resolved)
AutoRule = Callable[["Problem", dict, str], AutoChoice]


def is_auto(value: Any) -> bool:
    return isinstance(value, str) and value == AUTO

@dataclass(frozen=True)
class Param:
    """One launch or algorithm parameter.

    Allowed values are either ``choices`` (an explicit list) or ``minimum``/``maximum``
    (inclusive), optionally restricted to powers of two. A parameter with an ``auto`` rule also
    accepts the text ``"auto"`` (:data:`AUTO`): the runner asks the rule for the value once the
    input is prepared (:meth:`Family.resolve_auto`, see ``docs/defaults.md``); ``"auto"`` is in a
    sweep grid only when the user names it."""

    name: str
    type: type
    default: Any
    help: str = ""
    choices: tuple | None = None
    minimum: float | None = None
    maximum: float | None = None
    power_of_two: bool = False
    sweep_values: tuple | None = None  # a sensible default grid for sweeps
    auto: AutoRule | None = field(default=None, compare=False)

    def allowed_text(self) -> str:
        text = self._allowed_values_text()
        return f"{text}, or {AUTO} (chosen from the input)" if self.auto is not None else text

    def _allowed_values_text(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        parts = []
        if self.power_of_two:
            parts.append("a power of two")
        else:
            parts.append({int: "an integer", float: "a number", bool: "true or false",
                          str: "text"}.get(self.type, self.type.__name__))
        if self.minimum is not None and self.maximum is not None:
            parts.append(f"from {_fmt(self.minimum)} to {_fmt(self.maximum)}")
        elif self.minimum is not None:
            parts.append(f">= {_fmt(self.minimum)}")
        elif self.maximum is not None:
            parts.append(f"<= {_fmt(self.maximum)}")
        return " ".join(parts)

    def parse(self, text: str | Any) -> Any:
        """Convert a command-line string (or a value) to this parameter's type, then validate."""
        if not isinstance(text, str):
            return self.validate(text)
        raw = text.strip()
        if self.auto is not None and raw.lower() == AUTO:
            return AUTO
        try:
            if self.type is bool:
                low = raw.lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(raw)
                value = low in ("true", "1", "yes")
            elif self.type is int:
                value = _parse_int(raw)
            elif self.type is float:
                value = float(raw)
            else:
                value = raw
        except ValueError:
            raise ParameterError(self.name, text, self.allowed_text()) from None
        return self.validate(value)

    def validate(self, value: Any) -> Any:
        if self.auto is not None and is_auto(value):
            return AUTO
        if self.type is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.type is float and isinstance(value, float) and not math.isfinite(value):
            raise ParameterError(self.name, value, self.allowed_text())     # nan passes every comparison
        if self.type is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise ParameterError(self.name, value, self.allowed_text())
        if self.type is bool and not isinstance(value, bool):
            raise ParameterError(self.name, value, self.allowed_text())
        if self.type is str and not isinstance(value, str):
            raise ParameterError(self.name, value, self.allowed_text())
        if self.choices is not None and value not in self.choices:
            raise ParameterError(self.name, value, self.allowed_text())
        if self.minimum is not None and value < self.minimum:
            raise ParameterError(self.name, value, self.allowed_text())
        if self.maximum is not None and value > self.maximum:
            raise ParameterError(self.name, value, self.allowed_text())
        if self.power_of_two and (value < 1 or (int(value) & (int(value) - 1)) != 0):
            raise ParameterError(self.name, value, self.allowed_text())
        return value

    def grid_values(self) -> list:
        """Values a sweep uses when the user names the parameter without values."""
        if self.sweep_values is not None:
            return list(self.sweep_values)
        if self.choices is not None:
            return list(self.choices)
        if self.power_of_two and self.minimum is not None and self.maximum is not None:
            lo, hi = int(math.log2(max(self.minimum, 1))), int(math.log2(self.maximum))
            return [2 ** i for i in range(lo, hi + 1)]
        return [self.default]

    def to_json(self) -> dict:
        return {"name": self.name, "type": self.type.__name__, "default": self.default,
                "help": self.help, "choices": list(self.choices) if self.choices is not None else None,
                "minimum": self.minimum, "maximum": self.maximum, "power_of_two": self.power_of_two,
                "allowed": self.allowed_text(), "sweep_values": self.grid_values(), "auto": self.auto is not None}


def _parse_int(raw: str) -> int:
    try:
        return int(raw, 0)
    except ValueError:
        as_float = float(raw)  # "1e3" is a fine way to write 1000
        if not as_float.is_integer():
            raise
        return int(as_float)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True)
class Constraint:
    """A restriction between parameters, a Python expression over their names."""

    expression: str
    explanation: str = ""

    @property
    def names(self) -> frozenset[str]:
        """The parameter names the expression reads (``Family.add`` checks they exist)."""
        import ast

        return frozenset(node.id for node in ast.walk(ast.parse(self.expression, mode="eval"))
                         if isinstance(node, ast.Name))

    def holds(self, params: dict) -> bool:
        # a parameter still "auto" (or not yet given, as on a form being filled) is unknown here: the
        # constraint is checked once it is known. A name no parameter has cannot reach this point:
        # Family.add refuses such a constraint, which would otherwise hold for ever.
        if any(n not in params or is_auto(params[n]) for n in self.names):
            return True
        return bool(eval(self.expression, {"__builtins__": {}}, {n: params[n] for n in self.names}))  # noqa: S307

    def message(self, params: dict) -> str:
        names = sorted(n for n in params if n in self.expression)
        values = ", ".join(f"{n}={params[n]}" for n in names)
        text = f"constraint '{self.expression}' does not hold for {values}"
        if self.explanation:
            text += f" ({self.explanation})"
        return text


# ---- metrics and verification ----------------------------------------------------------

@dataclass(frozen=True)
class Metric:
    """A rate computed from the problem size and the median kernel time (seconds)."""

    name: str
    unit: str
    compute: Callable[[Any, float], float]
    description: str = ""

    def to_json(self) -> dict:
        return {"name": self.name, "unit": self.unit, "description": self.description}


@dataclass
class Verification:
    ok: bool
    reference: str
    detail: str = ""
    worst: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"ok": self.ok, "reference": self.reference, "detail": self.detail, "worst": self.worst}


@dataclass
class Problem:
    """The host-side input of one run: the graph plus whatever the family derives from it
    (the x vector of SpMV, an oriented graph, ...). ``size`` feeds metrics and records."""

    graph: Any
    data: dict = field(default_factory=dict)
    size: dict = field(default_factory=dict)
    notices: list = field(default_factory=list)
    #: the :class:`~kernels.operators.live_pages.LivePages` of an edited structure, when the run was
    #: asked to use them and the variant declares ``live_pages`` (else ``None``)
    live: Any = None


def lazy_make(spec: str) -> Callable[[Problem, dict, str], Any]:
    """A variant's ``make`` given as ``"package.module:function"``, imported on first use.

    GPU modules import ``numba.cuda`` at module level; deferring the import keeps listing the
    registry free of CUDA (the GUI process never imports it)."""
    module_name, _, function_name = spec.partition(":")

    def make(problem, params, run_target):
        return getattr(importlib.import_module(module_name), function_name)(problem, params, run_target)

    make.__qualname__ = make.__name__ = f"lazy_make({spec!r})"
    return make


# ---- launch shapes ---------------------------------------------------------------------

#: a launch shape's block: ``(params, simulator) -> threads per block``
BlockRule = Callable[[dict, bool], int]
#: a launch shape's grid: ``(graph, params, simulator) -> blocks``
GridRule = Callable[[Any, dict, bool], int]


@dataclass(frozen=True)
class LaunchShape:
    """How a GPU variant launches, declared once where the variant is registered.

    ``block(params, simulator)`` is the threads per block of its main kernel and
    ``grid(graph, params, simulator)`` its blocks on the input ``graph`` (a
    :class:`~kernels.graph.csr.CSRGraph`): exactly what the variant launches on the CUDA simulator
    (``simulator=True``, grids capped as :mod:`kernels.cuda.simulator` says); on a GPU, the blocks
    the work asks for (a grid-stride or persistent kernel may launch fewer). ``params`` are the
    variant's resolved parameters (no ``auto`` left among those the shape reads, except where it
    says how it counts one). ``sim_params`` are the small parameters it runs with on the
    simulator: a run on a tiny input stays at a few thousand simulated threads (the conformance
    and launch-mode tests run it so; the simulator estimate, the PTX check and the benchmarks read
    the rest). ``ptx`` names, as ``"package.module:function"``, a function returning the
    variant's kernels for the PTX check (``[(name, dispatcher, argument types or None)]``; None:
    the dispatcher's own signatures); imported only by the check. ``text`` says the shape in
    words."""

    block: BlockRule
    grid: GridRule
    sim_params: dict
    ptx: str
    text: str = ""

    def threads(self, graph, params: dict, simulator: bool = True) -> int:
        """Simulated (or GPU) threads of the main launch: grid x block."""
        return int(self.grid(graph, params, simulator)) * int(self.block(params, simulator))


def block_param(name: str, per_unit: int = 1) -> BlockRule:
    """A block of ``params[name]`` threads (times ``per_unit``: 32 for a count of warps)."""
    def block(params: dict, simulator: bool) -> int:
        return per_unit * int(params[name])

    block.__qualname__ = block.__name__ = f"block_param({name!r})"
    return block


def ceil_div(a: int, b: int) -> int:
    return -(-int(a) // max(int(b), 1))


# ---- variants and families -------------------------------------------------------------

@dataclass
class Variant:
    """One implementation of a family's algorithm.

    ``make(problem, params, target)`` returns an execution object with the stages
    ``compile()``, ``upload()``, ``launch()``, ``synchronize()``, ``download() -> output``
    (see :mod:`kernels.run.runner`); ``available()`` returns ``None`` or the reason the variant
    cannot run here (e.g. "CuPy is not installed"). ``live_pages``: given the live slotted pages
    of an edited document (``Problem.live``), the variant runs on their device mirror instead of
    building its own data from the CSR snapshot (see :mod:`kernels.operators.live_pages`)."""

    name: str
    kind: str
    description: str
    make: Callable[[Problem, dict, str], Any]
    params: tuple[Param, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    targets: tuple[str, ...] | None = None
    available: Callable[[], str | None] = lambda: None
    per_vertex: bool = False
    live_pages: bool = False
    #: how it launches and what it runs with on the simulator (every ``gpu`` variant declares one)
    launch: LaunchShape | None = None
    family: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"variant kind must be one of {KINDS}, not {self.kind!r}")
        if self.targets is None:
            self.targets = (GPU_TARGETS if self.kind == "gpu" else (str(Target.CUDA),) if self.kind == "vendor"
                            else (str(Target.CPU),))

    @property
    def is_gpu(self) -> bool:
        return self.kind in ("gpu", "vendor")


@dataclass
class Family:
    """An algorithm family: its variants, shared parameters, input needs, reference and metrics.

    ``prepare(graph, params, seed) -> Problem`` checks and converts the input (raising
    :class:`InputRequirementError` for an input the family cannot use);
    ``reference(problem, params) -> output`` is the oracle (SciPy/NetworkX);
    ``verify(output, reference_output, problem, params) -> Verification``;
    ``summarize(output, problem) -> dict`` gives the short result stored in records.
    ``vertex_params`` name the parameters that are vertex ids: on a live structure the runner
    refuses one naming a removed vertex (a CSR snapshot only knows the id range)."""

    name: str
    title: str
    description: str
    prepare: Callable[[Any, dict, int], Problem]
    reference: Callable[[Problem, dict], Any]
    verify: Callable[[Any, Any, Problem, dict], Verification]
    summarize: Callable[[Any, Problem], dict]
    metrics: tuple[Metric, ...]
    reference_name: str
    needs: str = ""
    params: tuple[Param, ...] = ()
    variants: dict[str, Variant] = field(default_factory=dict)
    reference_key: Callable[[dict], tuple] = lambda params: ()
    vertex_params: tuple[str, ...] = ()

    def add(self, variant: Variant) -> Variant:
        if variant.name in self.variants:
            raise ValueError(f"{self.name}: variant {variant.name!r} registered twice")
        declared = {p.name for p in self.all_params(variant)}
        for c in variant.constraints:
            unknown = sorted(c.names - declared)
            if unknown:     # a misspelt name would make the constraint always "hold"
                raise ValueError(f"{self.name}/{variant.name}: constraint '{c.expression}' names "
                                 f"{', '.join(unknown)}, not a parameter (parameters: {', '.join(sorted(declared))})")
        if variant.launch is not None:
            unknown = sorted(set(variant.launch.sim_params) - declared)
            if unknown:
                raise ValueError(f"{self.name}/{variant.name}: the simulator parameters name {', '.join(unknown)}, "
                                 f"not a parameter (parameters: {', '.join(sorted(declared))})")
            self.resolve_params(variant, variant.launch.sim_params)    # valid values, constraints hold
        variant.family = self.name
        self.variants[variant.name] = variant
        return variant

    def variant(self, name: str) -> Variant:
        try:
            return self.variants[name]
        except KeyError:
            raise ParameterError("variant", name, "one of " + ", ".join(self.variants)) from None

    def all_params(self, variant: Variant) -> tuple[Param, ...]:
        return tuple(self.params) + tuple(variant.params)

    def resolve_params(self, variant: Variant, given: dict | None) -> dict:
        """Defaults filled in, every value parsed and validated, constraints checked.

        Unknown names, bad values and broken constraints are refused before anything runs."""
        given = dict(given or {})
        declared = {p.name: p for p in self.all_params(variant)}
        unknown = [n for n in given if n not in declared]
        if unknown:
            allowed = ", ".join(declared) or "none"
            raise ParameterError(unknown[0], given[unknown[0]], f"parameters of {self.name}/{variant.name}: "
                                 f"{allowed}", detail="unknown parameter")
        resolved = {}
        for name, p in declared.items():
            resolved[name] = p.parse(given[name]) if name in given else p.default
        for c in variant.constraints:
            if not c.holds(resolved):
                raise ConstraintError(c.message(resolved))
        return resolved

    def resolve_auto(self, variant: Variant, problem: Problem, params: dict, target: str) -> tuple[dict, list[str]]:
        """``params`` with every ``"auto"`` replaced by its rule's choice on this input, and one
        notice per choice (``auto: group_size = 4 (...)``). Rules run in declaration order, each
        seeing the values chosen before it; the chosen values are validated like given ones and
        the variant's constraints checked again."""
        concrete = dict(params)
        notices = []
        for p in self.all_params(variant):
            # only parameters with a rule: "auto" may also be an ordinary choice that the variant
            # itself interprets (spmv/gpu-adaptive's short_mode and loads)
            if p.auto is None or not is_auto(concrete.get(p.name)):
                continue
            choice = p.auto(problem, dict(concrete), target)
            concrete[p.name] = p.validate(choice.value)
            notices.append(f"auto: {p.name} = {concrete[p.name]} ({choice.reason})")
        for c in variant.constraints:
            if notices and not c.holds(concrete):
                raise ConstraintError(c.message(concrete) + " (after auto chose " +
                                      ", ".join(n for n in concrete if is_auto(params.get(n))) + ")")
        return concrete, notices

    def constraint_violation(self, variant: Variant, params: dict) -> str | None:
        """The first broken constraint's message, or None (used by sweeps for invalid cells)."""
        for c in variant.constraints:
            if not c.holds(params):
                return c.message(params)
        return None

    def to_json(self) -> dict:
        return {
            "name": self.name, "title": self.title, "description": self.description,
            "needs": self.needs, "reference": self.reference_name,
            "metrics": [m.to_json() for m in self.metrics],
            "params": [p.to_json() for p in self.params],
            "variants": [
                {"name": v.name, "kind": v.kind, "description": v.description,
                 "targets": list(v.targets), "params": [p.to_json() for p in v.params],
                 "constraints": [{"expression": c.expression, "explanation": c.explanation}
                                 for c in v.constraints],
                 "per_vertex": v.per_vertex, "live_pages": v.live_pages, "unavailable": v.available()}
                for v in self.variants.values()
            ],
        }


_FAMILIES: dict[str, Family] = {}
_loaded = False
_loading = False


def register_family(family: Family) -> Family:
    if family.name in _FAMILIES:
        raise ValueError(f"family {family.name!r} registered twice")
    _FAMILIES[family.name] = family
    return family


_load_lock = threading.RLock()
_plugin_problems: list[str] = []


def _load() -> None:
    """Import the family modules once; concurrent callers wait until all are registered.

    Then the plug-ins: entry points of installed packages (``gpu_graph_explorer.families``, see
    :mod:`kernels.plugins`), then the modules named in ``GRAPH_KERNELS_PLUGINS``. A misspelt or
    broken one does not stop the others: it is logged in one line and kept for
    :func:`plugin_problems`."""
    global _loaded, _loading
    if _loaded:
        return
    with _load_lock:
        if _loaded or _loading:
            return          # a plug-in asking the registry while it loads sees what is registered so far
        _loading = True
        try:
            _load_all()
            _loaded = True
        finally:
            _loading = False


def _load_all() -> None:
    for module in FAMILY_MODULES:
        importlib.import_module(module)
    if os.environ.get(NO_PLUGINS_ENV, "").strip() == "1":
        return
    from kernels.plugins import FAMILIES_GROUP, load_group, one_line

    # importing what the entry point names registers its families and variants
    for _ in load_group(FAMILIES_GROUP, lambda loaded: None, _plugin_problems.append):
        pass
    plugins = [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]
    for module in plugins:
        try:
            importlib.import_module(module)
        except Exception as exc:
            problem = f"plug-in {module!r} named in {PLUGINS_ENV} was not loaded ({one_line(exc)})"
            logger.warning(problem, extra={"plugin_problem": True})
            _plugin_problems.append(problem)


def plugin_problems() -> list[str]:
    """One line per declared plug-in that could not be imported (empty until the registry loads)."""
    return list(_plugin_problems)


def families() -> dict[str, Family]:
    _load()
    return dict(_FAMILIES)


def get_family(name: str) -> Family:
    _load()
    try:
        return _FAMILIES[name]
    except KeyError:
        raise ParameterError("family", name, "one of " + ", ".join(_FAMILIES)) from None


def get_variant(family: str, variant: str) -> tuple[Family, Variant]:
    fam = get_family(family)
    return fam, fam.variant(variant)


def parse_param_assignments(items: Sequence[str] | None) -> dict:
    """``["wg=256", "rows=4"]`` → ``{"wg": "256", "rows": "4"}`` (typed later by the family)."""
    out = {}
    for item in items or ():
        if "=" not in item:
            raise GraphKernelsError(f"--param expects NAME=VALUE, got {item!r}")
        name, value = item.split("=", 1)
        out[name.strip()] = value.strip()
    return out


def check_vertex_params(fam: Family, resolved: dict, graph, structure=None) -> None:
    """Refuse a vertex parameter (``Family.vertex_params``, e.g. BFS ``source``) that names no
    vertex of ``graph``, naming the allowed range: a value chosen on a larger graph goes stale
    when the graph shrinks or another one is chosen. ``structure`` (the live slotted graph the
    CSR is a snapshot of) also refuses a removed vertex. Cheap: the GUI checks its form with it
    on every edit, before anything runs."""
    n = int(graph.n_rows)
    for name in fam.vertex_params:
        v = resolved.get(name)
        if not isinstance(v, int) or isinstance(v, bool):
            continue
        if not 0 <= v < n:
            raise ParameterError(name, v, f"a vertex id from 0 to {n - 1}" if n else "none (the graph is empty)",
                                 detail=f"'{graph.name}' has {n} vertices")
    if structure is None:
        return
    for name in fam.vertex_params:
        v = resolved.get(name)
        if isinstance(v, int) and 0 <= v < structure.next_vertex_id and not structure.has_vertex(v):
            last = structure.next_vertex_id - 1
            raise ParameterError(name, v, "a vertex of the graph",
                                 detail=f"vertex {v} was removed from '{structure.name}'; it has "
                                        f"{structure.num_vertices} vertices among ids 0 .. {last}")
