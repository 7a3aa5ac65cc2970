"""What the user asked the compute side to do: plain data (Qt-free), checked before it is sent.

A request carries the graph snapshot itself (a :class:`~kernels.graph.csr.CSRGraph`, immutable)
and the document's content key, so a job keeps running on exactly the graph the user saw when
pressing Run, whatever is edited meanwhile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from kernels.graph.csr import CSRGraph

DEFAULT_TIME_LIMIT_S = 600.0


@dataclass(frozen=True)
class BatchRequest:
    """A batch of edge updates applied on the device pages of a worker's replica of a document.
    ``draw()`` returns ``(batch, text)`` (called on the task's thread: drawing or reading a large
    batch must not hold the GUI): the ``apply_updates`` keywords (``insert``, ``delete``,
    ``reweight``) and the batch in words (the undo step's name). ``revision`` is the number the
    document takes when it replays the result (its current one plus one)."""

    draw: object
    target: str
    live_source: object
    live_key: str
    document_name: str
    revision: int

    @property
    def title(self) -> str:
        return "batch on the GPU"

    def describe(self) -> str:
        return f"a batch on {self.document_name}'s device pages ({self.target})"


@dataclass(frozen=True)
class RunRequest:
    """One run of ``family/variant`` with resolved ``params``."""

    graph: CSRGraph
    graph_key: str                  # changes whenever the graph's content changes
    graph_slot: str                 # one per open graph: the worker keeps one copy per slot
    family: str
    variant: str
    params: dict
    target: str
    repeat: int = 5
    warmup: int = 1
    time_limit: float = DEFAULT_TIME_LIMIT_S
    launch: str = "auto"            # timed launches: auto, graph (CUDA graph replays) or direct
    # a variant that runs on the live slotted pages: the document's edit journal (a
    # DocumentSource) and its key; the worker keeps a replica and gets only what it lacks
    live_source: object = None
    live_key: str = ""

    @property
    def title(self) -> str:
        return f"{self.family}/{self.variant}"

    @property
    def on_live_pages(self) -> bool:
        return self.live_source is not None

    @property
    def graph_name(self) -> str:
        return (self.graph.name if self.graph is not None else "") or "the graph"

    def describe(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.title} ({params or 'no parameters'}) on {self.graph_name}, {self.target}"


@dataclass(frozen=True)
class SweepRequest:
    """Every combination of ``grid`` (one or two swept parameters), others ``fixed``."""

    graph: CSRGraph
    graph_key: str
    family: str
    variant: str
    grid: dict                      # name -> list of typed values
    fixed: dict = field(default_factory=dict)
    target: str = "sim"
    repeat: int = 3
    warmup: int = 1
    time_limit: float = DEFAULT_TIME_LIMIT_S
    launch: str = "auto"
    # the sweep file each finished cell is appended to ("": none), so a killed GUI keeps them
    out: str = ""
    # continue ``out`` (Resume Sweep): only the cells it lacks run; ``resume_from`` is the file as
    # read when Resume was pressed (its cells are drawn at once, its strategy is kept)
    resume: bool = False
    resume_from: dict | None = field(default=None, compare=False)

    @property
    def title(self) -> str:
        return f"{'resumed ' if self.resume else ''}sweep {self.family}/{self.variant}"

    @property
    def total_cells(self) -> int:
        return math.prod(len(v) for v in self.grid.values())

    @property
    def graph_name(self) -> str:
        return (self.graph.name if self.graph is not None else "") or "the graph"

    def describe(self) -> str:
        axes = " × ".join(f"{n} ({len(v)})" for n, v in self.grid.items())
        if self.resume:
            return (f"resume of {self.out}: the missing configurations of {self.family}/{self.variant} over {axes} "
                    f"on {self.graph_name}, {self.target}")
        return f"sweep of {self.family}/{self.variant} over {axes} on {self.graph_name}, {self.target}"

    def empty_sweep(self) -> dict:
        """The sweep as :func:`kernels.compute.sweep.run_sweep` will return it, with no cell yet: the
        Results dock draws this and fills it in as cells arrive."""
        from kernels.results.records import SweepHeader, input_description

        header = SweepHeader(family=self.family, variant=self.variant, grid=self.grid,
                             input=input_description(self.graph), target=self.target, fixed=dict(self.fixed),
                             repeat=self.repeat, warmup=self.warmup, launch=self.launch,
                             time_limit=self.time_limit, total_cells=self.total_cells)
        known = list((self.resume_from or {}).get("cells", [])) if self.resume else []
        return {**header.to_json(), "cells": known, "cancelled": False, "live": True}

    def strategy(self):
        """How the cells are chosen: the resumed file's strategy (a resume must keep it), else the grid."""
        from kernels.results.records import Strategy

        return Strategy.from_json((self.resume_from or {}).get("strategy") if self.resume else None)


def new_sweep_path(directory, family: str, variant: str, graph_name: str, now=None) -> Path:
    """A new file for a sweep under ``directory``/sweeps: ``<family>-<variant>-<graph>-<time>.json``,
    never an existing one (two sweeps started in the same second get ``-2``, ``-3``…)."""
    import datetime as _dt
    import re

    now = now or _dt.datetime.now()

    def safe(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "graph"
    folder = Path(directory) / "sweeps"
    stem = f"{safe(family)}-{safe(variant)}-{safe(graph_name)}-{now.strftime('%Y%m%d-%H%M%S')}"
    path, n = folder / f"{stem}.json", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.json"
    return path
