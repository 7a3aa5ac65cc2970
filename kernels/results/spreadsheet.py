"""CSV for spreadsheets: text that a spreadsheet would run as a formula is neutralised.

A CSV export is opened in Excel or LibreOffice, which treat a cell starting with ``=``, ``+``,
``-`` or ``@`` (and, in some, a tab or carriage return) as a formula. Result files travel
between machines, so a parameter value, an input name or an error message in them may have
been crafted (``=HYPERLINK(...)``). Such text cells get a leading single quote, the
spreadsheets' own "this is text" mark (the OWASP advice for CSV injection). Numbers are left
alone - a negative time or a negative grid value stays a number - and so is text that reads as
a plain number (``-1.5``) or the lone ``-`` the heatmap writes for an invalid cell.
"""

from __future__ import annotations

import csv

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_plain_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def safe_cell(value):
    """``value`` as a spreadsheet will show it, never as a formula it would run."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if value == "-" or _is_plain_number(value):
        return value
    return "'" + value


class SafeWriter:
    """``csv.writer`` whose rows pass through :func:`safe_cell`."""

    def __init__(self, fh, **kwargs):
        self._writer = csv.writer(fh, **kwargs)

    def writerow(self, row) -> None:
        self._writer.writerow([safe_cell(v) for v in row])
