"""What the window remembers between runs (QSettings): geometry, dock layout, recent files.

Tests and ``--screenshot`` runs pass their own ini file so that they never read or change
the user's real settings.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths

ORGANIZATION = "gpu-graph-explorer"
APPLICATION = "GPU Graph Explorer"
MAX_RECENT = 10

_GEOMETRY = "window/geometry"
_STATE = "window/state"
_RECENT = "files/recent"
_LAST_DIR = "files/last_dir"
_PAGE_SIZE = "structure/default_page_size"
_SIM_ASK = "run/simulator_ask_above_s"
_CLUSTER = "cluster/"          # address, tls_ca, tls_cert, tls_key
DEFAULT_SIM_ASK_S = 60.0


class AppSettings:
    """Typed access to the few values the application keeps."""

    def __init__(self, path: str | os.PathLike | None = None):
        if path is None:
            self._qs = QSettings(ORGANIZATION, APPLICATION)
            location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
            self._data_dir = Path(location) if location else Path.home() / ".gpu-graph-explorer"
        else:
            self._qs = QSettings(str(path), QSettings.Format.IniFormat)
            self._data_dir = Path(path).parent

    def data_directory(self) -> Path:
        """Where the application keeps its own files (the autosaved session)."""
        self._data_dir.mkdir(parents=True, exist_ok=True)
        return self._data_dir

    def autosave_path(self) -> Path:
        """The session written when the window closes with unsaved edits."""
        return self.data_directory() / "autosave.ggesession"

    @classmethod
    def ephemeral(cls, directory: str | os.PathLike) -> AppSettings:
        """Settings in a throw-away ini file (tests, screenshots)."""
        return cls(Path(directory) / "gpu-graph-explorer.ini")

    # ---- window layout --------------------------------------------------------------
    def window_geometry(self) -> QByteArray | None:
        value = self._qs.value(_GEOMETRY)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def window_state(self) -> QByteArray | None:
        value = self._qs.value(_STATE)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def save_window(self, geometry: QByteArray, state: QByteArray) -> None:
        self._qs.setValue(_GEOMETRY, geometry)
        self._qs.setValue(_STATE, state)
        self._qs.sync()

    # ---- recent files ---------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self._qs.value(_RECENT, [])
        if isinstance(value, str):      # QSettings returns a lone string for a one-item list
            value = [value]
        return [str(v) for v in (value or []) if v]

    def add_recent_file(self, path: str | os.PathLike) -> list[str]:
        path = str(Path(path).resolve())
        files = [path] + [p for p in self.recent_files() if p != path]
        files = files[:MAX_RECENT]
        self._qs.setValue(_RECENT, files)
        self._qs.setValue(_LAST_DIR, str(Path(path).parent))
        self._qs.sync()
        return files

    def clear_recent_files(self) -> None:
        self._qs.setValue(_RECENT, [])
        self._qs.sync()

    def last_directory(self) -> str:
        return str(self._qs.value(_LAST_DIR, str(Path.home())))

    def set_last_directory(self, directory: str | os.PathLike) -> None:
        self._qs.setValue(_LAST_DIR, str(directory))
        self._qs.sync()

    # ---- structure ------------------------------------------------------------------
    def default_page_size(self, fallback: int = 0) -> int:
        """Page size for newly opened graphs (0: chosen by graph size)."""
        try:
            return int(self._qs.value(_PAGE_SIZE, fallback))
        except (TypeError, ValueError):
            return fallback

    def set_default_page_size(self, size: int) -> None:
        self._qs.setValue(_PAGE_SIZE, int(size))
        self._qs.sync()

    # ---- running -------------------------------------------------------------------
    def simulator_ask_above(self) -> float:
        """Seconds of estimated simulator time above which a run or sweep asks first."""
        try:
            return float(self._qs.value(_SIM_ASK, DEFAULT_SIM_ASK_S))
        except (TypeError, ValueError):
            return DEFAULT_SIM_ASK_S

    def set_simulator_ask_above(self, seconds: float) -> None:
        self._qs.setValue(_SIM_ASK, float(seconds))
        self._qs.sync()

    # ---- cluster -------------------------------------------------------------------
    def cluster(self) -> dict:
        """The last cluster connected to: address and TLS file paths (empty strings when unset)."""
        out = {}
        for key in ("address", "tls_ca", "tls_cert", "tls_key"):
            value = self._qs.value(_CLUSTER + key, "")
            out[key] = value if isinstance(value, str) else ""
        return out

    def set_cluster(self, address: str, tls_ca: str = "", tls_cert: str = "", tls_key: str = "") -> None:
        for key, value in (("address", address), ("tls_ca", tls_ca), ("tls_cert", tls_cert), ("tls_key", tls_key)):
            self._qs.setValue(_CLUSTER + key, value or "")
        self._qs.sync()
