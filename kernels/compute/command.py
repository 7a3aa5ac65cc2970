"""A whole ``graph-kernels`` command run in a child process, for experiments that are more than
one job (the dynamic-graph experiment): the graph goes to a temporary ``.npz`` file, the command
writes its JSON result to a file, a time limit kills it. Used by the Dask task
:func:`kernels.compute.dask.tasks.run_command_job` on a worker and by the local backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from kernels.errors import GraphKernelsError


class CommandFailed(GraphKernelsError):
    """The command exited with an error, died or ran past its time limit."""


def run_command_here(graph, command: list[str], result_option: str, time_limit: float | None = None,
                     env: dict | None = None) -> dict:
    """``python -m kernels COMMAND GRAPH.npz ARGS... RESULT_OPTION FILE``; returns the JSON in FILE."""
    from kernels.graph.io import write_graph

    with tempfile.TemporaryDirectory(prefix="graph-kernels-") as tmp:
        source = Path(tmp) / "input.npz"
        write_graph(graph, str(source))
        result = Path(tmp) / "result.json"
        argv = [sys.executable, "-m", "kernels", command[0], str(source), *command[1:], result_option, str(result)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=time_limit,
                                  env={**os.environ, **(env or {})})
        except subprocess.TimeoutExpired:
            raise CommandFailed(f"'{command[0]}' ran past its time limit of {time_limit:g} s and was stopped") from None
        if proc.returncode not in (0, 3) or not result.exists():   # 3: ran, but a verification failed
            last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            raise CommandFailed(f"'{command[0]}' failed (exit status {proc.returncode}): {last}")
        return json.loads(result.read_text(encoding="utf-8"))
