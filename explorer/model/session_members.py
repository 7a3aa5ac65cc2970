"""Reading the members of a session zip as untrusted input: bounded, checksummed, typed.

Every way a damaged or hostile file can fail (bad zip structure, a deflate stream that does
not inflate, a CRC mismatch, a member larger than the memory there is, an ``.npy`` header that
declares more data than it holds, object arrays, a wrong checksum, a manifest field of the
wrong type) becomes :class:`MemberError` with one sentence naming the member; the caller turns
it into a ``SessionError`` naming the file. Qt-free.
"""

from __future__ import annotations

import binascii
import hashlib
import io
import zipfile
import zlib

import numpy as np

from kernels.errors import GraphFormatError
from kernels.memory import available_memory, format_bytes

# Errors the zip and deflate machinery raises on damaged data (besides its own BadZipFile).
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError,
              NotImplementedError, ValueError, RuntimeError)
DEFAULT_MEMBER_LIMIT = 2**34          # when free memory cannot be found out


class MemberError(GraphFormatError):
    """One member of a session is missing, damaged or of the wrong kind."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _limit() -> int:
    free = available_memory()
    return DEFAULT_MEMBER_LIMIT if free is None else max(free // 2, 2**20)


def read_member(zf: zipfile.ZipFile, name: str, checksums: dict[str, str] | None) -> bytes:
    """The bytes of member ``name``, refused before reading if it would not fit in memory, and
    checked against its sha256 when the manifest lists one."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise MemberError(f"member {name} is missing") from None
    limit = _limit()
    if info.file_size > limit:
        raise MemberError(f"member {name} says it holds {format_bytes(info.file_size)}, more than the "
                          f"{format_bytes(limit)} of memory this can use")
    try:
        data = zf.read(info)
    except ZIP_ERRORS as exc:
        raise MemberError(f"member {name} is damaged ({type(exc).__name__}: {exc})") from None
    if checksums is not None:
        expected = checksums.get(name)
        if expected is None:
            raise MemberError(f"member {name} has no checksum in the manifest")
        if sha256(data) != expected:
            raise MemberError(f"member {name} is damaged (its checksum differs from the one saved)")
    return data


def _read_npy(raw: bytes, where: str) -> np.ndarray:
    f = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    except (ValueError, EOFError, SyntaxError, TypeError) as exc:
        raise MemberError(f"{where}: not a NumPy array ({exc})") from None
    if dtype.hasobject:
        raise MemberError(f"{where}: holds Python objects (refused)")
    count = int(np.prod(shape, dtype=object)) if shape else 1
    if count * dtype.itemsize != len(raw) - f.tell():
        raise MemberError(f"{where}: its header declares {count} values of {dtype}, the data holds "
                          f"{len(raw) - f.tell()} bytes")
    try:
        array = np.frombuffer(raw, dtype=dtype, count=count, offset=f.tell())
        return (array.reshape(shape[::-1]).T if fortran else array.reshape(shape)).copy()
    except ValueError as exc:
        raise MemberError(f"{where}: shape {shape} does not fit its data ({exc})") from None


def load_npz(zf: zipfile.ZipFile, name: str, checksums: dict[str, str] | None) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` member, each header checked against its data before use."""
    data = read_member(zf, name, checksums)
    out: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as inner:
            for info in inner.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                if info.file_size > _limit():
                    raise MemberError(f"{name}/{info.filename} declares {format_bytes(info.file_size)}")
                out[info.filename[:-4]] = _read_npy(inner.read(info), f"{name}/{info.filename}")
    except ZIP_ERRORS as exc:
        raise MemberError(f"member {name} is not a readable array file ({type(exc).__name__}: {exc})") from None
    return out


def b64(text, where: str) -> bytes | None:
    if not text:
        return None
    import base64

    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise MemberError(f"manifest: {where} is not base64 text") from None


# ---- manifest fields -----------------------------------------------------------------------
_TYPE_WORDS = {str: "text", int: "a whole number", bool: "true or false", dict: "an object", list: "a list"}


def field(obj: dict, key: str, kind, where: str, *, default=..., optional: bool = False):
    """``obj[key]`` if it has type ``kind`` (bool is not an int here); ``default`` if absent
    (and given); ``None`` allowed when ``optional``."""
    if key not in obj:
        if default is ...:
            raise MemberError(f"manifest: {where} lacks '{key}'")
        return default
    value = obj[key]
    if value is None and optional:
        return None
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise MemberError(f"manifest: {where}'{key}' should be {_TYPE_WORDS.get(kind, kind.__name__)}, "
                          f"not {value!r:.60}")
    return value


def index_field(obj: dict, key: str, count: int, where: str, *, optional: bool = False) -> int | None:
    """An index into a list of ``count`` items."""
    value = field(obj, key, int, where, optional=optional)
    if value is not None and not 0 <= value < count:
        raise MemberError(f"manifest: {where}'{key}' is {value}, but there are {count} structures")
    return value
