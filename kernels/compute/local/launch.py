"""How the worker process is started, and what it trusts: its command, environment,
working directory, import path, and its tie to the parent.

The import path. ``python -m`` puts the current directory first on ``sys.path``, so a
``numpy.py`` in the folder where a user runs ``graph-kernels sweep`` (or starts the GUI) would
run inside the worker. The worker is therefore started

* from a private, empty working directory (created here, removed at exit), and with ``-P``
  (Python >= 3.11, not in a frozen bundle) so that not even that directory is on its path;
* with ``PYTHONPATH`` = the directory the parent's own ``kernels`` package came from (when it is
  not an installed site directory: a source checkout must run the same code in the worker),
  then the user's own ``PYTHONPATH`` entries, made absolute against the parent's directory
  (what the user declared, with the meaning it had there);
* and the directories of the plug-in modules declared in ``GRAPH_KERNELS_PLUGINS``, resolved
  in the parent (where the registry imports them too), passed in :data:`PLUGIN_DIRS_ENV` and
  added by the worker at the *end* of its ``sys.path``: a plug-in is found where the caller
  found it, while installed packages always win over same-named files next to it.

The parent tie. A worker must end with its parent, even one killed by a signal. The worker
runs a watchdog thread that exits when its parent pid changes (the orphan was re-parented),
and on Linux also asks the kernel for ``SIGKILL`` on the parent's death
(``PR_SET_PDEATHSIG``) -- but only when it was started from the parent's main thread: that
signal fires when the *thread* that started the child ends, and the GUI starts workers from
job threads that end after each job.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import site
import sys
import tempfile
import threading
import time
from pathlib import Path

from kernels.measure.targets import Target

PLUGIN_DIRS_ENV = "GRAPH_KERNELS_PLUGIN_DIRS"
PARENT_PID_ENV = "GRAPH_KERNELS_WORKER_PARENT"
PDEATHSIG_ENV = "GRAPH_KERNELS_WORKER_PDEATHSIG"
NICE_ENV = "GRAPH_KERNELS_WORKER_NICE"       # a worker that yields the CPU (compile-ahead processes)
WATCHDOG_INTERVAL_S = 0.5

_neutral_dir: str | None = None
_neutral_lock = threading.Lock()


# ---- parent side --------------------------------------------------------------------------------

def worker_command(target: str | None) -> list[str]:
    cmd = [sys.executable]
    if sys.version_info >= (3, 11) and not getattr(sys, "frozen", False):
        cmd.append("-P")      # no script or current directory on the path (a bundle has none anyway)
    cmd += ["-m", "kernels", "worker"]
    if target:
        cmd += ["--target", target]
    return cmd


def neutral_directory() -> str:
    """A private empty directory (mode 0700) the workers of this process run in."""
    global _neutral_dir
    with _neutral_lock:
        if _neutral_dir is None or not os.path.isdir(_neutral_dir):
            _neutral_dir = tempfile.mkdtemp(prefix="gge-worker-")
            atexit.register(shutil.rmtree, _neutral_dir, True)
        return _neutral_dir


def _site_directories() -> set[str]:
    dirs = set(site.getsitepackages()) if hasattr(site, "getsitepackages") else set()
    with contextlib.suppress(Exception):
        dirs.add(site.getusersitepackages())
    return {os.path.realpath(d) for d in dirs}


def _kernels_root() -> str | None:
    """The directory holding the parent's ``kernels`` package, unless an installed site directory."""
    import kernels

    root = os.path.realpath(str(Path(kernels.__file__).resolve().parent.parent))
    return None if root in _site_directories() else root


def _absolute_entries(value: str, base: str) -> list[str]:
    # empty entries would mean "the current directory": dropped
    return [os.path.join(base, p) for p in value.split(os.pathsep) if p]


def plugin_directories(names: list[str]) -> list[str]:
    """Where the parent finds the top-level packages of the declared plug-in modules."""
    dirs: list[str] = []
    for name in names:
        top = name.split(".")[0]
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue                     # the worker reports the missing plug-in as the parent does
        if spec.submodule_search_locations:
            found = [os.path.dirname(loc) for loc in spec.submodule_search_locations]
        elif spec.has_location and spec.origin:
            found = [os.path.dirname(spec.origin)]
        else:
            found = []                   # built-in or frozen: on the worker's path already
        dirs += [d for d in found if d not in dirs]
    return dirs


def worker_environment(target: str | None, extra_env: dict | None = None) -> dict:
    """The worker's environment: the caller's, with the import path and parent tie set."""
    from kernels.algorithms.registry import PLUGINS_ENV

    env = {**os.environ, **(extra_env or {})}
    base = os.getcwd()
    path = [_kernels_root(), *_absolute_entries(env.get("PYTHONPATH", ""), base)]
    path = [p for i, p in enumerate(path) if p and p not in path[:i]]
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    else:
        env.pop("PYTHONPATH", None)
    plugins = [m.strip() for m in env.get(PLUGINS_ENV, "").split(",") if m.strip()]
    env[PLUGIN_DIRS_ENV] = os.pathsep.join(plugin_directories(plugins))
    env[PARENT_PID_ENV] = str(os.getpid())
    env[PDEATHSIG_ENV] = "1" if threading.current_thread() is threading.main_thread() else "0"
    chosen = Target.of(target)
    if chosen is not None and chosen.simulated:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    elif chosen is not None and chosen.real_gpu:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    return env


# ---- worker side --------------------------------------------------------------------------------

def lower_priority() -> None:
    """Run at the niceness :data:`NICE_ENV` asks for (compile-ahead processes: the measuring
    process beside them gets the CPU first)."""
    raw = os.environ.pop(NICE_ENV, "")
    if raw and hasattr(os, "nice"):
        with contextlib.suppress(OSError, ValueError):
            os.nice(int(raw))


def adopt_plugin_directories() -> None:
    """Add the plug-in directories the parent resolved at the end of ``sys.path``."""
    for d in os.environ.get(PLUGIN_DIRS_ENV, "").split(os.pathsep):
        if d and d not in sys.path:
            sys.path.append(d)


def _ask_kernel_for_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):         # best effort: the watchdog still covers it
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)


def tie_to_parent() -> None:
    """End this process when its parent ends (see the module's docstring)."""
    try:
        parent = int(os.environ.get(PARENT_PID_ENV, ""))
    except ValueError:
        parent = os.getppid()
    if os.environ.get(PDEATHSIG_ENV) == "1":
        _ask_kernel_for_parent_death_signal()
    if sys.platform.startswith("win"):
        return                                   # a Windows parent pid never changes; not covered there

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCHDOG_INTERVAL_S)
        os._exit(0)                              # the parent is gone: nobody reads our answers

    if os.getppid() != parent:                   # it died before we got here
        os._exit(0)
    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()
