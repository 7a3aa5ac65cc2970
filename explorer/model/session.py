"""Sessions: every open graph with its edits and undo history, the runs and sweeps, the layout.

The session format and its file I/O, Qt-free: the window (``explorer.window.session_controller``)
adds what only it knows (the layout, the docks' states, the node-link positions) as plain data.

A session is one zip file (``.ggesession``)::

    manifest.json                 format name and version, documents, window layout, dock states
    structures/<k>.npz            each slotted structure, complete (pages, index, counters)
    documents/<d>/csr.npz         each graph's current CSR (read-only graphs: their content;
                                  editable ones: a fallback a later version can always rebuild from)
    documents/<d>/undo/<i>.npz    the page delta of undo step i
    documents/<d>/layout.npz      node-link positions, so the drawing looks the same

Saving is split in two: :func:`collect` copies what is needed on the GUI thread (fast memory
copies), :func:`write` writes the file from that snapshot in any thread: to a temporary file
in the same folder (``.<name>.<pid>.<random>.tmp``), flushed, then ``os.replace``d over the
target, so a crash never leaves a half-written session; temporary files that a killed save
left behind are removed when that target is saved or opened again. The manifest, written
last, holds the sha256 of every other member. :func:`read` parses a file back (any thread)
and :func:`restore_undo_history` puts the undo history back on the document's stack.

A session file is untrusted input (docs/gui.md, "Sessions"): :func:`read` checks every manifest
field's type, every index into the structures, every member's checksum and array headers
(:mod:`explorer.model.session_members`), each structure's invariants, and replays every undo and
redo step on copies of the structures it applies to (``SlottedGraph.apply_delta(...,
verify=True)``). What it finds:

* the manifest, a graph or a structure a document shows cannot be read: the file is refused
  (``SessionError``, one sentence) - except a damaged structure whose document's saved graph
  is intact: that graph is rebuilt from its CSR, without its history, saying so;
* a damaged undo step, a structure only the history uses, or a history that does not chain:
  the document opens without its undo history, saying so (``SessionData.warnings``);
* a damaged node-link layout: dropped, saying so.

Versions: ``FORMAT_VERSION`` is written into every file. :func:`read` upgrades older files
through :data:`MIGRATIONS` (one function per version step), refuses newer ones in words and
ignores keys it does not know. Version 1 files have no checksums; everything else is checked.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import os
import re
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.model.commands import ReplaceStructure, StructureEdit
from explorer.model.session_members import ZIP_ERRORS, MemberError, b64, index_field, load_npz, read_member, sha256
from explorer.model.session_members import field as _field
from kernels import __version__, json_input
from kernels.errors import GraphFormatError, GraphKernelsError
from kernels.graph.csr import CSRGraph
from kernels.graph.slotted import PageDelta, SlottedGraph

FORMAT_NAME = "gpu-graph-explorer-session"
FORMAT_VERSION = 2
SESSION_SUFFIX = ".ggesession"


def _v1_to_v2(manifest: dict) -> dict:
    """Version 2 added the members' checksums; version 1 files are read without them."""
    return {**manifest, "version": 2, "checksums": None}


# version -> function turning a manifest of that version into one of version + 1
MIGRATIONS: dict[int, Callable[[dict], dict]] = {1: _v1_to_v2}


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
    structures: list = []
    numbers: dict[int, int] = {}

    def number(g) -> int:
        if id(g) not in numbers:
            numbers[id(g)] = len(structures)
            structures.append({k: np.array(v, copy=True) for k, v in g.to_arrays().items()}
                              | {"_name": g.name})
        return numbers[id(g)]

    records = []
    for d, doc in enumerate(documents):
        history = []
        stack = doc.undo_stack
        for i in range(stack.count()):
            cmd = stack.command(i)
            if isinstance(cmd, StructureEdit):
                history.append(HistoryStep("edit", cmd.text, structure=number(cmd.structure), delta=cmd.delta))
            elif isinstance(cmd, ReplaceStructure):
                history.append(HistoryStep("replace", cmd.text, old=number(cmd.old), new=number(cmd.new)))
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
    import base64

    return base64.b64encode(bytes(data)).decode("ascii") if data else None


_PID_PART = re.compile(r"^(\d+)\.[A-Za-z0-9_]+$")


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":
        return False               # os.kill would end the process there; treat as stale
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True                # exists, owned by someone else
    return True


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files that killed saves of ``path`` left beside it (those of
    processes still running, this one included, are kept: they may be saving now)."""
    path = Path(path)
    removed = []
    try:
        candidates = list(path.parent.glob(f".{glob_escape(path.name)}.*.tmp"))
    except OSError:
        return removed
    for tmp in candidates:
        middle = tmp.name[len(path.name) + 2:-len(".tmp")]       # ".<name>.<middle>.tmp"
        m = _PID_PART.match(middle)
        if m is not None and _process_alive(int(m[1])):
            continue
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed.append(tmp)
    return removed


def glob_escape(name: str) -> str:
    import glob

    return glob.escape(name)


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
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=str(path.parent))
    try:
        from kernels.results import share_like_other_files

        share_like_other_files(fd)           # 0644 like other exports, not mkstemp's 0600
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
                checksums = {}
                for n, (name, produce) in enumerate(members):
                    content = produce()
                    checksums[name] = sha256(content)
                    with zf.open(name, "w", force_zip64=True) as member:
                        member.write(content)
                    if progress is not None:
                        progress((n + 1) / max(len(members), 1))
                manifest["checksums"] = checksums
                zf.writestr("manifest.json", json.dumps(manifest, indent=1))
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
    """Read and validate a session file; raises :class:`SessionError` in one sentence when it
    cannot be opened (see the module's description of what is refused and what is dropped)."""
    path = Path(path)
    remove_stale_temporaries(path)
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise _fail(path, "no such file") from None
    except ZIP_ERRORS as exc:
        raise _fail(path, f"not a session file ({type(exc).__name__}: {exc})") from None
    with zf:
        if "manifest.json" not in zf.namelist():
            raise _fail(path, "not a session file (it has no manifest.json)")
        try:
            manifest = json_input.loads(read_member(zf, "manifest.json", None))
        except MemberError as exc:
            raise _fail(path, exc.reason) from None
        except json_input.IntegerTooLong as exc:
            raise _fail(path, f"its manifest is damaged ({json_input.describe(exc)})") from None
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise _fail(path, f"its manifest is damaged ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
            raise _fail(path, "not a session file (unknown format)")
        version = manifest.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise _fail(path, f"unknown session version {version!r:.40}")
        if version > FORMAT_VERSION:
            raise SessionError(f"this session was saved by a newer version (session format {version}, "
                               f"written by {manifest.get('app_version', '?')!s:.40}); this version reads "
                               f"formats up to {FORMAT_VERSION}: please update GPU Graph Explorer", str(path))
        original_version = version
        while version < FORMAT_VERSION:
            manifest = MIGRATIONS[version](manifest)
            version += 1
        try:
            data = _read_manifest(zf, manifest)
        except GraphFormatError as exc:
            raise _fail(path, getattr(exc, "reason", str(exc))) from None
        except GraphKernelsError as exc:
            raise _fail(path, str(exc)) from None
        except (KeyError, ValueError, TypeError, IndexError, AttributeError, OverflowError,
                MemoryError, *ZIP_ERRORS) as exc:
            # a safety net: every check above should have named the problem already
            raise _fail(path, f"the session is damaged ({type(exc).__name__}: {exc})") from None
        data.version = version
        data.saved_as_version = original_version
        if original_version < version:
            data.warnings.append(f"saved in session format {original_version}, upgraded to {version}")
        return data


def _read_structures(zf, manifest: dict, checksums) -> tuple[list, dict[int, str]]:
    """The structures (``None`` for a damaged one) and what is wrong with each damaged one."""
    structures: list[SlottedGraph | None] = []
    problems: dict[int, str] = {}
    for k, s in enumerate(_field(manifest, "structures", list, "", default=[])):
        where = f"structure {k}: "
        if not isinstance(s, dict):
            raise MemberError(f"manifest: {where}should be an object, not {s!r:.40}")
        file = _field(s, "file", str, where)
        name = _field(s, "name", str, where, default="slotted")
        try:
            structures.append(SlottedGraph.from_arrays(load_npz(zf, file, checksums), name=name))
        except GraphKernelsError as exc:
            structures.append(None)
            problems[k] = getattr(exc, "reason", str(exc))
    return structures, problems


def _read_csr(zf, entry: dict, name: str, where: str, checksums) -> CSRGraph:
    c = _field(entry, "csr", dict, where)
    where += "graph: "
    notices = _field(c, "notices", list, where, default=[])
    if not all(isinstance(n, str) for n in notices):
        raise MemberError(f"manifest: {where}'notices' should be a list of texts")
    arrays = load_npz(zf, _field(c, "file", str, where), checksums)
    try:
        return CSRGraph(arrays["indptr"], arrays["indices"], arrays.get("weights"),
                        n_cols=_field(c, "n_cols", int, where), directed=_field(c, "directed", bool, where),
                        name=_field(c, "name", str, where, default=name), source=_field(c, "source", str, where,
                                                                                        default=""),
                        notices=tuple(notices))
    except KeyError as exc:
        raise MemberError(f"{where}the saved graph lacks its array {exc}") from None
    except (ValueError, TypeError) as exc:
        raise MemberError(f"{where}the saved graph is not a valid graph ({exc})") from None


def _read_history(zf, entry: dict, where: str, n_structures: int, checksums) -> tuple[list[HistoryStep], int]:
    steps = []
    for i, item in enumerate(_field(entry, "history", list, where, default=[])):
        w = f"{where}undo step {i + 1}: "
        if not isinstance(item, dict):
            raise MemberError(f"manifest: {w}should be an object")
        kind = _field(item, "kind", str, w)
        text = _field(item, "text", str, w)
        if kind == "edit":
            structure = index_field(item, "structure", n_structures, w)
            try:
                delta = PageDelta.from_arrays(load_npz(zf, _field(item, "file", str, w), checksums))
            except GraphKernelsError as exc:
                raise MemberError(w + getattr(exc, "reason", str(exc))) from None
            steps.append(HistoryStep("edit", text, structure=structure, delta=delta))
        elif kind == "replace":
            steps.append(HistoryStep("replace", text, old=index_field(item, "old", n_structures, w),
                                     new=index_field(item, "new", n_structures, w)))
        else:
            raise MemberError(f"{w}unknown kind of step {kind!r:.30}")
    index = _field(entry, "history_index", int, where, default=0)
    if not 0 <= index <= len(steps):
        raise MemberError(f"{where}undo position {index} outside its {len(steps)} steps")
    return steps, index


def history_structures(steps: list[HistoryStep], index: int, current: int | None) -> set[int]:
    """The structures a history uses; raises ``MemberError`` unless its steps chain: walking
    back from ``index`` an edit applies to the structure in use and a replacement's ``new`` is
    the structure in use (and the same walking forward)."""
    used = set() if current is None else {current}
    if steps and current is None:
        raise MemberError("a read-only graph with an undo history")
    at = current
    for i in range(index - 1, -1, -1):
        step = steps[i]
        on = step.structure if step.kind == "edit" else step.new
        if on != at:
            raise MemberError(f"undo step {i + 1} applies to structure {on}, the graph is on structure {at} there")
        if step.kind == "replace":
            at = step.old
        used.add(at)
    at = current
    for i in range(index, len(steps)):
        step = steps[i]
        if (step.structure if step.kind == "edit" else step.old) != at:
            raise MemberError(f"redo step {i + 1} does not apply to structure {at}")
        if step.kind == "replace":
            at = step.new
        used.add(at)
    return used


def verify_history(steps: list[HistoryStep], index: int, structures: list) -> None:
    """Replay every step on copies of the structures: undo from ``index`` to the start, then
    redo to the end, checking each delta before it is written and the invariants of every
    state not reached before. Raises ``GraphKernelsError`` naming the first bad step."""
    copies = {}

    def structure(k: int) -> SlottedGraph:
        if k not in copies:
            copies[k] = structures[k].copy()
        return copies[k]

    try:
        for i in range(index - 1, -1, -1):
            if steps[i].kind == "edit":
                structure(steps[i].structure).apply_delta(steps[i].delta, forward=False, verify=True)
        for i in range(len(steps)):
            if steps[i].kind == "edit":
                structure(steps[i].structure).apply_delta(steps[i].delta, forward=True, verify=i >= index)
    except GraphKernelsError as exc:
        raise MemberError(f"undo step {i + 1} does not fit its graph: {exc}") from None


def _read_positions(zf, layout: str, checksums) -> dict[int, np.ndarray]:
    lay = load_npz(zf, layout, checksums)
    ids, xy = lay.get("ids"), lay.get("xy")
    if (ids is None or xy is None or ids.ndim != 1 or ids.dtype.kind not in "iu" or xy.dtype.kind != "f"
            or xy.shape != (len(ids), 2) or not np.isfinite(xy).all()):
        raise MemberError(f"{layout} does not hold one finite (x, y) per vertex id")
    return {int(v): p for v, p in zip(ids, xy, strict=True)}


def _read_manifest(zf: zipfile.ZipFile, manifest: dict) -> SessionData:
    checksums = _field(manifest, "checksums", dict, "", optional=True)
    if checksums is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in checksums.items()):
        raise MemberError("manifest: 'checksums' should map member names to texts")
    window = _field(manifest, "window", dict, "", default={})
    geometry = b64(_field(window, "geometry", str, "window ", default=None, optional=True), "window geometry")
    state = b64(_field(window, "state", str, "window ", default=None, optional=True), "window state")
    current = _field(manifest, "current", int, "", default=0)
    docks = _field(manifest, "docks", dict, "", default={})
    app_version = _field(manifest, "app_version", str, "", default="")
    saved_at = _field(manifest, "saved_at", str, "", default="")
    structures, broken = _read_structures(zf, manifest, checksums)
    warnings: list[str] = []
    documents = []
    owner: dict[int, str] = {}
    for d, entry in enumerate(_field(manifest, "documents", list, "", default=[])):
        where = f"document {d + 1}: "
        if not isinstance(entry, dict):
            raise MemberError(f"manifest: {where}should be an object, not {entry!r:.40}")
        name = _field(entry, "name", str, where)
        where = f"{name}: "
        csr = _read_csr(zf, entry, name, where, checksums)
        structure = index_field(entry, "structure", len(structures), where, optional=True)
        if structure is not None and structure in owner:
            raise MemberError(f"{where}its structure {structure} also belongs to {owner[structure]}")
        rec = DocumentRecord(name, _field(entry, "source", str, where, default=""), csr, structure,
                             _field(entry, "not_editable_reason", str, where, default=""))
        if structure is not None and structure in broken:
            rec.structure = -1                          # -1: rebuild from the CSR
            warnings.append(f"{name}: its slotted structure is damaged ({broken[structure]}); rebuilt from "
                            "its saved graph; its undo history was lost")
        else:
            try:
                steps, index = _read_history(zf, entry, where, len(structures), checksums)
                used = history_structures(steps, index, structure)
                if used & set(broken):
                    raise MemberError(f"structure {min(used & set(broken))} of its history is damaged "
                                      f"({broken[min(used & set(broken))]})")
                taken = (used - {structure}) & set(owner)
                if taken:
                    raise MemberError(f"its history uses structure {min(taken)}, which belongs to {owner[min(taken)]}")
                verify_history(steps, index, structures)
                rec.history, rec.history_index = steps, index
                owner.update({k: name for k in used})
            except MemberError as exc:
                warnings.append(f"{name}: opened without its undo history, which is damaged "
                                f"({exc.reason.removeprefix(where)})")
        if structure is not None:
            owner[structure] = name
        layout = _field(entry, "layout", str, where, default=None, optional=True)
        if layout:
            try:
                rec.positions = _read_positions(zf, layout, checksums)
            except MemberError as exc:
                warnings.append(f"{name}: its drawing's layout was not restored ({exc.reason})")
        documents.append(rec)
    return SessionData(documents, structures, current=current, window_geometry=geometry, window_state=state,
                       docks=docks, app_version=app_version, saved_at=saved_at, warnings=warnings)


# ---- rebuilding the undo history ----------------------------------------------------------------
def restore_undo_history(document, record: DocumentRecord, structures: list) -> None:
    """Fill ``document``'s (empty) undo stack with the saved steps, positioned where the user
    left it, without re-applying anything: the structures are already in the saved state."""
    built = []
    for step in record.history:
        if step.kind == "edit":
            built.append(StructureEdit.recorded(document, step.text, structures[step.structure], step.delta))
        else:
            built.append(ReplaceStructure.recorded(document, step.text, structures[step.old], structures[step.new]))
    document.undo_stack.load(built, record.history_index)      # clean there: it is what the file holds
