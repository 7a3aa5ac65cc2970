"""Damaged and hostile session files: refused in one sentence, or opened (with or without their
undo history, saying so) - and then Undo and Redo work to both ends of the history.

Qt-free: the session is written and read through :mod:`explorer.model.session`, and the undo stack is
walked the way the GUI's commands walk it (``SlottedGraph.apply_delta`` on each step's
structure). ``GGE_SESSION_FUZZ`` sets how many randomly damaged files are tried (default 40)."""

from __future__ import annotations

import collections
import io
import json
import os
import zipfile

import numpy as np
import pytest

from explorer.model import session
from explorer.model.session_members import sha256
from kernels.graph.io import read_graph
from kernels.graph.slotted import SlottedGraph
from tests.conftest import data_path
from tests.test_slotted_delta import edited_history

RANDOM_CASES = int(os.environ.get("GGE_SESSION_FUZZ", "40"))
OUTCOMES: collections.Counter = collections.Counter()


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """karate on pages of 16 words with 25 edits (splits, a large list, batches, vertex
    removals and restores), rebuilt on pages of 32, 8 more edits, the last 3 undone; and a
    read-only matrix. Returns (path, the original karate CSR)."""
    original = read_graph(data_path("karate.mtx"))
    g16 = SlottedGraph.from_csr(original, page_size=16)
    first = edited_history(g16, 25, seed=11)
    g32 = SlottedGraph.from_csr(g16.to_csr(), page_size=32, live=g16.vertices(), one_sided=g16.one_sided_entries)
    second = edited_history(g32, 8, seed=12)
    for _, d in reversed(second[-3:]):
        g32.apply_delta(d, forward=False)
    steps = [session.HistoryStep("edit", f"edit {i}", structure=0, delta=d) for i, (_, d) in enumerate(first)]
    steps.append(session.HistoryStep("replace", "page size 16 -> 32", old=0, new=1))
    steps += [session.HistoryStep("edit", f"edit {i}", structure=1, delta=d) for i, (_, d) in enumerate(second)]
    structures = [{k: v.copy() for k, v in g.to_arrays().items()} | {"_name": "karate"} for g in (g16, g32)]
    docs = [session.DocumentRecord("karate", "karate.mtx", g32.to_csr(), 1, history=steps,
                                   history_index=len(steps) - 3,
                                   positions={v: np.array([v, 2.0 * v]) for v in range(34)}),
            session.DocumentRecord("lp_afiro", "lp_afiro.mtx", read_graph(data_path("lp_afiro.mtx")), None,
                                   not_editable_reason="rectangular")]
    path = tmp_path_factory.mktemp("sessions") / "work.ggesession"
    session.write(session.SessionData(docs, structures, docks={"ResultsDock": {"runs": []}}), path)
    return path, original


def members_of(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def rewrite(path, members: dict[str, bytes], *, checksums: bool) -> None:
    """Write ``members`` back; ``checksums``: recompute the manifest's (a hostile file would)."""
    if checksums:
        manifest = json.loads(members["manifest.json"])
        manifest["checksums"] = {n: sha256(b) for n, b in members.items() if n != "manifest.json"}
        members = {**members, "manifest.json": json.dumps(manifest).encode()}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, data in members.items():
            zf.writestr(n, data)


def npz(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def walk_history(data: session.SessionData, original) -> str:
    """Undo to the start, redo to the end, undo to the start again, checking the structure after
    every step; the start must be the graph as it was read. Returns the outcome's name."""
    outcome = "opened with its history"
    for rec in data.documents:
        if rec.structure is None:
            continue
        if rec.structure == -1:
            assert rec.history == []
            outcome = "opened, structure rebuilt from its graph"
            SlottedGraph.from_csr(rec.csr, page_size=16).check_invariants()
            continue
        if not rec.history:
            outcome = "opened without its history"
        current = [data.structures[rec.structure]]
        current[0].check_invariants()

        def move(i, forward, rec=rec, current=current):
            step = rec.history[i]
            if step.kind == "edit":
                data.structures[step.structure].apply_delta(step.delta, forward=forward)
                current[0] = data.structures[step.structure]
            else:
                current[0] = data.structures[step.new if forward else step.old]
            current[0].check_invariants()

        for i in range(rec.history_index - 1, -1, -1):
            move(i, False)
        if rec.history:
            assert current[0].to_csr().same_structure(original)
        for i in range(len(rec.history)):
            move(i, True)
        for i in range(len(rec.history) - 1, -1, -1):
            move(i, False)
    return outcome


def open_and_walk(path, original) -> str:
    try:
        data = session.read(path)
    except session.SessionError as exc:
        text = str(exc)
        assert "\n" not in text and str(path) in text
        return "refused"
    return walk_history(data, original)


def test_an_intact_session_opens_and_walks_its_whole_history(saved):
    path, original = saved
    data = session.read(path)
    assert data.warnings == []
    assert len(data.documents[0].history) == 34 and data.documents[0].history_index == 31
    assert walk_history(data, original) == "opened with its history"


# ---- each member, each kind of damage ---------------------------------------------------------
def _damages(name: str, data: bytes, rng):
    flipped = bytearray(data)
    for i in rng.integers(0, len(data), 3):
        flipped[i] ^= 0xFF
    yield "flipped bytes", bytes(flipped)
    yield "truncated", data[:len(data) // 2]
    yield "garbage", bytes(rng.integers(0, 256, 200, dtype=np.uint8))
    yield "empty", b""


@pytest.mark.parametrize("checksums", [False, True], ids=["checksums-kept", "checksums-forged"])
def test_every_member_damaged_every_way_is_refused_or_opens_and_undoes_to_both_ends(saved, tmp_path, checksums):
    path, original = saved
    good = members_of(path)
    rng = np.random.default_rng(13)
    seen = collections.Counter()
    for name in good:
        for how, content in _damages(name, good[name], rng):
            damaged = tmp_path / "d.ggesession"
            rewrite(damaged, {**good, name: content}, checksums=checksums and name != "manifest.json")
            outcome = open_and_walk(damaged, original)
            seen[(name.split("/")[0] if "undo" not in name else "undo", outcome)] += 1
            OUTCOMES[outcome] += 1
            if name == "manifest.json" or name.endswith("csr.npz"):
                assert outcome == "refused", (name, how)
            if "/undo/" in name:
                # a forged checksum lets through bytes flipped where they change nothing (a zip
                # header's date): then the history is intact and is walked like any other
                allowed = {"opened without its history"} | ({"opened with its history"} if checksums else set())
                assert outcome in allowed, (name, how)
    assert ("structures", "opened, structure rebuilt from its graph") in seen


def _undo_step(good, k: int) -> dict:
    with np.load(io.BytesIO(good[f"documents/0/undo/{k}.npz"])) as z:
        return {n: z[n] for n in z.files}


@pytest.mark.parametrize("alter", [
    lambda a: a.__setitem__("pages", a["pages"] + 2**40),
    lambda a: a.__setitem__("pages", np.full_like(a["pages"], -1)),
    lambda a: a.__setitem__("words_before", a["words_before"][:, :-1]),
    lambda a: a.__setitem__("words_after", a["words_after"] + 7),
    lambda a: a.__setitem__("index_shape", a["index_shape"] + np.array([0, 0, 5, 0])),
    lambda a: a.__setitem__("meta_after", a["meta_after"] * 2),
    lambda a: a.__setitem__("alive_after", np.ones(10**6, dtype=bool)),
    lambda a: a.__setitem__("scalars_before", np.array([2**40, 0, 0])),
    lambda a: a.update(weights_before=a["words_before"] * 1.0, weights_after=a["words_after"] * 1.0),
    lambda a: a.__setitem__("page_size", np.array(2.5)),
    lambda a: a.pop("free_before"),
], ids=["page-2^40", "page-negative", "word-range", "words", "index-size", "counters", "huge-alive",
        "huge-ids", "weights-added", "page-size-type", "missing-array"])
@pytest.mark.parametrize("step", [0, 20, 30, 33])
def test_an_altered_undo_step_with_a_forged_checksum_opens_without_history(saved, tmp_path, alter, step):
    path, original = saved
    good = members_of(path)
    arrays = _undo_step(good, step)
    alter(arrays)
    damaged = tmp_path / "d.ggesession"
    rewrite(damaged, {**good, f"documents/0/undo/{step}.npz": npz(arrays)}, checksums=True)
    data = session.read(damaged)
    assert any("opened without its undo history" in w for w in data.warnings)
    assert walk_history(data, original) == "opened without its history"
    OUTCOMES["opened without its history"] += 1


@pytest.mark.parametrize("edit, words", [
    (lambda m: m.__setitem__("window", 5), "'window' should be an object"),
    (lambda m: m.__setitem__("current", "first"), "'current' should be a whole number"),
    (lambda m: m.__setitem__("documents", 5), "'documents' should be a list"),
    (lambda m: m["documents"][0].__setitem__("structure", 99), "'structure' is 99"),
    (lambda m: m["documents"][0].__setitem__("structure", True), "'structure' should be a whole number"),
    (lambda m: m["documents"][0]["csr"].__setitem__("directed", "no"), "'directed' should be true or false"),
    (lambda m: m["structures"][0].__setitem__("file", None), "'file' should be text"),
    (lambda m: m["window"].__setitem__("state", "%%%"), "not base64"),
    (lambda m: m.pop("checksums"), "lacks 'checksums'"),
    (lambda m: m["checksums"].__setitem__("documents/0/csr.npz", "0" * 64), "checksum differs"),
], ids=["window-5", "current-text", "documents-5", "structure-99", "structure-bool", "directed-text",
        "file-null", "state-not-base64", "no-checksums", "wrong-checksum"])
def test_a_manifest_with_wrong_types_or_dangling_indices_is_refused_in_words(saved, tmp_path, edit, words):
    path, _ = saved
    good = members_of(path)
    manifest = json.loads(good["manifest.json"])
    edit(manifest)
    damaged = tmp_path / "d.ggesession"
    rewrite(damaged, {**good, "manifest.json": json.dumps(manifest).encode()}, checksums=False)
    with pytest.raises(session.SessionError, match=words) as info:
        session.read(damaged)
    assert "\n" not in str(info.value)
    OUTCOMES["refused"] += 1


def test_a_manifest_with_an_integer_of_thousands_of_digits_is_refused_in_one_sentence(saved, tmp_path):
    """Python's int() refuses 5,000 digits with a raw ValueError that says to raise its limit; the
    reader refuses the number by its length instead, saying where it is."""
    path, _ = saved
    good = members_of(path)
    manifest = json.loads(good["manifest.json"])
    manifest["current"] = 424242
    text = json.dumps(manifest).replace("424242", "7" * 5000)   # json.dumps cannot write such an int
    damaged = tmp_path / "d.ggesession"
    rewrite(damaged, {**good, "manifest.json": text.encode()}, checksums=False)
    with pytest.raises(session.SessionError, match=r"its manifest is damaged \(an integer of 5,000 digits at line 1, "
                                                   r"column \d+; at most 100 digits are read\)") as info:
        session.read(damaged)
    assert "\n" not in str(info.value) and str(damaged) in str(info.value)
    OUTCOMES["refused"] += 1


@pytest.mark.parametrize("edit", [
    lambda m: m["documents"][0]["history"][3].__setitem__("structure", 99),
    lambda m: m["documents"][0]["history"][3].__setitem__("structure", 1),
    lambda m: m["documents"][0]["history"][25].__setitem__("old", 1),
    lambda m: m["documents"][0].__setitem__("history_index", 99),
    lambda m: m["documents"][0]["history"][3].__setitem__("kind", "teleport"),
], ids=["step-structure-99", "step-on-other-structure", "replace-chain", "position-99", "unknown-kind"])
def test_a_history_that_does_not_chain_is_dropped_saying_so(saved, tmp_path, edit):
    path, original = saved
    good = members_of(path)
    manifest = json.loads(good["manifest.json"])
    edit(manifest)
    damaged = tmp_path / "d.ggesession"
    rewrite(damaged, {**good, "manifest.json": json.dumps(manifest).encode()}, checksums=False)
    data = session.read(damaged)
    assert any("opened without its undo history" in w for w in data.warnings), data.warnings
    assert walk_history(data, original) == "opened without its history"


def test_a_version_1_session_without_checksums_is_still_read_and_validated(saved, tmp_path):
    path, original = saved
    good = members_of(path)
    manifest = json.loads(good["manifest.json"])
    manifest["version"] = 1
    del manifest["checksums"]
    old = tmp_path / "v1.ggesession"
    rewrite(old, {**good, "manifest.json": json.dumps(manifest).encode()}, checksums=False)
    data = session.read(old)
    assert data.saved_as_version == 1 and walk_history(data, original) == "opened with its history"
    arrays = _undo_step(good, 5)
    arrays["pages"] = arrays["pages"] + 2**40
    rewrite(old, {**good, "manifest.json": json.dumps(manifest).encode(),
                  "documents/0/undo/5.npz": npz(arrays)}, checksums=False)
    assert walk_history(session.read(old), original) == "opened without its history"


def test_randomly_damaged_files_are_refused_or_open_and_undo_to_both_ends(saved, tmp_path):
    path, original = saved
    raw = path.read_bytes()
    rng = np.random.default_rng(14)
    for case in range(RANDOM_CASES):
        data = bytearray(raw)
        if case % 4 == 0:
            data = data[:int(rng.integers(0, len(data)))]
        else:
            for i in rng.integers(0, len(data), int(rng.integers(1, 8))):
                data[i] = int(rng.integers(0, 256))
        damaged = tmp_path / f"r{case}.ggesession"
        damaged.write_bytes(bytes(data))
        OUTCOMES[open_and_walk(damaged, original)] += 1


def test_report_outcomes():
    """Not a check: prints what the damage tests saw (for docs/reliability.md)."""
    print("\nsession damage outcomes:", dict(OUTCOMES))


def test_temporary_files_left_by_killed_saves_are_removed_when_the_session_is_saved_or_opened(saved, tmp_path):
    path, _ = saved
    target = tmp_path / "s.ggesession"
    target.write_bytes(path.read_bytes())
    dead_pid = 2**22 + 12345                       # above Linux's pid_max: no such process
    stale = [tmp_path / f".s.ggesession.{dead_pid}.abc123.tmp", tmp_path / ".s.ggesession.k2j4h5.tmp"]
    mine = tmp_path / f".s.ggesession.{os.getpid()}.zzz.tmp"      # this process may be saving now
    other = tmp_path / f".other.ggesession.{dead_pid}.abc.tmp"
    for p in (*stale, mine, other):
        p.write_bytes(b"half a session")
    session.read(target)
    assert not any(p.exists() for p in stale) and mine.exists() and other.exists()
    stale[0].write_bytes(b"again")
    session.write(session.SessionData([], []), target)
    assert not stale[0].exists() and mine.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, mine.name, other.name])
