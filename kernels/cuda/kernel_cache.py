"""Compiled CUDA kernels kept on disk, shared by every process of a host.

Compiling one specialised kernel costs numba 0.1-0.7 s (typing, lowering, NVVM, linking) against
0.02-1 ms of kernel time, so a sweep waits for the compiler unless what was compiled once is
kept. numba-cuda's dispatcher looks for a compiled kernel in its ``_cache`` before compiling
and stores what it compiled there (the hook behind ``cuda.jit(cache=True)``);
:func:`kernels.cuda.jit.jit` installs a :class:`KernelDiskCache` in that place. numba's own
file cache keys a kernel by its own source file alone; a kernel here depends on device
functions and switches in other modules, so this cache keys an entry by everything that
changes the machine code (:func:`kernel_key`):

* the kernel's code, its closure (the compile-time parameters a factory closed over, device
  functions by their own code and closure, recursively) and the values of the plain globals it
  reads (compile-time switches a script may set);
* the source files of its module and of every ``kernels`` module that one imports, transitively;
* the signature and the ``cuda.jit`` options;
* the device's compute capability, the driver version, numba's and numba-cuda's versions.

An entry is one file, ``<key>.kernel``: a magic line, the SHA-256 of the payload, the payload
(the pickled state numba-cuda itself serialises a kernel to: PTX and cubin included). It is
written beside its place and renamed into it, so processes writing one entry at once leave it
whole; a file that is truncated, damaged or does not unpickle is removed and compiled again.
The cache has a size limit (:data:`DEFAULT_LIMIT_BYTES`, ``GRAPH_KERNELS_KERNEL_CACHE_LIMIT``):
past it the least recently used entries go. ``GRAPH_KERNELS_KERNEL_CACHE`` names the folder,
or ``off``; ``graph-kernels cache info|clear`` shows and empties it.

A variant's ``compile`` stage compiles all its kernels (those numba compiles at their first
launch by a launch on a tiny input of the same types), so a compile-ahead process
(:mod:`kernels.compute.precompile`) that runs a cell up to that stage leaves every kernel of the
cell here for the measuring process.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.util
import logging
import os
import pickle
import tempfile
import threading
import time
import types as pytypes
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

CACHE_ENV = "GRAPH_KERNELS_KERNEL_CACHE"
LIMIT_ENV = "GRAPH_KERNELS_KERNEL_CACHE_LIMIT"
DEFAULT_LIMIT_BYTES = 2 << 30
FORMAT = 1                       # of the entry files and of the key; a change orphans old entries
MAGIC = b"gpu-graph-explorer kernel %d\n" % FORMAT
SUFFIX = ".kernel"
EVICT_EVERY = 16                 # puts between two checks of the size limit


# ---- where, and how much -------------------------------------------------------------------------

def cache_dir() -> Path | None:
    """The cache's folder, or ``None`` when switched off (``GRAPH_KERNELS_KERNEL_CACHE=off``)."""
    value = os.environ.get(CACHE_ENV, "").strip()
    if value.lower() in ("off", "0", "no", "false"):
        return None
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpu-graph-explorer" / "kernels"


def size_limit() -> int:
    """``GRAPH_KERNELS_KERNEL_CACHE_LIMIT`` in bytes (``500M``, ``2G``...), else the default."""
    raw = os.environ.get(LIMIT_ENV, "").strip().upper()
    if not raw:
        return DEFAULT_LIMIT_BYTES
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(raw[-1:], 1)
    try:
        return max(0, int(float(raw.rstrip("KMGB") or 0) * scale))
    except ValueError:
        logger.warning("%s=%r is not a size (e.g. 500M, 2G): using %d bytes", LIMIT_ENV, raw, DEFAULT_LIMIT_BYTES)
        return DEFAULT_LIMIT_BYTES


# ---- the store: entries as files ----------------------------------------------------------------

class Store:
    """Entries by key in one folder (``entries/<2 hex>/<key>.kernel``); safe for many processes."""

    def __init__(self, root: Path, limit: int | None = None):
        self.root = Path(root)
        self.limit = size_limit() if limit is None else limit
        self._puts = 0

    def path(self, key: str) -> Path:
        return self.root / "entries" / key[:2] / f"{key}{SUFFIX}"

    def get(self, key: str) -> bytes | None:
        """The payload stored under ``key``, or ``None`` (missing, or damaged: then removed)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        payload = _unwrap(data)
        if payload is None:
            logger.info("kernel cache: %s is damaged (truncated or altered): removed, compiling again", path.name)
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)                     # recently used: evicted last
        return payload

    def put(self, key: str, payload: bytes) -> None:
        """Store ``payload`` under ``key``: written beside its place, then renamed into it."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_wrap(payload))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._puts += 1
        if self._puts % EVICT_EVERY == 1:
            self.evict()

    def entries(self) -> list[os.DirEntry]:
        out = []
        base = self.root / "entries"
        if not base.is_dir():
            return out
        for sub in os.scandir(base):
            if sub.is_dir():
                out.extend(e for e in os.scandir(sub.path) if e.name.endswith(SUFFIX) and e.is_file())
        return out

    def evict(self) -> int:
        """Remove the least recently used entries while the store is above its limit (down to
        90 % of it); the number removed."""
        entries = []
        for e in self.entries():
            with contextlib.suppress(OSError):
                st = e.stat()
                entries.append((st.st_mtime, st.st_size, e.path))
        total = sum(size for _, size, _ in entries)
        if total <= self.limit:
            return 0
        removed = 0
        for _, size, path in sorted(entries):
            if total <= 0.9 * self.limit:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size
                removed += 1
        return removed

    def info(self) -> dict:
        entries = self.entries()
        size = 0
        for e in entries:
            with contextlib.suppress(OSError):
                size += e.stat().st_size
        return {"path": str(self.root), "entries": len(entries), "bytes": size, "limit_bytes": self.limit}

    def clear(self) -> int:
        """Remove every entry; the number removed."""
        removed = 0
        for e in self.entries():
            with contextlib.suppress(OSError):
                os.unlink(e.path)
                removed += 1
        return removed


def _wrap(payload: bytes) -> bytes:
    return MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def _unwrap(data: bytes) -> bytes | None:
    if not data.startswith(MAGIC):
        return None
    head = len(MAGIC)
    digest, newline, payload = data[head:head + 64], data[head + 64:head + 65], data[head + 65:]
    if newline != b"\n" or hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    return payload


def default_store() -> Store | None:
    root = cache_dir()
    return None if root is None else _store_at(str(root))


@functools.lru_cache(maxsize=4)
def _store_at(root: str) -> Store:
    return Store(Path(root))


# ---- the key: everything that changes the machine code ------------------------------------------

class Uncacheable(Exception):
    """A kernel whose inputs cannot be told apart reliably (an unknown object in its closure)."""


_SIMPLE = (int, float, complex, bool, str, bytes, type(None))


def _module_file(module_name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(".py") else None


@functools.lru_cache(maxsize=1024)
def _kernels_imports(path: str, package: str) -> frozenset[str]:
    """The ``kernels`` modules a source file imports (absolute and relative imports)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return frozenset()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "kernels")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] == "kernels":
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)   # `from pkg import module`
    return frozenset(found)


@functools.lru_cache(maxsize=256)
def source_closure_digest(module_name: str) -> str:
    """SHA-256 over the source of ``module_name`` and of every ``kernels`` module it imports,
    transitively (read once per process: a running process does not see later edits, as
    Python itself does not)."""
    seen: dict[str, str] = {}
    todo = [module_name]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:
            seen[name] = ""
            continue
        seen[name] = path
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        todo.extend(_kernels_imports(path, package) - set(seen))
    h = hashlib.sha256()
    for name in sorted(seen):
        h.update(name.encode() + b"\0")
        if seen[name]:
            with contextlib.suppress(OSError):
                h.update(Path(seen[name]).read_bytes())
    return h.hexdigest()


def _code_parts(code: pytypes.CodeType, out: list) -> None:
    out.append(code.co_code)
    out.append(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            _code_parts(const, out)
        else:
            out.append(repr(const).encode())


def _function_of(obj):
    """The Python function behind a numba dispatcher (kernel or device function), else ``None``."""
    func = getattr(obj, "py_func", None)
    return func if isinstance(func, pytypes.FunctionType) else None


def _describe(value, seen: set, depth: int = 0) -> bytes:
    """A deterministic description of a closure cell or global: plain values by ``repr``,
    functions and dispatchers by their code, closure and globals, numba types by name."""
    if depth > 20:
        raise Uncacheable("nested too deep")
    if isinstance(value, _SIMPLE):
        return f"{type(value).__name__}:{value!r}".encode()
    if isinstance(value, (tuple, list, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, frozenset) else value
        return b"(" + b",".join(_describe(v, seen, depth + 1) for v in items) + b")"
    if isinstance(value, pytypes.ModuleType):
        return f"module:{value.__name__}".encode()
    func = value if isinstance(value, pytypes.FunctionType) else _function_of(value)
    if func is not None:
        options = getattr(value, "targetoptions", None)
        return (b"function:" + function_fingerprint(func, seen, depth + 1)
                + (b"|options:" + _options_text(options).encode() if options else b""))
    module = type(value).__module__ or ""
    if module.startswith(("numba", "numpy")):        # numba types, numpy dtypes and scalars: by their text
        return f"{module}.{type(value).__qualname__}:{value}".encode()
    if isinstance(value, type):
        return f"class:{value.__module__}.{value.__qualname__}".encode()
    text = repr(value)
    if " at 0x" in text:
        raise Uncacheable(f"a {type(value).__name__} in the closure")
    return f"{module}.{type(value).__qualname__}:{text}".encode()


def function_fingerprint(func: pytypes.FunctionType, seen: set | None = None, depth: int = 0) -> bytes:
    """What of ``func`` numba compiles: code, closure cells and the plain globals it reads."""
    seen = set() if seen is None else seen
    ident = f"{func.__module__}.{func.__qualname__}"
    if id(func) in seen:
        return f"recursive:{ident}".encode()
    seen.add(id(func))
    parts = [ident.encode()]
    _code_parts(func.__code__, parts)
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or (), strict=True):
        try:
            contents = cell.cell_contents
        except ValueError:               # an empty cell
            contents = None
        parts.append(name.encode() + b"=" + _describe(contents, seen, depth))
    for name in sorted(set(_global_names(func.__code__))):
        if name in func.__globals__:
            parts.append(b"global " + name.encode() + b"=" + _describe(func.__globals__[name], seen, depth))
    return hashlib.sha256(b"\0".join(parts)).hexdigest().encode()


def _global_names(code: pytypes.CodeType):
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            yield from _global_names(const)


def _options_text(options: dict | None) -> str:
    return repr(sorted((k, repr(v)) for k, v in (options or {}).items()))


@dataclass(frozen=True)
class DeviceFacts:
    """What besides the kernel decides its machine code: the GPU and the tools' versions."""

    compute_capability: str
    driver: str
    numba: str
    numba_cuda: str

    def text(self) -> str:
        return f"cc={self.compute_capability} driver={self.driver} numba={self.numba} numba-cuda={self.numba_cuda}"


@functools.lru_cache(maxsize=1)
def device_facts() -> DeviceFacts:
    from importlib.metadata import PackageNotFoundError, version

    from kernels.measure.targets import probe_gpu

    gpu = probe_gpu()
    cc = f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}" if gpu else "none"

    def v(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "missing"

    return DeviceFacts(cc, gpu.driver_version if gpu else "none", v("numba"), v("numba-cuda"))


def kernel_key(func: pytypes.FunctionType, signature, options: dict | None, facts: DeviceFacts | None = None) -> str:
    """The cache key of ``func`` compiled for ``signature`` (a tuple of numba types, or text) with
    the ``cuda.jit`` ``options`` on this device. Raises :class:`Uncacheable`."""
    facts = facts or device_facts()
    parts = [
        b"format %d" % FORMAT,
        function_fingerprint(func),
        source_closure_digest(func.__module__).encode(),
        repr(tuple(str(t) for t in signature) if isinstance(signature, tuple) else str(signature)).encode(),
        _options_text({k: v for k, v in (options or {}).items() if k != "link"}).encode(),
        repr(sorted(map(str, (options or {}).get("link") or []))).encode(),
        facts.text().encode(),
    ]
    return hashlib.sha256(b"\n".join(parts)).hexdigest()


# ---- counters, for the run records ------------------------------------------------------------

@dataclass
class CacheStats:
    hits: int = 0              # kernels loaded from the cache
    compiled: int = 0          # kernels compiled here (then stored, where they could be)
    compile_s: float = 0.0     # time spent compiling them
    load_s: float = 0.0        # time spent loading hits
    uncacheable: int = 0       # kernels compiled but not storable (an unknown object in a closure)
    damaged: int = 0           # entries found damaged (removed, compiled again)

    def copy(self) -> CacheStats:
        return CacheStats(**vars(self))

    def since(self, before: CacheStats) -> CacheStats:
        return CacheStats(**{k: getattr(self, k) - getattr(before, k) for k in vars(self)})

    def to_json(self) -> dict:
        out = dict(vars(self))
        out["compile_s"] = round(out["compile_s"], 6)
        out["load_s"] = round(out["load_s"], 6)
        return out


STATS = CacheStats()
_STATS_LOCK = threading.Lock()


# ---- numba's hook ------------------------------------------------------------------------------

class KernelDiskCache:
    """Stands where numba-cuda's dispatcher keeps its cache (``CUDADispatcher._cache``): numba
    asks :meth:`load_overload` before compiling a signature and hands what it compiled to
    :meth:`save_overload`. The payload is the state numba-cuda pickles a kernel to
    (``_Kernel._reduce_states``: PTX and cubin), rebuilt by ``_Kernel._rebuild``."""

    def __init__(self, dispatcher, store: Store):
        self.py_func = dispatcher.py_func
        self.options = dict(getattr(dispatcher, "targetoptions", {}) or {})
        self.store = store
        self._started: dict = {}

    # numba calls these ------------------------------------------------------------------------
    def load_overload(self, sig, target_context):
        argtypes = _argtypes(sig)
        key = self._key(argtypes)
        started = time.perf_counter()
        kernel = None
        if key is not None:
            blob = self.store.get(key)
            if blob is not None:
                kernel = self._rebuild(blob, target_context)
                if kernel is None:
                    with contextlib.suppress(OSError):
                        self.store.path(key).unlink()
        with _STATS_LOCK:
            if kernel is not None:
                STATS.hits += 1
                STATS.load_s += time.perf_counter() - started
            else:
                self._started[argtypes] = time.perf_counter()
        return kernel

    def save_overload(self, sig, kernel) -> None:
        argtypes = _argtypes(sig)
        started = self._started.pop(argtypes, None)
        with _STATS_LOCK:
            STATS.compiled += 1
            if started is not None:
                STATS.compile_s += time.perf_counter() - started
        key = self._key(argtypes)
        if key is None:
            return
        try:
            blob = pickle.dumps(kernel._reduce_states(), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - e.g. a kernel holding a global device array
            logger.debug("kernel cache: %s not stored: %s", qualified_name(self.py_func), exc)
            with _STATS_LOCK:
                STATS.uncacheable += 1
            return
        try:
            self.store.put(key, blob)
        except OSError as exc:
            logger.info("kernel cache: could not store %s in %s: %s", qualified_name(self.py_func), self.store.root,
                        exc)

    def enable(self) -> None:
        pass

    def disable(self) -> None:
        pass

    def flush(self) -> None:
        pass

    @property
    def cache_path(self) -> str:
        return str(self.store.root)

    # helpers -----------------------------------------------------------------------------------
    def _key(self, argtypes: tuple) -> str | None:
        try:
            return kernel_key(self.py_func, argtypes, self.options)
        except Uncacheable as exc:
            logger.debug("kernel cache: %s is not cached: %s", qualified_name(self.py_func), exc)
            with _STATS_LOCK:
                STATS.uncacheable += 1
            return None

    def _rebuild(self, blob: bytes, target_context):
        try:
            payload = pickle.loads(blob)
            from numba.cuda.dispatcher import _Kernel

            target_context.refresh()
            return _Kernel._rebuild(**payload)
        except Exception as exc:  # noqa: BLE001 - a stale or foreign entry: compile instead
            logger.info("kernel cache: an entry of %s did not load (%s: %s): compiling again",
                        qualified_name(self.py_func), type(exc).__name__, exc)
            with _STATS_LOCK:
                STATS.damaged += 1
            return None


def qualified_name(func) -> str:
    return f"{func.__module__}:{func.__qualname__}"


def _argtypes(sig) -> tuple:
    args = getattr(sig, "args", sig)
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)
