"""Older result files brought to the current schema on reading, and newer ones refused.

Version 1 (before 2026-12) wrote run records whose free-form parts (``result``, ``environment``,
a failed verification's ``worst`` differences) could hold ``NaN``/``Infinity`` literals, which
are not JSON, and sweeps as one JSON document written when the sweep ended. Version 2 writes
standard JSON (a number that is not finite is ``null``) and sweeps as JSON lines, one line per
finished cell (:mod:`kernels.results.sweep_file`). A version 1 sweep is read as a complete grid
sweep (``strategy: {"name": "grid"}``). See ``docs/results.md``.
"""

from __future__ import annotations

import math

from kernels.errors import GraphFormatError
from kernels.results.records import RECORD_SCHEMA, SWEEP_SCHEMA

# the parts of a version-1 record where a non-finite number was allowed
_V1_FREE_FORM = ("result", "environment", "notices")


def _finite_or_none(value, depth: int = 0):
    """``value`` with every NaN or infinity (at any depth) replaced by None."""
    if depth > 64:              # deeper documents are refused later, with a message
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite_or_none(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite_or_none(v, depth + 1) for v in value]
    return value


def check_version(document, what: str, current: int, path, line: int | None = None) -> int | None:
    """The document's ``schema`` if this version reads it (1 .. ``current``); a newer or unknown
    one is refused in one line. Documents without a schema field are left to the schema check."""
    if not isinstance(document, dict) or "schema" not in document:
        return None
    version = document["schema"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise GraphFormatError(f"not a valid {what}: schema is {str(version)[:40]!r}, expected a version number "
                               f"1 to {current}", path, line)
    if version > current:
        raise GraphFormatError(f"{what} schema version {version} is newer than this gpu-graph-explorer reads "
                               f"(1 to {current}): update it to open this file", path, line)
    return version


def migrate_record(record, path, line: int | None = None):
    """A run record at :data:`RECORD_SCHEMA` (version 1 records are converted)."""
    if check_version(record, "run record", RECORD_SCHEMA, path, line) == 1:
        record = dict(record, schema=RECORD_SCHEMA)
        for part in _V1_FREE_FORM:
            if part in record:
                record[part] = _finite_or_none(record[part])
        verification = record.get("verification")
        if isinstance(verification, dict) and "worst" in verification:
            record["verification"] = dict(verification, worst=_finite_or_none(verification["worst"]))
    return record


def migrate_sweep_document(sweep, path):
    """A whole-document sweep (version 1, or a version 2 sweep kept as one document) at
    :data:`SWEEP_SCHEMA`."""
    if check_version(sweep, "sweep", SWEEP_SCHEMA, path) == 1:
        sweep = dict(sweep, schema=SWEEP_SCHEMA)
        sweep.setdefault("strategy", {"name": "grid"})
        if "environment" in sweep:
            sweep["environment"] = _finite_or_none(sweep["environment"])
        cells = sweep.get("cells")
        if isinstance(cells, list):
            sweep["cells"] = [dict(c, record=migrate_record(c["record"], path))
                              if isinstance(c, dict) and isinstance(c.get("record"), dict) else c for c in cells]
    return sweep
