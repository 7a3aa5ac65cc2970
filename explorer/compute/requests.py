"""What the user asked the compute side to do: plain data, checked before it is sent.

A request carries the graph snapshot itself (a :class:`~kernels.graph.csr.CSRGraph`, immutable)
and the document's content key, so a job keeps running on exactly the graph the user saw when
pressing Run, whatever is edited meanwhile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kernels.graph.csr import CSRGraph

DEFAULT_TIME_LIMIT_S = 600.0


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

    @property
    def title(self) -> str:
        return f"sweep {self.family}/{self.variant}"

    @property
    def total_cells(self) -> int:
        return math.prod(len(v) for v in self.grid.values())

    @property
    def graph_name(self) -> str:
        return (self.graph.name if self.graph is not None else "") or "the graph"

    def describe(self) -> str:
        axes = " × ".join(f"{n} ({len(v)})" for n, v in self.grid.items())
        return f"sweep of {self.family}/{self.variant} over {axes} on {self.graph_name}, {self.target}"

    def empty_sweep(self) -> dict:
        """The sweep as :func:`kernels.compute.sweep.run_sweep` will return it, with no cell yet: the
        Results dock draws this and fills it in as cells arrive."""
        from kernels.results.records import SweepHeader, input_description

        header = SweepHeader(family=self.family, variant=self.variant, grid=self.grid,
                             input=input_description(self.graph), target=self.target, fixed=dict(self.fixed),
                             repeat=self.repeat, warmup=self.warmup, time_limit=self.time_limit,
                             total_cells=self.total_cells)
        return {**header.to_json(), "cells": [], "cancelled": False, "live": True}
