"""The code's version, as results record it: the release number and a digest of the sources.

``kernels.__version__`` (``0.1.0``) says which release; it does not change with the code between
releases, so two results made by different code could not be told apart. :func:`code_version`
adds a digest of the core's own files — every ``.py`` and ``.json`` under the ``kernels``
package, by relative path and content — as a local version label: ``0.1.0+src.1a2b3c4d5e6f``.
It is the same for a git checkout, an installed wheel or a frozen bundle of the same code
(git commits are not there once installed), changes with any edit, and is computed once per
process (about 10 ms). Run records, sweep files and ``graph-kernels --version`` carry it, and a
Dask client compares it with its workers' (``cluster``: "versions differ").
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from kernels import __version__

SUFFIXES = (".py", ".json")


def source_digest(root: Path) -> str:
    """SHA-256 of the files under ``root`` with :data:`SUFFIXES` (relative path and bytes, sorted)."""
    h = hashlib.sha256()
    files = sorted(p for p in Path(root).rglob("*") if p.suffix in SUFFIXES and p.is_file()
                   and "__pycache__" not in p.parts)
    for path in files:
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``<release>+src.<12 hex digits of the sources' digest>``."""
    try:
        digest = source_digest(Path(__file__).resolve().parent)[:12]
    except OSError:                 # sources not readable (an odd bundle): the release alone
        return __version__
    return f"{__version__}+src.{digest}"
