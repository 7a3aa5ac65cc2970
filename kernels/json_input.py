"""JSON from files a user opens, with every integer bounded by its length before it is converted.

Python's ``json`` turns an integer of any length into an ``int``, and ``int()`` refuses a string of
more than 4,300 digits with a raw ``ValueError`` (converting a long one also takes quadratic time).
The JSON files the project reads — run records, sweeps, Kernel Tuner caches, session manifests —
hold counts, sizes, seeds, times and parameter values: none has an integer of more than a few
dozen digits. So an integer longer than :data:`MAX_INTEGER_DIGITS` is refused by its length, as
:class:`IntegerTooLong` (a ``ValueError``, so that callers which refuse any malformed JSON keep
refusing it), and each caller turns it into its one-line refusal naming the file; see
:func:`describe`. The interpreter's own limit is never raised.
"""

from __future__ import annotations

import json

MAX_INTEGER_DIGITS = 100


class IntegerTooLong(ValueError):
    """A JSON integer of more than :data:`MAX_INTEGER_DIGITS` digits, and where it is."""

    def __init__(self, digits: int, line: int, column: int):
        self.digits = digits
        self.line = line
        self.column = column
        super().__init__(describe(self))


class _Refused(Exception):
    """Raised inside the parser's hook: carries the token, located once parsing has stopped."""

    def __init__(self, token: str):
        super().__init__(token)
        self.token = token


def _bounded_int(token: str) -> int:
    if len(token) > MAX_INTEGER_DIGITS and len(token.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _Refused(token)
    return int(token)


def loads(text: str | bytes):
    """``json.loads`` that refuses an integer of more than :data:`MAX_INTEGER_DIGITS` digits with
    :class:`IntegerTooLong`; every other failure is ``json``'s own (``JSONDecodeError``,
    ``RecursionError``)."""
    try:
        return json.loads(text, parse_int=_bounded_int)
    except _Refused as refused:
        raise _located(text, refused.token) from None


def _located(text: str | bytes, token: str) -> IntegerTooLong:
    # the hook is not told where it is: the first place the digits occur is where the parser met
    # them (an earlier occurrence, inside a string, would be as long, so as good a place to name)
    needle = token if isinstance(text, str) else token.encode()
    at = max(text.find(needle), 0)
    newline = "\n" if isinstance(text, str) else b"\n"
    line = text.count(newline, 0, at) + 1
    column = at - (text.rfind(newline, 0, at) + 1) + 1
    return IntegerTooLong(len(token.lstrip("-")), line, column)


def describe(exc: IntegerTooLong, *, with_line: bool = True) -> str:
    """The refusal in words: ``an integer of 5,000 digits at line 3, column 12; at most 100 digits
    are read)``; ``with_line=False`` for a caller that names the line itself (JSON lines)."""
    where = f"line {exc.line}, column {exc.column}" if with_line else f"column {exc.column}"
    return f"an integer of {exc.digits:,} digits at {where}; at most {MAX_INTEGER_DIGITS} digits are read"
