"""Transparent decompression, recognised by magic bytes rather than by the file name.

A file called ``graph.mtx`` that is really gzip-compressed (browsers do this) reads fine, and so
does ``graph.mtx.gz`` that is not compressed at all. Every decompression failure (garbage,
truncation) becomes a :class:`GraphFormatError` naming the file. Every decompressed byte is
charged to the source's :class:`~kernels.graph.io.budget.ExpansionBudget` when it has one
(``read_graph`` gives it one for the format it reads), so no reader can be made to expand a
small file into gigabytes.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from pathlib import Path

from kernels.errors import GraphFormatError, UnsupportedFormatError
from kernels.graph.io.budget import ExpansionBudget

MAGIC = {
    "gzip": b"\x1f\x8b",
    "bz2": b"BZh",
    "xz": b"\xfd7zXZ\x00",
}
# recognised so that the message can say what the file is, but not read
UNSUPPORTED_MAGIC = {
    "zstd": b"\x28\xb5\x2f\xfd",
    "7z": b"7z\xbc\xaf\x27\x1c",
}
COMPRESSION_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz"}
HEAD_BYTES = 64 * 1024
# reads from disk go through a buffer this big: it is also the step of the progress reports
RAW_BUFFER_BYTES = 1 << 20
# the pre-check decompresses (and counts) compressed files up to this size on disk rather than
# believe what they say about themselves; bounded by the expansion budget, that is well under a second
MEASURE_UP_TO = 32 << 20
TYPICAL_RATIO = 5

_DECOMPRESSION_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)


def compression_of_bytes(first: bytes) -> str | None:
    for name, magic in MAGIC.items():
        if first.startswith(magic):
            return name
    return None


def strip_compression_suffix(name: str) -> str:
    lower = name.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def format_suffix(path: str | Path) -> str:
    """The extension that names the format (``.mtx`` for ``a.mtx.gz``), lower case, or ``''``."""
    return Path(strip_compression_suffix(Path(path).name)).suffix.lower()


def graph_name(path: str | Path) -> str:
    """The file's stem without compression and format extensions (``karate.mtx.gz`` → ``karate``)."""
    base = strip_compression_suffix(Path(path).name)
    stem = Path(base).stem if Path(base).suffix else base
    return stem or Path(path).name


class _CountingFile(io.RawIOBase):
    """Counts the bytes taken from the file on disk, so progress works through a decompressor."""

    def __init__(self, fh):
        self._fh = fh
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._fh.readinto(buffer)
        self.consumed += n or 0
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


class _SafeReader:
    """Reads decompressed bytes, charges them to a budget, and turns every decompression
    failure into a format error."""

    def __init__(self, stream, raw: _CountingFile, path: str, compression: str | None,
                 budget: ExpansionBudget | None = None):
        self._stream = stream
        self._raw = raw
        self._path = path
        self._compression = compression
        self._budget = budget

    @property
    def consumed(self) -> int:
        """Bytes of the file on disk read so far (compressed bytes for a compressed file)."""
        return self._raw.consumed

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:  # "everything" is read in steps, so that the budget is checked between them
            parts = []
            while chunk := self.read(RAW_BUFFER_BYTES):
                parts.append(chunk)
            return b"".join(parts)
        try:
            data = self._stream.read(n)
        except _DECOMPRESSION_ERRORS as exc:
            what = f"{self._compression} data" if self._compression else "the file"
            raise GraphFormatError(f"could not read {what}: {exc}", self._path,
                                   expected=f"a complete, valid {self._compression} stream"
                                   if self._compression else None) from None
        if self._budget is not None:
            self._budget.charge(len(data))
        return data

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class GraphSource:
    """A graph file on disk: its compression, its size, and its decompressed content on demand."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.display = str(path)
        try:
            if self.path.is_dir():
                raise GraphFormatError("is a directory, not a graph file", self.display)
            self.file_bytes = os.path.getsize(self.path)
            with open(self.path, "rb") as fh:
                first = fh.read(8)
        except FileNotFoundError:
            raise GraphFormatError("no such file", self.display) from None
        except OSError as exc:
            raise GraphFormatError(f"cannot open the file: {exc.strerror or exc}", self.display) from None
        for name, magic in UNSUPPORTED_MAGIC.items():
            if first.startswith(magic):
                raise UnsupportedFormatError(f"{name}-compressed files are not read; decompress it first",
                                             self.display, expected="plain, gzip, bz2 or xz data")
        self.compression = compression_of_bytes(first)
        self.suffix = format_suffix(self.path)
        self._head: bytes | None = None
        self._head_asked = 0
        self.budget: ExpansionBudget | None = None

    def limit_expansion(self, budget: ExpansionBudget | None) -> None:
        """Charge every later read of the content to ``budget`` (None: no limit)."""
        self.budget = budget

    def open(self, *, charged: bool = True) -> _SafeReader:
        """A fresh reader of the decompressed content (close it, or use ``with``); its bytes are
        charged to the source's budget unless ``charged`` is False (for short peeks)."""
        raw = _CountingFile(open(self.path, "rb"))  # noqa: SIM115 - closed by _SafeReader
        buffered = io.BufferedReader(raw, buffer_size=RAW_BUFFER_BYTES)
        if self.compression == "gzip":
            stream = gzip.GzipFile(fileobj=buffered, mode="rb")
        elif self.compression == "bz2":
            stream = bz2.BZ2File(buffered, mode="rb")
        elif self.compression == "xz":
            stream = lzma.LZMAFile(buffered, mode="rb")  # noqa: SIM115
        else:
            stream = buffered
        return _SafeReader(stream, raw, self.display, self.compression, self.budget if charged else None)

    def head(self, n: int = HEAD_BYTES) -> bytes:
        """The first ``n`` decompressed bytes (what the format sniffers look at)."""
        if self._head is None or (len(self._head) < n and len(self._head) == self._head_asked):
            with self.open(charged=False) as r:
                self._head = _read_exactly(r, n)
            self._head_asked = n
        return self._head[:n]

    def read_all(self, ctx=None) -> bytes:
        """The whole decompressed content, in chunks so that progress and cancel work."""
        parts = []
        with self.open() as r:
            while True:
                if ctx is not None:
                    ctx.check_cancel()
                chunk = r.read(1 << 22)
                if not chunk:
                    break
                parts.append(chunk)
                if ctx is not None and self.file_bytes:
                    ctx.report(0.5 * r.consumed / self.file_bytes)
        return b"".join(parts)

    def uncompressed_size(self, budget: ExpansionBudget | None = None) -> tuple[int, bool]:
        """(bytes, exact). A compressed file up to ``MEASURE_UP_TO`` on disk is decompressed and
        counted (charged to ``budget``, which refuses a bomb); a larger one gets a guess: gzip's
        trailer is only a hint (anyone can write it, and it holds the size modulo 2**32)."""
        if self.compression is None:
            return self.file_bytes, True
        if self.file_bytes <= MEASURE_UP_TO:
            return self.measure(budget), True
        guess = self.file_bytes * TYPICAL_RATIO  # text graphs compress about 5 : 1
        if self.compression == "gzip" and self.file_bytes >= 18:
            with open(self.path, "rb") as fh:
                fh.seek(-4, os.SEEK_END)
                isize = int.from_bytes(fh.read(4), "little")
            return max(isize, guess), False
        return guess, False

    def measure(self, budget: ExpansionBudget | None = None) -> int:
        """The decompressed size, counted by decompressing (nothing is kept)."""
        total = 0
        with self.open(charged=False) as r:
            while chunk := r.read(RAW_BUFFER_BYTES):
                total += len(chunk)
                if budget is not None:
                    budget.charge(len(chunk))
        return total


def _read_exactly(r, n: int) -> bytes:
    parts, have = [], 0
    while have < n:
        chunk = r.read(n - have)
        if not chunk:
            break
        parts.append(chunk)
        have += len(chunk)
    return b"".join(parts)
