"""How many decompressed bytes one read may produce, counted as they stream.

A compressed file says nothing trustworthy about its size (gzip's trailer and a zip member's
declared size are four bytes anyone can write), and a 1 MB file can expand a thousandfold
(gzip, deflate) or far more (bz2, xz). So every byte a decompressor produces is charged to an
:class:`ExpansionBudget`, and the read stops with a one-line :class:`FileTooLargeError` (a
``GraphFormatError`` and a ``ResourceLimitError``) the moment the budget is passed, before the
memory is spent.

The budget is a memory figure turned into bytes with the reader's *memory per decompressed
byte* (``FormatSpec.memory_per_byte``, measured on files of minimal lines, where a byte of text
costs the most: see docs/formats.md, "Bounds"). Two limits, the smaller wins:

* the promise: reading a file may use at most ``MEMORY_PER_FILE_BYTE`` times its size on disk,
  and any file at least ``MEMORY_FLOOR`` (so a file under 1 MiB never costs more than 1 GiB);
* the machine: where the size cannot be known before reading (compressed files and zip
  members), at most ``headroom`` of the memory available when the read starts. A plain file's
  size is known up front, and the pre-check (``check_fits_memory``) compares the estimate from
  its header or its size with the available memory instead.
"""

from __future__ import annotations

from kernels.graph.io.context import FileTooLargeError
from kernels.memory import format_bytes

MEMORY_FLOOR = 1 << 30
MEMORY_PER_FILE_BYTE = 1024
DEFAULT_HEADROOM = 0.8


def memory_allowance(file_bytes: int) -> int:
    """The most memory reading a file of this size on disk may use, whatever the machine."""
    return max(MEMORY_FLOOR, MEMORY_PER_FILE_BYTE * int(file_bytes))


class ExpansionBudget:
    """Decompressed bytes a read may still produce; :meth:`charge` refuses past the limit."""

    def __init__(self, path: str, file_bytes: int, memory_per_byte: float, *, format_name: str = "",
                 available: int | None = None, headroom: float = DEFAULT_HEADROOM):
        self.path = str(path)
        self.file_bytes = int(file_bytes)
        self.memory_per_byte = float(memory_per_byte)
        self.format_name = format_name
        self.allowance = memory_allowance(file_bytes)
        self.available = available
        self.headroom = headroom
        by_promise = int(self.allowance / self.memory_per_byte)
        by_machine = None if available is None else int(headroom * available / self.memory_per_byte)
        self.limited_by_machine = by_machine is not None and by_machine < by_promise
        self.limit = by_machine if self.limited_by_machine else by_promise
        self.used = 0

    def charge(self, nbytes: int) -> None:
        """Count ``nbytes`` more decompressed bytes; raise as soon as the total passes the limit."""
        self.used += int(nbytes)
        if self.used > self.limit:
            raise self.refusal()

    def refusal(self) -> FileTooLargeError:
        needs = format_bytes(self.headroom * self.available if self.limited_by_machine else self.allowance)
        what = f" as {self.format_name}" if self.format_name else ""
        if self.limited_by_machine:
            why = f"but only {format_bytes(self.available)} of memory is available"
        else:
            why = f"more than a file of {format_bytes(self.file_bytes)} may use (is it a decompression bomb?)"
        return FileTooLargeError(f"expands to more than {format_bytes(self.limit)} when decompressed, and "
                                 f"reading it{what} would need more than {needs} of memory: {why}", self.path)


def size_unknown_before_reading(source, spec) -> bool:
    """Whether the machine's memory must be checked as the bytes stream: the decompressed size of
    a compressed file or of zip members cannot be trusted before reading, unless the reader is
    bounded by a header that the pre-check has already judged."""
    return (source.compression is not None or spec.expands) and not spec.bounded_by_header


def budget_for(source, spec, available: int | None, headroom: float = DEFAULT_HEADROOM) -> ExpansionBudget:
    """The budget for reading ``source`` (a ``GraphSource``) as ``spec`` (a ``FormatSpec``);
    ``available`` counts only where :func:`size_unknown_before_reading`."""
    return ExpansionBudget(source.display, source.file_bytes, spec.memory_per_byte, format_name=spec.name,
                           available=available if size_unknown_before_reading(source, spec) else None,
                           headroom=headroom)
