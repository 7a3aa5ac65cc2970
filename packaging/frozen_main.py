"""Entry point of the frozen application (the PyInstaller bundle's ``gpu-graph-explorer``).

Three things differ from ``python -m explorer`` in a bundle, and are settled here before
anything imports numba:

* numba's cache. Functions compiled with ``cache=True`` are cached next to their source by
  default, and a bundle's folder is often read-only (installed by root, or a mounted image).
  ``NUMBA_CACHE_DIR`` points numba at a per-user cache directory instead (unless the user set
  one). The bundle ships the ``kernels`` sources, which numba needs to locate and key its cache.
* the worker process. The GUI starts kernels in ``[sys.executable, "-m", "kernels", "worker"]``.
  In a bundle ``sys.executable`` is this
  program, not a Python interpreter, so the program itself understands ``-m MODULE ARGS...`` for
  the bundle's own modules and runs them as ``python -m`` would. The same way,
  ``gpu-graph-explorer -m kernels ...`` is the ``graph-kernels`` command line of the bundle.
* ``PYTHONPATH``, which frozen programs ignore, is added at the end of ``sys.path``: plug-in
  algorithm families (``GRAPH_KERNELS_PLUGINS``) are found through it.
* numba-cuda. A pip installation redirects ``numba.cuda`` to the ``numba_cuda`` package through
  a ``.pth`` file; frozen programs do not read ``.pth`` files, so the redirection is installed
  here by importing the same module.

Anything else is the ordinary ``explorer.app.main``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

APP_NAME = "gpu-graph-explorer"
RUNNABLE_PACKAGES = ("kernels", "explorer")      # what ``-m`` may run: the bundle's own code


def user_cache_dir(environ=None, platform: str | None = None, home: Path | None = None) -> Path:
    """The per-user cache directory of the application, by each platform's convention
    (``~/.cache/gpu-graph-explorer`` on Linux, honouring ``XDG_CACHE_HOME``)."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    home = Path.home() if home is None else home
    if platform.startswith("win"):
        base = environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / APP_NAME / "Cache"
    if platform == "darwin":
        return home / "Library" / "Caches" / APP_NAME
    xdg = environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".cache"   # the spec ignores relative paths
    return base / APP_NAME


def configure_environment(environ=None) -> None:
    """Settings the bundle needs before numba is imported (inherited by the worker process)."""
    environ = os.environ if environ is None else environ
    environ.setdefault("NUMBA_CACHE_DIR", str(user_cache_dir(environ) / "numba"))
    # importing it installs the numba.cuda redirection; without numba-cuda the CPU variants still work
    with contextlib.suppress(ImportError):
        import _numba_cuda_redirector  # noqa: F401


def plugin_search_path(path: list[str], environ=None) -> list[str]:
    """``path`` with the entries of ``PYTHONPATH`` added at its end.

    A frozen program ignores ``PYTHONPATH``, but user-written algorithm families
    (``GRAPH_KERNELS_PLUGINS``) are found through it - and the worker client passes the
    user's PYTHONPATH on. Added last, so the bundle's own modules always win."""
    environ = os.environ if environ is None else environ
    extra = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in path]
    return [*path, *extra]


def run_module(argv: list[str]) -> int:
    """``PROGRAM -m MODULE ARGS...``: run one of the bundle's modules as ``python -m`` would."""
    import importlib.util
    import runpy

    if len(argv) < 3:
        print(f"{APP_NAME}: -m needs a module name, e.g. -m kernels --help", file=sys.stderr)
        return 2
    module = argv[2]
    if module.split(".")[0] not in RUNNABLE_PACKAGES:
        print(f"{APP_NAME}: -m {module}: this program runs only its own modules "
              f"({', '.join(RUNNABLE_PACKAGES)}), it is not a Python interpreter", file=sys.stderr)
        return 2
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:
        found = False
    if not found:
        print(f"{APP_NAME}: -m {module}: no such module in this program", file=sys.stderr)
        return 2
    sys.argv = [argv[0], *argv[3:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    configure_environment()
    if getattr(sys, "frozen", False):
        sys.path[:] = plugin_search_path(sys.path)
    if len(argv) >= 2 and argv[1] == "-m":
        return run_module(argv)
    from explorer.app import main as app_main

    return app_main(argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
