"""Sessions: every open graph with its edits and undo history, the runs and sweeps, the layout.

A session is one zip file (``.ggesession``)::

    manifest.json                 format name and version, documents, window layout, dock states
    structures/<k>.npz            each slotted structure, complete (pages, index, counters)
    documents/<d>/csr.npz         each graph's current CSR (read-only graphs: their content;
                                  editable ones: a fallback a later version can always rebuild from)
    documents/<d>/undo/<i>.npz    the page delta of undo step i
    documents/<d>/layout.npz      node-link positions, so the drawing looks the same

Saving is split in two: :func:`collect` copies what is needed on the GUI thread (fast memory
copies), :func:`write` writes the file from that snapshot in any thread: to a temporary file
in the same folder, flushed, then ``os.replace``d over the target, so a crash never leaves a
half-written session. :func:`read` parses a file back (any thread) and
:func:`restore_undo_history` rebuilds the undo stack on the GUI thread.

Versions: ``FORMAT_VERSION`` is written into every file. :func:`read` upgrades older files
through :data:`MIGRATIONS` (one function per version step), refuses newer ones in words,
ignores keys it does not know, and if a stored structure cannot be used it rebuilds the graph
from its CSR (losing that graph's undo history, and saying so).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import io
import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.page_delta import PageDelta, structure_from_arrays, structure_to_arrays
from kernels import __version__
from kernels.errors import GraphFormatError
from kernels.graph.csr import CSRGraph

FORMAT_NAME = "gpu-graph-explorer-session"
FORMAT_VERSION = 1
SESSION_SUFFIX = ".ggesession"

# version -> function turning a manifest of that version into one of version + 1
MIGRATIONS: dict[int, Callable[[dict], dict]] = {}


class SessionError(GraphFormatError):
    """A session file cannot be read (names the file and what is wrong)."""


# ---- what is saved -----------------------------------------------------------------------------
@dataclass
class HistoryStep:
    kind: str                         # "edit" or "replace"
    text: str
    structure: int | None = None      # edit: index of the structure it applies to
    old: int | None = None            # replace: structures before / after
    new: int | None = None
    delta: PageDelta | None = None


@dataclass
class DocumentRecord:
    name: str
    source: str
    csr: CSRGraph
    structure: int | None             # index into SessionData.structures, None: read-only
    not_editable_reason: str = ""
    history: list[HistoryStep] = field(default_factory=list)
    history_index: int = 0
    positions: dict[int, np.ndarray] | None = None


@dataclass
class SessionData:
    documents: list[DocumentRecord]
    structures: list                  # SlottedGraph objects (shared by documents' histories)
    current: int = 0
    window_geometry: bytes | None = None
    window_state: bytes | None = None
    docks: dict = field(default_factory=dict)
    version: int = FORMAT_VERSION          # after upgrading
    saved_as_version: int = FORMAT_VERSION  # what the file said
    app_version: str = ""
    saved_at: str = ""
    warnings: list[str] = field(default_factory=list)


# ---- collecting (GUI thread) -------------------------------------------------------------------
def collect(documents, *, current: int = 0, window_geometry: bytes | None = None,
            window_state: bytes | None = None, docks: dict | None = None,
            positions: list[dict | None] | None = None) -> SessionData:
    """A self-contained snapshot of the open documents (arrays copied: safe to write from a
    worker thread while the user keeps editing)."""
    from explorer.commands import ReplaceStructure, StructureEdit

    structures: list = []
    numbers: dict[int, int] = {}

    def number(g) -> int:
        if id(g) not in numbers:
            numbers[id(g)] = len(structures)
            structures.append({k: np.array(v, copy=True) for k, v in structure_to_arrays(g).items()}
                              | {"_name": g.name})
        return numbers[id(g)]

    records = []
    for d, doc in enumerate(documents):
        history = []
        stack = doc.undo_stack
        for i in range(stack.count()):
            cmd = stack.command(i)
            if isinstance(cmd, StructureEdit):
                history.append(HistoryStep("edit", cmd.text(), structure=number(cmd._structure), delta=cmd.delta))
            elif isinstance(cmd, ReplaceStructure):
                history.append(HistoryStep("replace", cmd.text(), old=number(cmd.old), new=number(cmd.new)))
        records.append(DocumentRecord(
            name=doc.name, source=doc.source, csr=doc.csr(),
            structure=number(doc.slotted) if doc.slotted is not None else None,
            not_editable_reason=doc.not_editable_reason, history=history, history_index=stack.index(),
            positions=(positions[d] if positions else None)))
    return SessionData(records, structures, current=current, window_geometry=window_geometry,
                       window_state=window_state, docks=dict(docks or {}), app_version=__version__,
                       saved_at=_dt.datetime.now().isoformat(timespec="seconds"))


# ---- writing (any thread) ----------------------------------------------------------------------
def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _csr_arrays(g: CSRGraph) -> dict[str, np.ndarray]:
    out = {"indptr": g.indptr, "indices": g.indices}
    if g.weights is not None:
        out["weights"] = g.weights
    return out


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(bytes(data)).decode("ascii") if data else None


def write(data: SessionData, path: str | os.PathLike, progress: Callable[[float], None] | None = None) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file + ``os.replace``)."""
    path = Path(path)
    manifest = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "app_version": data.app_version or __version__,
        "saved_at": data.saved_at,
        "current": data.current,
        "window": {"geometry": _b64(data.window_geometry), "state": _b64(data.window_state)},
        "docks": data.docks,
        "structures": [{"file": f"structures/{k}.npz", "name": s["_name"]} for k, s in enumerate(data.structures)],
        "documents": [],
    }
    members: list[tuple[str, Callable[[], bytes]]] = []
    for k, s in enumerate(data.structures):
        members.append((f"structures/{k}.npz", lambda s=s: _npz_bytes({n: v for n, v in s.items() if n != "_name"})))
    for d, rec in enumerate(data.documents):
        base = f"documents/{d}"
        entry = {
            "name": rec.name, "source": rec.source, "structure": rec.structure,
            "not_editable_reason": rec.not_editable_reason,
            "csr": {"file": f"{base}/csr.npz", "n_cols": rec.csr.n_cols, "directed": rec.csr.directed,
                    "name": rec.csr.name, "source": rec.csr.source, "notices": list(rec.csr.notices)},
            "history_index": rec.history_index,
            "history": [],
        }
        members.append((f"{base}/csr.npz", lambda g=rec.csr: _npz_bytes(_csr_arrays(g))))
        for i, step in enumerate(rec.history):
            item = {"kind": step.kind, "text": step.text}
            if step.kind == "edit":
                item["structure"] = step.structure
                item["file"] = f"{base}/undo/{i}.npz"
                members.append((item["file"], lambda delta=step.delta: _npz_bytes(delta.to_arrays())))
            else:
                item["old"], item["new"] = step.old, step.new
            entry["history"].append(item)
        if rec.positions:
            ids = np.array(sorted(rec.positions), dtype=np.int64)
            xy = np.array([rec.positions[int(v)] for v in ids], dtype=np.float64).reshape(-1, 2)
            entry["layout"] = f"{base}/layout.npz"
            members.append((entry["layout"], lambda ids=ids, xy=xy: _npz_bytes({"ids": ids, "xy": xy})))
        manifest["documents"].append(entry)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        from kernels.results import share_like_other_files

        share_like_other_files(fd)           # 0644 like other exports, not mkstemp's 0600
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
                zf.writestr("manifest.json", json.dumps(manifest, indent=1))
                for n, (name, produce) in enumerate(members):
                    with zf.open(name, "w", force_zip64=True) as member:
                        member.write(produce())
                    if progress is not None:
                        progress((n + 1) / max(len(members), 1))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


# ---- reading (any thread) ----------------------------------------------------------------------
def _fail(path, message: str) -> SessionError:
    return SessionError(message, str(path), expected="a session saved by GPU Graph Explorer")


def read(path: str | os.PathLike) -> SessionData:
    """Read a session file; raises :class:`SessionError` in words when it cannot."""
    path = Path(path)
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise _fail(path, "no such file") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise _fail(path, f"not a session file ({exc})") from None
    with zf:
        try:
            manifest = json.loads(zf.read("manifest.json"))
        except KeyError:
            raise _fail(path, "not a session file (it has no manifest.json)") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _fail(path, f"its manifest is damaged ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
            raise _fail(path, "not a session file (unknown format)")
        version = manifest.get("version")
        if not isinstance(version, int) or version < 1:
            raise _fail(path, f"unknown session version {version!r}")
        if version > FORMAT_VERSION:
            raise SessionError(f"this session was saved by a newer version (session format {version}, "
                               f"written by {manifest.get('app_version', '?')}); this version reads formats "
                               f"up to {FORMAT_VERSION}: please update GPU Graph Explorer", str(path))
        original_version = version
        while version < FORMAT_VERSION:
            manifest = MIGRATIONS[version](manifest)
            version += 1
        try:
            data = _read_manifest(zf, manifest)
        except (KeyError, ValueError, TypeError, zipfile.BadZipFile) as exc:
            raise _fail(path, f"the session is damaged ({type(exc).__name__}: {exc})") from None
        data.version = version
        data.saved_as_version = original_version
        if original_version < version:
            data.warnings.append(f"saved in session format {original_version}, upgraded to {version}")
        return data


def _load_npz(zf: zipfile.ZipFile, name: str) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(zf.read(name)), allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _read_manifest(zf: zipfile.ZipFile, manifest: dict) -> SessionData:
    warnings: list[str] = []
    structures: list = []
    broken: set[int] = set()
    for k, s in enumerate(manifest.get("structures", [])):
        try:
            structures.append(structure_from_arrays(_load_npz(zf, s["file"]), name=s.get("name", "slotted")))
        except (KeyError, ValueError, AssertionError) as exc:
            structures.append(None)
            broken.add(k)
            warnings.append(f"slotted structure {k} could not be restored ({exc})")
    documents = []
    for entry in manifest.get("documents", []):
        c = entry["csr"]
        arrays = _load_npz(zf, c["file"])
        csr = CSRGraph(arrays["indptr"], arrays["indices"], arrays.get("weights"), n_cols=c["n_cols"],
                       directed=c["directed"], name=c.get("name", entry["name"]), source=c.get("source", ""),
                       notices=tuple(c.get("notices", ())))
        history: list[HistoryStep] = []
        uses = set()
        for item in entry.get("history", []):
            if item["kind"] == "edit":
                history.append(HistoryStep("edit", item["text"], structure=item["structure"],
                                           delta=PageDelta.from_arrays(_load_npz(zf, item["file"]))))
                uses.add(item["structure"])
            elif item["kind"] == "replace":
                history.append(HistoryStep("replace", item["text"], old=item["old"], new=item["new"]))
                uses.update((item["old"], item["new"]))
            else:
                warnings.append(f"{entry['name']}: unknown history step {item['kind']!r} skipped")
        structure = entry.get("structure")
        if structure is not None:
            uses.add(structure)
        positions = None
        if entry.get("layout"):
            lay = _load_npz(zf, entry["layout"])
            positions = {int(v): xy for v, xy in zip(lay["ids"], lay["xy"], strict=True)}
        rec = DocumentRecord(entry["name"], entry.get("source", ""), csr, structure,
                             entry.get("not_editable_reason", ""), history, int(entry.get("history_index", 0)),
                             positions)
        if uses & broken:
            rec.history, rec.history_index = [], 0
            rec.structure = None if structure is None else -1       # -1: rebuild from the CSR
            warnings.append(f"{rec.name}: rebuilt from its saved graph; its undo history was lost")
        documents.append(rec)
    window = manifest.get("window", {})

    def unb64(text):
        return base64.b64decode(text) if text else None

    return SessionData(documents, structures, current=int(manifest.get("current", 0)),
                       window_geometry=unb64(window.get("geometry")), window_state=unb64(window.get("state")),
                       docks=manifest.get("docks", {}), app_version=manifest.get("app_version", ""),
                       saved_at=manifest.get("saved_at", ""), warnings=warnings)


# ---- rebuilding the undo history (GUI thread) ---------------------------------------------------
def restore_undo_history(document, record: DocumentRecord, structures: list) -> None:
    """Fill ``document``'s (empty) undo stack with the saved steps, positioned where the user
    left it, without re-applying anything: the structures are already in the saved state."""
    from explorer.commands import ReplaceStructure, StructureEdit

    stack = document.undo_stack
    built = []
    for step in record.history:
        if step.kind == "edit":
            cmd = StructureEdit(document, step.text, lambda g: None)
            cmd.delta = step.delta
            cmd._structure = structures[step.structure]
        else:
            cmd = ReplaceStructure(document, step.text, structures[step.new])
            cmd.old = structures[step.old]
        cmd._silent = True
        built.append(cmd)
    for cmd in built:
        stack.push(cmd)                # redo() is silent: nothing is applied again
    stack.setIndex(max(0, min(record.history_index, stack.count())))   # undo() is silent too
    for cmd in built:
        cmd._silent = False
    stack.setClean()
