"""The sample graphs shipped with the package (``resources/graphs``), found through
``importlib.resources`` so that source checkouts, wheels and frozen bundles all work."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DEFAULT_SAMPLE = "karate.mtx"


def sample_names() -> list[str]:
    root = resources.files("gge_resources") / "graphs"
    return sorted(p.name for p in root.iterdir() if p.is_file() and not p.name.startswith("_"))


def sample_path(name: str = DEFAULT_SAMPLE) -> Path:
    """A real filesystem path to a bundled sample graph."""
    ref = resources.files("gge_resources") / "graphs" / name
    if not ref.is_file():
        raise FileNotFoundError(f"no bundled sample graph named {name!r}; have {sample_names()}")
    return Path(str(ref))
