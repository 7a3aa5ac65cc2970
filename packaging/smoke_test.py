"""Smoke test of a built application: does the program that users get actually work?

    .venv/bin/python packaging/smoke_test.py dist/gpu-graph-explorer/gpu-graph-explorer

Runs the program (never the source tree: from a temporary directory, with a fresh numba
cache directory), and checks:

1. ``--version`` prints the version;
2. ``-m kernels --version`` and ``-m kernels run triangles cpu-serial SAMPLE --json``: the
   program acts as the ``graph-kernels`` command line, which is also how it acts as its own
   worker process;
3. ``-m kernels heatmap SWEEP --out h.png`` and ``--out h.svg``: the command line's pictures
   (matplotlib's Agg and SVG canvases and their fonts are in the bundle);
4. ``--self-test`` offscreen: the main window opens the sample graph and runs triangle
   counting on the CPU and on the CUDA simulator through the worker, verified (45);
5. ``install-desktop.sh`` beside the program installs a menu entry that starts it (into a
   temporary ``$XDG_DATA_HOME``);
6. with ``xvfb-run`` installed: the program opens the sample graph in a real X11 window
   (the xcb platform plugin and its libraries) and renders it to a PNG.

Prints one line per check; exit status 0 when all passed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMEOUT_S = 600
# a sweep as graph-kernels writes it, small: two parameters, an invalid cell
TINY_SWEEP = {
    "kind": "sweep", "schema": 1, "family": "spmv", "variant": "gpu-tunable", "target": "sim",
    "input": {"name": "smoke"}, "grid": {"wg": [32, 64], "rows": [1, 64]}, "fixed": {}, "cells": [
        {"params": {"wg": 32, "rows": 1}, "status": "ok", "median_s": 2e-3},
        {"params": {"wg": 32, "rows": 64}, "status": "invalid", "reason": "rows <= wg"},
        {"params": {"wg": 64, "rows": 1}, "status": "ok", "median_s": 1e-3},
        {"params": {"wg": 64, "rows": 64}, "status": "ok", "median_s": 4e-3}],
}


def run(cmd: list[str], cwd: str, env: dict, timeout: float = TIMEOUT_S) -> tuple[int, str, str, float]:
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return 124, out, f"no answer within {timeout:g} s", time.monotonic() - started
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


def tail(text: str, lines: int = 15) -> str:
    return "\n".join("      " + line for line in text.strip().splitlines()[-lines:])


def sample_in_bundle(program: Path) -> Path:
    """The sample graph as the bundle ships it (package data of gge_resources)."""
    return program.parent / "_internal" / "gge_resources" / "graphs" / "karate.mtx"


def smoke_test(program: Path) -> int:
    program = program.resolve()
    if not program.is_file():
        print(f"smoke test: no program at {program} (build it first: make package)", file=sys.stderr)
        return 2
    failures = 0
    with tempfile.TemporaryDirectory(prefix="gge-smoke-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "DISPLAY")}
        env.update(XDG_CACHE_HOME=str(Path(tmp) / "cache"), XDG_CONFIG_HOME=str(Path(tmp) / "config"),
                   XDG_DATA_HOME=str(Path(tmp) / "data"), HOME=tmp, QT_QPA_PLATFORM="offscreen")

        def check(name: str, cmd: list[str], test, timeout: float = TIMEOUT_S, run_env=None) -> None:
            nonlocal failures
            code, out, err, took = run(cmd, tmp, run_env or env, timeout)
            problem = f"exit status {code}" if code != 0 else test(out)
            if problem:
                failures += 1
                print(f"  FAIL  {name} ({took:.1f} s): {problem}\n{tail(out + err)}")
            else:
                print(f"  ok    {name} ({took:.1f} s)")

        print(f"smoke test of {program}")
        check("--version", [str(program), "--version"],
              lambda out: None if out.startswith("gpu-graph-explorer ") else f"unexpected output {out!r}")
        check("-m kernels --version (the program as graph-kernels)", [str(program), "-m", "kernels", "--version"],
              lambda out: None if out.startswith("graph-kernels ") else f"unexpected output {out!r}")

        def triangles(out: str) -> str | None:
            record = json.loads(out)
            if record.get("result", {}).get("triangles") != 45 or not record.get("verified"):
                return f"expected 45 verified triangles, got {record.get('result')} verified={record.get('verified')}"
            return None

        check("-m kernels run triangles cpu-serial karate.mtx --json",
              [str(program), "-m", "kernels", "run", "triangles", "cpu-serial", str(sample_in_bundle(program)),
               "--repeat", "1", "--json"], triangles)
        sweep = Path(tmp) / "sweep.json"
        sweep.write_text(json.dumps(TINY_SWEEP))
        for picture, magic in (("h.png", b"\x89PNG"), ("h.svg", b"<?xml")):
            out_path = Path(tmp) / picture
            check(f"-m kernels heatmap sweep.json --out {picture}",
                  [str(program), "-m", "kernels", "heatmap", str(sweep), "--out", str(out_path)],
                  lambda out, p=out_path, m=magic: None if p.is_file() and p.read_bytes().startswith(m)
                  else "no picture was written")
        check("--self-test (offscreen: sample graph, CPU and simulator kernels through the worker)",
              [str(program), "--self-test"],
              lambda out: None if "self-test passed" in out else "the self-test did not pass")
        cache = Path(tmp) / "cache" / "gpu-graph-explorer" / "numba"
        if any(cache.rglob("*.nbi")):
            print(f"  ok    numba cached compiled kernels in the per-user directory ({cache.relative_to(tmp)})")
        else:
            failures += 1
            print(f"  FAIL  numba wrote no cache in {cache} (NUMBA_CACHE_DIR of the frozen entry point)")

        script = program.parent / "install-desktop.sh"
        data = Path(tmp) / "data"
        entry = data / "applications" / "gpu-graph-explorer.desktop"
        check("install-desktop.sh (menu entry, icons and file types in $XDG_DATA_HOME)", ["sh", str(script)],
              lambda out: None if entry.is_file() and f'Exec="{program}" %F' in entry.read_text()
              and (data / "icons" / "hicolor" / "48x48" / "apps" / "gpu-graph-explorer.png").is_file()
              else "the menu entry does not start this program, or the icons are missing")

        if shutil.which("xvfb-run"):
            shot = Path(tmp) / "window.png"
            x_env = {k: v for k, v in env.items() if k != "QT_QPA_PLATFORM"}
            x_env["QT_QPA_PLATFORM"] = "xcb"
            check("a real X11 window under xvfb-run (xcb platform plugin)",
                  ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", str(program), "-m", "explorer.screenshot",
                   str(shot), "--size", "1200x800"],
                  lambda out: None if shot.is_file() and shot.stat().st_size > 10_000 else "no picture was written",
                  run_env=x_env)
            if shot.is_file() and os.environ.get("GGE_SMOKE_SCREENSHOT"):
                shutil.copy(shot, os.environ["GGE_SMOKE_SCREENSHOT"])
        else:
            print("  skip  a real X11 window: xvfb-run is not installed (apt-get install xvfb)")
    print("smoke test passed" if failures == 0 else f"smoke test FAILED: {failures} check(s)")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(smoke_test(Path(sys.argv[1])))
