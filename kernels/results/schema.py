"""The shape and bounds of result files, checked before anything uses them.

Result files travel: a sweep made on a GPU server is opened on a laptop, and a crafted or
damaged one must cost its user nothing. So every run record and sweep read by
:mod:`kernels.results` passes three gates, cheapest first:

1. the file's size (:data:`MAX_RESULT_FILE_BYTES`) before it is read, and JSON parsing
   that refuses nesting deeper than the interpreter allows;
2. the JSON Schemas shipped in :mod:`kernels.results.schemas` (``record.schema.json``,
   ``sweep.schema.json``): the fields the project writes, their types and simple bounds;
3. what a schema cannot say: the number of grid combinations (:data:`MAX_SWEEP_CELLS`, so
   a small file cannot declare a table that takes gigabytes to draw), cells whose
   parameters are exactly the grid's names with values from the grid, and finite numbers
   (``NaN`` and ``Infinity`` parse as JSON here, but no time, count or grid value may be one),
   and nesting no deeper than :data:`MAX_DEPTH` (free-form parts included: the GUI walks them).

Every refusal is a :class:`~kernels.errors.GraphFormatError` of one line naming the file (and
line, for JSON lines), where in the document, and what is wrong.
"""

from __future__ import annotations

import functools
import json
import math
from importlib import resources
from pathlib import Path

from kernels import json_input
from kernels.errors import GraphFormatError

MAX_RESULT_FILE_BYTES = 64 * 2**20    # a sweep of ~20,000 cells with their records; parsing costs ~10x in RAM
MAX_RECORDS = 50_000               # run records in one JSON-lines file
MAX_SWEEP_CELLS = 100_000          # combinations of a grid (also the most cells a sweep may hold)
MAX_GRID_VALUES = 10_000           # values of one swept parameter (also in sweep.schema.json)
MAX_DEPTH = 64                     # nesting of a document (the project writes about 6 levels)
MAX_MESSAGE_VALUE = 60             # characters of an offending value quoted in a message

MAX_SWEEP_LINES = MAX_SWEEP_CELLS + 10_000   # cells plus resume lines of a JSON-lines sweep
SWEEP_LINE_KINDS = ("cell", "resume", "end", "confirm")


# ---- the schemas ---------------------------------------------------------------------------------

@functools.cache
def _schemas() -> dict:
    folder = resources.files("kernels.results.schemas")
    return {name: json.loads(folder.joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))
            for name in ("record", "sweep")}


@functools.cache
def _validator(name: str):
    """``record``, ``sweep``, or ``sweep#KIND`` for one line of a JSON-lines sweep
    (``header``, ``cell``, ``resume``, ``end``: the ``$defs`` of ``sweep.schema.json``)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = _schemas()
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values())
    if "#" in name:
        file, part = name.split("#")
        return Draft202012Validator({"$ref": f"{schemas[file]['$id']}#/$defs/{part}"}, registry=registry)
    return Draft202012Validator(schemas[name], registry=registry)


def schema_text(name: str) -> str:
    """The JSON Schema of ``record`` or ``sweep`` files, as shipped."""
    return resources.files("kernels.results.schemas").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


# ---- messages -------------------------------------------------------------------------------------

def _name(key) -> str:
    """A key of the document, as a message may quote it (one line, bounded)."""
    text = str(key)
    if not text.isidentifier():
        text = json.dumps(text)
    return text if len(text) <= 40 else text[:40] + "…"


def _names(keys) -> str:
    keys = list(keys)
    text = ", ".join(_name(k) for k in keys[:8])
    return text + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")


def _where(path) -> str:
    parts = list(path)
    shown = parts if len(parts) <= 8 else [*parts[:6], "…"]
    out = ""
    for part in shown:
        out += f"[{part}]" if isinstance(part, int) else (f".{_name(part)}" if out else _name(part))
    if len(parts) > 8:
        out += f" ({len(parts)} levels down)"
    return out or "the document"


def _quote(value) -> str:
    text = json.dumps(value, allow_nan=True) if not isinstance(value, (dict, list)) else type(value).__name__
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_MESSAGE_VALUE else text[:MAX_MESSAGE_VALUE] + "…"


_JSON_TYPE = {dict: "an object", list: "an array", str: "a string", bool: "true or false", int: "a number",
              float: "a number", type(None): "null"}


def _describe(error) -> str:
    """One short line for a jsonschema error (its own message quotes whole instances)."""
    kind, expected, value = error.validator, error.validator_value, error.instance
    if kind == "required":
        return "is missing"
    if kind == "type":
        wanted = [expected] if isinstance(expected, str) else list(expected)
        return f"is {_JSON_TYPE.get(type(value), type(value).__name__)}, expected {' or '.join(wanted)}"
    if kind == "const":
        return f"is {_quote(value)}, expected {_quote(expected)}"
    if kind == "enum":
        return f"is {_quote(value)}, expected one of {', '.join(map(_quote, expected))}"
    if kind in ("minimum", "exclusiveMinimum"):
        return f"is {_quote(value)}, expected at least {expected}"
    if kind == "maxItems":
        return f"has {len(value):,} items, at most {expected:,} allowed"
    if kind == "minItems":
        return f"has {len(value)} items, at least {expected} expected"
    if kind == "maxProperties":
        return f"has {len(value)} entries, at most {expected} allowed"
    if kind == "minProperties":
        return "is empty" if not value else f"has {len(value)} entries, at least {expected} expected"
    if kind in ("maxLength", "minLength"):
        return f"has {len(value)} characters, expected {'at most' if kind == 'maxLength' else 'at least'} {expected}"
    if kind == "oneOf":
        wanted = [sub.get("type", "?") for sub in expected if isinstance(sub, dict)]
        return f"is {_JSON_TYPE.get(type(value), type(value).__name__)}, expected {' or '.join(map(str, wanted))}"
    return " ".join(error.message.split())[:200]


def _refuse(what: str, path, line, problem: str) -> GraphFormatError:
    return GraphFormatError(f"not a valid {what}: {problem}", path, line)


# ---- reading ---------------------------------------------------------------------------------------

def check_size(path: Path, what: str) -> None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise GraphFormatError(f"cannot read: {exc.strerror}", path) from None
    if size > MAX_RESULT_FILE_BYTES:
        raise GraphFormatError(f"{size / 2**20:,.0f} MiB is larger than a {what} file may be "
                               f"({MAX_RESULT_FILE_BYTES // 2**20} MiB)", path)


def parse_json(text: str, path, line: int | None, what: str):
    """``json.loads`` with every failure (syntax, nesting too deep, an integer of thousands of
    digits) as a one-line refusal."""
    try:
        return json_input.loads(text)
    except json_input.IntegerTooLong as exc:
        raise GraphFormatError(f"not a {what} ({json_input.describe(exc)})" if line is None
                               else f"not a JSON {what} ({json_input.describe(exc, with_line=False)})",
                               path, line) from None
    except json.JSONDecodeError as exc:
        raise GraphFormatError(f"not a {what} (invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg})"
                               if line is None else f"not a JSON {what} ({exc.msg})", path, line) from None
    except RecursionError:
        raise GraphFormatError(f"not a {what} (JSON nested too deeply)", path, line) from None


# ---- checks ------------------------------------------------------------------------------------------

def _schema_errors(name: str, document, path, line) -> list:
    try:
        errors = list(_validator(name).iter_errors(document))
    except RecursionError:
        raise GraphFormatError("JSON nested too deeply", path, line) from None
    # the shallowest first: "'grid' is missing" says more than what is wrong deep inside a cell
    return sorted(errors, key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))


def _scan(document):
    """The first (path, problem) found walking the document, or None: nesting deeper than
    :data:`MAX_DEPTH` anywhere, a NaN or infinite number anywhere (schema 2 files are standard
    JSON; the free-form parts of version 1 files, where such numbers were allowed, became null
    when :mod:`kernels.results.migrate` read them). Iterative, so a deep document cannot exhaust
    the interpreter's stack here."""
    stack = [(document, ())]
    while stack:
        value, at = stack.pop()
        if len(at) > MAX_DEPTH:
            return at[:MAX_DEPTH], f"is nested more than {MAX_DEPTH} levels deep"
        if isinstance(value, float) and not math.isfinite(value):
            return at, f"is {_quote(value)}, expected a finite number"
        if isinstance(value, dict):
            stack.extend((v, (*at, k)) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((v, (*at, i)) for i, v in reversed(list(enumerate(value))))
    return None


def _check_shape(name: str, what: str, document, path, line) -> None:
    errors = _schema_errors(name, document, path, line)
    if errors:
        first = errors[0]
        where = list(first.absolute_path)
        if first.validator == "required":     # name the missing field itself
            where.append(next(k for k in first.validator_value if k not in first.instance))
        raise _refuse(what, path, line, f"{_where(where)} {_describe(first)}")
    bad = _scan(document)
    if bad is not None:
        raise _refuse(what, path, line, f"{_where(bad[0])} {bad[1]}")


def check_record(record, path, line: int | None = None) -> dict:
    """Refuse a run record that does not match ``record.schema.json`` (or has non-finite numbers)."""
    if not isinstance(record, dict) or "family" not in record:
        raise GraphFormatError("not a run record", path, line, "an object with family, variant, params, timing")
    _check_shape("record", "run record", record, path, line)
    return record


def _value_key(value):
    # True == 1 in Python: a boolean cell value must not match a numeric grid value
    return (type(value) is bool, value)


def _check_bounds(sweep: dict, path) -> None:
    grid, cells = sweep.get("grid"), sweep.get("cells")
    if isinstance(cells, list) and len(cells) > MAX_SWEEP_CELLS:
        raise _refuse("sweep", path, None, f"{len(cells):,} cells, at most {MAX_SWEEP_CELLS:,} allowed")
    if isinstance(grid, dict) and grid and all(isinstance(v, list) for v in grid.values()):
        longest = max(grid, key=lambda name: len(grid[name]))
        if len(grid[longest]) > MAX_GRID_VALUES:
            raise _refuse("sweep", path, None, f"grid.{_name(longest)} has {len(grid[longest]):,} values, "
                                               f"at most {MAX_GRID_VALUES:,} allowed")
        combinations = math.prod(len(values) for values in grid.values())
        if combinations > MAX_SWEEP_CELLS:
            shape = " × ".join(f"{len(v):,}" for v in grid.values())
            raise _refuse("sweep", path, None, f"the grid has {combinations:,} combinations ({shape}), "
                                               f"at most {MAX_SWEEP_CELLS:,} allowed")


def check_sweep(sweep, path) -> dict:
    """Refuse a sweep that does not match ``sweep.schema.json`` or whose grid is out of bounds."""
    if not isinstance(sweep, dict) or sweep.get("kind") != "sweep":
        raise GraphFormatError("not a sweep file", path, None,
                               "JSON written by 'graph-kernels sweep' (kind: sweep, cells: [...])")
    _check_bounds(sweep, path)          # before the schema: validating a huge array takes time too
    _check_shape("sweep", "sweep", sweep, path, None)
    return check_cells_match_grid(sweep, path)


def check_sweep_header(header, path) -> dict:
    """The first line of a JSON-lines sweep: ``sweep.schema.json#/$defs/header`` and the grid bounds."""
    if not isinstance(header, dict) or header.get("kind") != "sweep":
        raise GraphFormatError("not a sweep file", path, 1, "a first line with kind: sweep")
    _check_bounds(header, path)
    _check_shape("sweep#header", "sweep header", header, path, 1)
    return header


def check_sweep_line(line, path, lineno: int) -> dict:
    """A line after the header: a cell, a resume or an end line (``sweep.schema.json#/$defs/...``)."""
    kind = line.get("kind") if isinstance(line, dict) else None
    if kind not in SWEEP_LINE_KINDS:
        shown = _quote(kind) if kind is not None else "missing"
        raise GraphFormatError(f"not a valid sweep line: kind is {shown}, expected one of "
                               f"{', '.join(SWEEP_LINE_KINDS)}", path, lineno)
    _check_shape(f"sweep#{kind}", f"sweep {kind} line", line, path, lineno)
    return line


def check_cells_match_grid(sweep: dict, path) -> dict:
    """What a schema cannot say about a sweep's cells: at most one per combination of the grid,
    each naming exactly the grid's parameters with values from the grid."""
    grid = sweep["grid"]
    combinations = math.prod(len(values) for values in grid.values())
    cells = sweep["cells"]
    if len(cells) > combinations:
        raise _refuse("sweep", path, None, f"{len(cells):,} cells for a grid of {combinations:,} combinations")
    names = set(grid)
    allowed = {name: {_value_key(v) for v in values} for name, values in grid.items()}
    seen: dict = {}
    for i, cell in enumerate(cells):
        params = cell["params"]
        if set(params) != names:
            extra, missing = sorted(set(params) - names), sorted(names - set(params))
            problem = (f"{_name(extra[0])} is not a swept parameter" if extra else f"{_name(missing[0])} is missing")
            raise _refuse("sweep", path, None, f"cells[{i}].params: {problem} (grid: {_names(grid)})")
        for name, value in params.items():
            if _value_key(value) not in allowed[name]:
                raise _refuse("sweep", path, None, f"cells[{i}].params.{_name(name)} is {_quote(value)}, "
                                                   f"not a value of grid.{_name(name)}")
        key = tuple(_value_key(params[name]) for name in grid)
        if key in seen:
            raise _refuse("sweep", path, None, f"cells[{seen[key]}] and cells[{i}] have the same parameters")
        seen[key] = i
    return sweep

