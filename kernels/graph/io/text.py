"""Line-numbered reading of text graph files: header lines one by one, the body in big blocks.

Speed and exact error messages pull in opposite directions, so the body is read twice only
when it is broken: each block (~16 MiB, ending at a line boundary) is parsed in bulk by
NumPy's C tokenizer (``np.loadtxt``); only if that fails is the block walked line by line with
the reader's own validator, which finds the first bad line and says what was expected there.
Between blocks the reader reports progress and honours cancellation.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from kernels.errors import GraphFormatError
from kernels.graph.io.context import LoadContext

BLOCK_BYTES = 16 * 1024 * 1024
READ_BYTES = 4 * 1024 * 1024
MAX_HEADER_LINE = 1024 * 1024
# no body line of a graph file is this long (a METIS line of 8 M neighbours is ~64 MiB); a longer
# one is refused as it grows, instead of being gathered whole into memory
MAX_LINE_BYTES = 64 * 1024 * 1024
# share of the progress bar spent reading and parsing; the rest is building the CSR arrays
PARSE_SHARE = 0.9

UTF8_BOM = b"\xef\xbb\xbf"
INTEGER = re.compile(rb"[+-]?\d+\Z")
# integers in graph files are int64; a token is checked by its length before int() sees it: Python
# refuses strings of more than 4,300 digits (a raw ValueError) and converts long ones in quadratic time
INTEGER_LIMIT = "below 2**63"
INT64_DIGITS = 19

# A line validator gets the tokens of one data line and returns None if the line is fine,
# else (reason, expected).
LineValidator = Callable[[list[bytes]], "tuple[str, str] | None"]


@dataclass(frozen=True)
class Block:
    """Whole lines of a file: ``data`` starts at line ``first_line`` (1-based)."""

    data: bytes
    first_line: int

    def lines(self) -> Iterator[tuple[int, bytes]]:
        pieces = self.data.split(b"\n")
        if pieces and pieces[-1] == b"":
            pieces.pop()
        for k, raw in enumerate(pieces):
            yield self.first_line + k, raw.rstrip(b"\r")


class TextReader:
    """Reads a decompressed stream: ``readline()`` for headers, then ``blocks()`` for the body."""

    def __init__(self, stream, ctx: LoadContext, total_bytes: int, *, block_bytes: int = BLOCK_BYTES,
                 max_line: int = MAX_LINE_BYTES):
        self._stream = stream
        self._max_line = max_line
        self._ctx = ctx
        self._total = max(int(total_bytes), 1)
        self._block_bytes = block_bytes
        self._buf = b""
        self._pos = 0
        self._eof = False
        self._unread: tuple[bytes, int] | None = None
        self._started = False
        self.line_no = 0  # number of the last line handed out

    def _fill(self, wanted: int) -> bool:
        """Make at least ``wanted`` unread bytes available (fewer at the end); False if none came."""
        rest = len(self._buf) - self._pos
        if rest >= wanted or self._eof:
            return False
        parts = [self._buf[self._pos:]]
        grew = False
        while rest < wanted:
            self._ctx.check_cancel()
            chunk = self._stream.read(READ_BYTES)
            consumed = getattr(self._stream, "consumed", None)
            if consumed is not None:
                self._ctx.report(PARSE_SHARE * consumed / self._total)
            if not chunk:
                self._eof = True
                break
            parts.append(chunk)
            rest += len(chunk)
            grew = True
        # one join per fill: appending chunk by chunk would copy the buffer again each time
        self._buf = b"".join(parts)
        self._pos = 0
        if not self._started:
            self._started = True
            if self._buf.startswith(UTF8_BOM):  # Windows editors put one before the first line
                self._pos = len(UTF8_BOM)
        return grew

    def readline(self) -> bytes | None:
        """The next line without its line ending, or ``None`` at the end of the file."""
        if self._unread is not None:
            line, self.line_no = self._unread
            self._unread = None
            return line
        while True:
            end = self._buf.find(b"\n", self._pos)
            if end >= 0:
                line = self._buf[self._pos:end]
                self._pos = end + 1
                break
            rest = len(self._buf) - self._pos
            if rest > MAX_HEADER_LINE:
                raise self._ctx.error("a line longer than 1 MiB (is this a binary file?)",
                                      self.line_no + 1, "a text file with short lines")
            if not self._fill(rest + 1):
                if rest == 0:
                    return None
                line = self._buf[self._pos:]
                self._pos = len(self._buf)
                break
        self.line_no += 1
        return line.rstrip(b"\r")

    def unread(self, line: bytes) -> None:
        """Give back the line just read, so that ``blocks()`` starts with it."""
        self._unread = (line, self.line_no)
        self.line_no -= 1

    def blocks(self) -> Iterator[Block]:
        """The rest of the file in blocks of whole lines."""
        if self._unread is not None:
            line, _ = self._unread
            self._unread = None
            self._buf = line + b"\n" + self._buf[self._pos:]
            self._pos = 0
        while True:
            self._fill(self._block_bytes)
            rest = len(self._buf) - self._pos
            if rest == 0:
                return
            if self._eof and rest <= self._block_bytes:
                data = self._buf[self._pos:]
                self._buf, self._pos = b"", 0
            else:
                cut = self._buf.rfind(b"\n", self._pos, self._pos + self._block_bytes)
                while cut < 0:  # a line longer than a block: take it whole, up to MAX_LINE_BYTES
                    cut = self._buf.find(b"\n", self._pos + self._block_bytes)
                    if cut < 0 and len(self._buf) - self._pos > self._max_line:
                        raise self._ctx.error(f"a line longer than {self._max_line // 2**20} MiB "
                                              "(is this a binary file?)", self.line_no + 1,
                                              "a text file with lines of at most that length")
                    if cut < 0 and not self._fill(len(self._buf) - self._pos + READ_BYTES):
                        cut = len(self._buf) - 1
                data = self._buf[self._pos:cut + 1]
                self._pos = cut + 1
            block = Block(data, self.line_no + 1)
            self.line_no += data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
            yield block


def strip_comment(line: bytes, comments: tuple[bytes, ...]) -> bytes:
    for c in comments:
        k = line.find(c)
        if k >= 0:
            line = line[:k]
    return line


def split_tokens(line: bytes, delimiter: bytes | None) -> list[bytes]:
    if delimiter is None:
        return line.split()
    return [t.strip() for t in line.split(delimiter)]


def data_lines(block: Block, comments: tuple[bytes, ...], delimiter: bytes | None
               ) -> Iterator[tuple[int, list[bytes]]]:
    """(line number, tokens) of each line that holds data, as ``np.loadtxt`` sees them."""
    for line_no, raw in block.lines():
        text = strip_comment(raw, comments)
        if not text.strip():
            continue
        yield line_no, split_tokens(text, delimiter)


def line_of_row(block: Block, row: int, comments: tuple[bytes, ...], delimiter: bytes | None = None) -> int:
    """The file line of the ``row``-th data line of a block (0-based row, as parsed)."""
    for k, (line_no, _) in enumerate(data_lines(block, comments, delimiter)):
        if k == row:
            return line_no
    return block.first_line


def parse_block(block: Block, ctx: LoadContext, dtype: np.dtype, validate: LineValidator, *,
                comments: tuple[bytes, ...], delimiter: bytes | None = None,
                usecols: tuple[int, ...] | None = None) -> np.ndarray:
    """Parse a block of numeric lines into a structured array, or raise the exact bad line."""
    # np.loadtxt strips a single comment character in C but several of them in Python, line
    # by line (30x slower): pass only the comment characters this block actually contains
    present = [c.decode("latin-1") for c in comments if c in block.data]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.loadtxt(io.BytesIO(block.data), dtype=dtype, ndmin=1, encoding="latin-1",
                              comments=present if len(present) > 1 else present[0] if present else None,
                              delimiter=None if delimiter is None else delimiter.decode("latin-1"),
                              usecols=usecols, quotechar=None)
    except (ValueError, OverflowError, TypeError, UnicodeError) as exc:
        raise locate_bad_line(block, ctx, validate, comments, delimiter, str(exc)) from None


def locate_bad_line(block: Block, ctx: LoadContext, validate: LineValidator,
                    comments: tuple[bytes, ...], delimiter: bytes | None, detail: str) -> GraphFormatError:
    for line_no, tokens in data_lines(block, comments, delimiter):
        problem = validate(tokens)
        if problem is not None:
            reason, expected = problem
            return ctx.error(reason, line_no, expected)
    last = block.first_line + block.data.count(b"\n")
    return ctx.error(f"unreadable data between lines {block.first_line} and {last} ({detail})")


def show(token: bytes, limit: int = 40) -> str:
    """A token as it can be quoted in a one-line message (no control characters, bounded)."""
    text = token[:limit].decode("latin-1")
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return repr(text + ("..." if len(token) > limit else ""))


def is_integer(token: bytes) -> bool:
    return bool(INTEGER.match(token))


def integer_too_large(token: bytes) -> str | None:
    """Why an integer token does not fit int64, to follow its name in a message ("value 3 (...) is
    too large: ... below 2**63"), or None if it fits; never converts a token longer than an int64."""
    digits = len(token.lstrip(b"+-").lstrip(b"0"))
    if digits > INT64_DIGITS:
        return f"({show(token)}, {digits:,} digits) is too large: integers here lie {INTEGER_LIMIT}"
    if digits == INT64_DIGITS and abs(int(token)) >= 2**63:
        return f"({show(token)}) is too large: integers here lie {INTEGER_LIMIT}"
    return None


def is_number(token: bytes) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return b"_" not in token


def check_line(tokens: list[bytes], kinds: str, *, at_least: bool = False) -> tuple[str, str] | None:
    """Validate tokens against ``kinds`` ('i' integer, 'f' number), e.g. 'iif' for ``u v w``."""
    names = {"i": "an integer", "f": "a number"}
    what = " ".join("INT" if k == "i" else "NUMBER" for k in kinds)
    expected = f"{len(kinds)}{' or more' if at_least else ''} values per line: {what}"
    if len(tokens) < len(kinds) or (not at_least and len(tokens) > len(kinds)):
        return f"found {len(tokens)} value{'s' if len(tokens) != 1 else ''}", expected
    for k, (kind, tok) in enumerate(zip(kinds, tokens, strict=False)):
        ok = is_integer(tok) if kind == "i" else is_number(tok)
        if not ok:
            return f"value {k + 1} is {show(tok)}, not {names[kind]}", expected
        too_large = integer_too_large(tok) if kind == "i" else None
        if too_large:
            return f"value {k + 1} {too_large}", expected
    return None


def header_text(line: bytes, ctx: LoadContext, line_no: int) -> str:
    """Decode a header line, refusing binary data with a clear message."""
    if b"\x00" in line:
        raise ctx.error("binary data where a text header was expected", line_no, "a text file")
    return line.decode("latin-1")
