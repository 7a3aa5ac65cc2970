"""The registry of generators: name -> function plus the metadata that forms are built from.

Each generator declares its options once (:class:`OptionSpec`: type, default, bounds or
choices, help). The command line turns them into ``--option`` flags, the GUI's
Graph > Generate dialog into widgets, and the same specs validate every call - a direct
Python call included, since :func:`register_generator` wraps the function with the check.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kernels.errors import ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.generators._weights import DEFAULT_WEIGHT_RANGE, WEIGHT_KINDS

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()


@dataclass(frozen=True)
class OptionSpec:
    """One option of a generator. ``default=None`` with ``optional=True`` means "automatic"."""

    name: str
    type: type  # int, float, bool or str
    default: object = REQUIRED
    help: str = ""
    choices: tuple | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    optional: bool = False

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def cli_flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def allowed(self) -> str:
        """What values are allowed, in words (used in error messages and help)."""
        if self.choices is not None:
            text = "one of " + ", ".join(str(c) for c in self.choices)
        elif self.type is bool:
            text = "true or false"
        else:
            text = "an integer" if self.type is int else "a number"
            lo, hi = _number_text(self.minimum), _number_text(self.maximum)
            if lo is not None and hi is not None:
                text += (f" in {'(' if self.exclusive_minimum else '['}{lo}, {hi}"
                         f"{')' if self.exclusive_maximum else ']'}")
            elif lo is not None:
                text += f" {'>' if self.exclusive_minimum else '>='} {lo}"
            elif hi is not None:
                text += f" {'<' if self.exclusive_maximum else '<='} {hi}"
        if self.optional and not (self.choices and "none" in self.choices):
            text += ", or none"
        return text

    def default_text(self) -> str:
        """The default as a user would type it ("automatic" for an optional None)."""
        if self.required:
            return ""
        if self.default is None:
            return "automatic"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        return str(self.default)

    def _refuse(self, value):
        raise ParameterError(self.name, value, self.allowed())

    def check(self, value):
        """Validate a Python value and return it in its canonical type."""
        if value is None and self.optional:
            return None
        if self.type is bool:
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            self._refuse(value)
        if self.type is str:
            if self.choices is not None and value not in self.choices:
                self._refuse(value)
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            self._refuse(value)
        if self.type is int:
            if not (isinstance(value, (int, np.integer)) or (math.isfinite(value) and value == int(value))):
                self._refuse(value)
            value = int(value)
        else:
            value = float(value)
            if not math.isfinite(value):
                self._refuse(value)
        if self.minimum is not None and (value < self.minimum
                                         or (self.exclusive_minimum and value == self.minimum)):
            self._refuse(value)
        if self.maximum is not None and (value > self.maximum
                                         or (self.exclusive_maximum and value == self.maximum)):
            self._refuse(value)
        if self.choices is not None and value not in self.choices:
            self._refuse(value)
        return value

    def parse(self, text: str):
        """Convert text typed by a user (command line, form field) and validate it."""
        raw = text.strip()
        if self.optional and raw.lower() in ("none", "auto", ""):
            return None
        if self.type is bool:
            if raw.lower() in _TRUE:
                return True
            if raw.lower() in _FALSE:
                return False
            self._refuse(text)
        if self.type is str:
            return self.check(raw)
        try:
            number = float(raw) if self.type is float else _parse_int(raw)
        except ValueError:
            self._refuse(text)
        return self.check(number)


def _number_text(value) -> str | None:
    if value is None:
        return None
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _parse_int(raw: str) -> int:
    """An integer, also written as ``2**20`` or ``1e6`` (exactly whole)."""
    if "**" in raw:
        base, exp = raw.split("**", 1)
        return int(base) ** int(exp)
    try:
        return int(raw)
    except ValueError:
        value = float(raw)
        if not math.isfinite(value) or value != int(value):
            raise
        return int(value)


SEED_OPTION = OptionSpec("seed", int, 0, "seed of numpy.random.default_rng (same seed, same graph)",
                         minimum=0)
WEIGHT_OPTIONS = (
    OptionSpec("weights", str, "none", "random edge weights: none, uniform (real) or integer",
               choices=WEIGHT_KINDS, optional=True),
    OptionSpec("weight_min", float, DEFAULT_WEIGHT_RANGE[0], "smallest weight"),
    OptionSpec("weight_max", float, DEFAULT_WEIGHT_RANGE[1],
               "largest weight (uniform: exclusive, integer: inclusive)"),
)


@dataclass(frozen=True)
class GeneratorSpec:
    """A registered generator: ``produces`` is "graph" (weights optional) or "matrix" (values)."""

    name: str
    function: Callable[..., CSRGraph]
    summary: str
    options: tuple[OptionSpec, ...]
    produces: str = "graph"
    seeded: bool = True

    @property
    def common_options(self) -> tuple[OptionSpec, ...]:
        """Options every generator of this sort shares (seed, weights)."""
        common = (SEED_OPTION,) if self.seeded else ()
        return common + (WEIGHT_OPTIONS if self.produces == "graph" else ())

    @property
    def all_options(self) -> tuple[OptionSpec, ...]:
        return self.options + self.common_options

    def option(self, name: str) -> OptionSpec:
        for spec in self.all_options:
            if spec.name == name:
                return spec
        raise ParameterError(name, name, f"an option of '{self.name}': "
                             + ", ".join(s.name for s in self.all_options))

    def parse(self, texts: dict[str, str]) -> dict:
        """Options given as text (by name) -> validated Python values."""
        return {name: self.option(name).parse(text) for name, text in texts.items()}

    def __call__(self, **options) -> CSRGraph:
        """Generate, with options by name; ``weight_min``/``weight_max`` form the weight range."""
        for name in options:
            if not (name == "weight_range" and self.produces == "graph"):
                self.option(name)  # refuses unknown names with the list of known ones
        if "weight_min" in options or "weight_max" in options:
            options["weight_range"] = (options.pop("weight_min", DEFAULT_WEIGHT_RANGE[0]),
                                       options.pop("weight_max", DEFAULT_WEIGHT_RANGE[1]))
        return self.function(**options)


GENERATORS: dict[str, GeneratorSpec] = {}


def register_generator(name: str, *, summary: str, options: tuple[OptionSpec, ...],
                       produces: str = "graph", seeded: bool = True):
    """Decorator: register a generator and validate its declared options on every call."""

    def decorate(function):
        signature = inspect.signature(function)
        spec = GeneratorSpec(name, function, summary, tuple(options), produces, seeded)
        checked_names = [s.name for s in spec.all_options if s.name in signature.parameters]
        for s in spec.options:
            if s.name not in signature.parameters:
                raise TypeError(f"generator {name!r} declares option {s.name!r} it does not take")

        @functools.wraps(function)
        def checked(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            for option_name in checked_names:
                bound.arguments[option_name] = spec.option(option_name).check(bound.arguments[option_name])
            return function(*bound.args, **bound.kwargs)

        GENERATORS[name] = GeneratorSpec(name, checked, summary, tuple(options), produces, seeded)
        return checked

    return decorate


def generate(generator: str, /, **options) -> CSRGraph:
    """Generate a graph of a registered kind, e.g. ``generate("rmat", scale=16, seed=1)``."""
    return generator_spec(generator)(**options)


def generator_spec(kind: str) -> GeneratorSpec:
    try:
        return GENERATORS[kind]
    except KeyError:
        raise ParameterError("generator", kind, "one of " + ", ".join(GENERATORS)) from None
