"""Page deltas and snapshots of SlottedGraph: exact undo, and refusal of anything damaged.

A delta or a snapshot may come from a file: whatever it holds, applying or loading it either
raises the project's error and leaves the structure as it was, or gives a structure whose
invariants hold. It never reaches the numba engine broken."""

from __future__ import annotations

import dataclasses
import os
import pickle

import numpy as np
import pytest

from kernels.graph.csr import CSRGraph
from kernels.graph.slotted import PageDelta, PageDeltaError, SlottedGraph, SnapshotError
from kernels.graph.slotted.delta import Trimmed
from tests.conftest import data_path

FUZZ_CASES = int(os.environ.get("GGE_DELTA_FUZZ", "200"))


def structure_state(g: SlottedGraph) -> dict:
    pool, wpool, index = g.host_arrays()
    return {"pool": pool.copy(), "wpool": None if wpool is None else wpool.copy(), "index": index.copy(),
            "csr": g.to_csr(), "vertices": g.vertices().copy(), "cases": g.case_counts,
            "counts": (g.num_vertices, g.next_vertex_id, g.num_entries, g.num_pages)}


def assert_same_structure(a: dict, b: dict) -> None:
    assert np.array_equal(a["pool"], b["pool"])
    assert (a["wpool"] is None) == (b["wpool"] is None)
    if a["wpool"] is not None:
        assert np.array_equal(a["wpool"], b["wpool"])
    assert np.array_equal(a["index"], b["index"])
    assert a["csr"].equals(b["csr"])
    assert np.array_equal(a["vertices"], b["vertices"])
    assert a["cases"] == b["cases"] and a["counts"] == b["counts"]


def karate(directed=False, weighted=True, page_size=16) -> SlottedGraph:
    import scipy.io

    m = scipy.io.mmread(str(data_path("karate.mtx")))
    return SlottedGraph.from_csr(CSRGraph.from_scipy(m, weighted=weighted, directed=directed, name="karate"),
                                 page_size=page_size)


def edited_history(g: SlottedGraph, n: int, seed: int = 0, full_copy_limit=None):
    """``n`` random edits (splits, large lists, vertex removals and restores, batches) recorded
    as deltas, with the state before each."""
    rng = np.random.default_rng(seed)
    history = []
    kwargs = {} if full_copy_limit is None else {"full_copy_limit": full_copy_limit}
    while len(history) < n:
        verts = g.vertices()
        op = int(rng.integers(0, 6))
        if op == 5:
            csr = g.to_csr()
            rows, cols = csr.row_of_entry(), csr.indices
            keep = (rows != cols) if g.directed else (rows < cols)
            if not keep.any():
                continue
            pick = rng.choice(np.flatnonzero(keep), size=min(5, int(keep.sum())), replace=False)
            r_us, r_vs = rows[pick].astype(np.int64), cols[pick].astype(np.int64)
            pairs = {(int(a), int(b)) for a, b in rng.choice(verts, (12, 2))
                     if a != b and not g.has_edge(int(a), int(b)) and (g.directed or not g.has_edge(int(b), int(a)))}
            pairs = {p for p in pairs if g.directed or (p[1], p[0]) not in pairs}
            pairs -= {(int(a), int(b)) for a, b in zip(r_us, r_vs, strict=True)}
            pairs -= {(int(b), int(a)) for a, b in zip(r_us, r_vs, strict=True)}
            a_us = np.array([p[0] for p in pairs], dtype=np.int64)
            a_vs = np.array([p[1] for p in pairs], dtype=np.int64)

            def edit(g, r_us=r_us, r_vs=r_vs, a_us=a_us, a_vs=a_vs):
                g.remove_edges(r_us, r_vs)
                if len(a_us):
                    g.add_edges(a_us, a_vs)

            names = np.unique(np.concatenate([r_us, r_vs, a_us, a_vs])).tolist()
        elif op in (0, 4):
            # op 4 piles edges on vertex 0: its list becomes a large list spanning pages
            u = 0 if op == 4 and g.has_vertex(0) else int(rng.choice(verts))
            v = int(rng.choice(verts))
            if u == v or g.has_edge(u, v) or (not g.directed and g.has_edge(v, u)):
                continue
            edit, names = (lambda g, u=u, v=v: g.add_edge(u, v, (0.5 + v) if g.weighted else None)), [u, v]
        elif op == 1:
            u = int(rng.choice(verts))
            if g.degree(u) == 0:
                continue
            v = int(g.neighbors(u)[0])
            edit, names = (lambda g, u=u, v=v: g.remove_edge(u, v)), [u, v]
        elif op == 2:
            removed = np.flatnonzero(~np.isin(np.arange(g.next_vertex_id), verts))
            if len(removed) and rng.random() < 0.5:
                r = int(rng.choice(removed))
                edit, names = (lambda g, r=r: g.add_vertex(vertex=r)), [r]
            else:
                edit, names = (lambda g: g.add_vertex()), []
        else:
            u = int(rng.choice(verts))
            edit, names = (lambda g, u=u: g.remove_vertex(u)), (lambda g, u=u: [u, *g.sources_of(u).tolist()])
        state = structure_state(g)
        _, delta = g.record_edit(edit, names, **kwargs)
        history.append((state, delta))
    return history


@pytest.mark.parametrize("directed", [False, True])
def test_page_deltas_restore_exact_pages_when_only_the_named_vertices_are_copied(directed):
    """Large pools copy only the pages of the vertices an edit names; prove that suffices."""
    g = karate(directed=directed, weighted=directed)
    history = edited_history(g, 150, seed=1, full_copy_limit=0)
    g.check_invariants()
    final = structure_state(g)
    for state, delta in reversed(history):
        g.apply_delta(delta, forward=False, verify=True)
        assert_same_structure(structure_state(g), state)
    for _, delta in history:
        g.apply_delta(delta, forward=True)
    g.check_invariants()
    assert_same_structure(structure_state(g), final)


def test_the_history_reaches_splits_large_lists_and_vertex_restores():
    g = karate()
    history = edited_history(g, 120, seed=2)
    taken = set()
    for _, d in history:
        taken |= set(d.cases())
    assert {"add_move_following", "add_become_large", "vertex_restore_in_page", "vertex_remove"} <= taken


def test_a_delta_is_plain_data_that_pickles_and_round_trips_through_arrays():
    g = karate()
    (_, delta), = edited_history(g, 1, seed=3)
    for copy in (pickle.loads(pickle.dumps(delta)), PageDelta.from_arrays(delta.to_arrays())):
        h = karate()
        h.apply_delta(copy, forward=True, verify=True)
        assert h.to_csr().equals(g.to_csr())


def test_a_delta_applied_out_of_order_is_refused_and_changes_nothing():
    g = karate()
    history = edited_history(g, 3, seed=4)
    state = structure_state(g)
    with pytest.raises(PageDeltaError, match="differ|not those"):
        g.apply_delta(history[0][1], forward=False)          # the last edit must be undone first
    with pytest.raises(PageDeltaError):
        g.apply_delta(history[2][1], forward=True)           # already applied
    assert_same_structure(structure_state(g), state)
    other = karate(page_size=32)
    with pytest.raises(PageDeltaError, match="pages of 16 words"):
        other.apply_delta(history[2][1], forward=False)


def _replace_array(delta: PageDelta, rng) -> PageDelta:
    """One damaged field: a page number out of range, a wrong word range, a size mismatch,
    another dtype, a flipped word, a changed counter."""
    name = str(rng.choice(["pages", "words_before", "words_after", "weights_before", "meta_before",
                           "meta_after", "counts_before", "index", "free", "alive", "scalars_before"]))
    how = int(rng.integers(0, 4))
    value = getattr(delta, name)
    if name == "pages":
        if len(value) == 0:
            return dataclasses.replace(delta, pages=np.array([5], np.int64))
        bad = value.copy()
        bad[int(rng.integers(0, len(bad)))] = [2**40, -1, 10_000, bad[0]][how]
        return dataclasses.replace(delta, pages=bad)
    if name in ("index", "free", "alive"):
        t: Trimmed = value
        choice = [dataclasses.replace(t, prefix=t.prefix + 3), dataclasses.replace(t, length_after=t.length_after + 1),
                  dataclasses.replace(t, after=t.after.astype(np.int64)),
                  dataclasses.replace(t, before=np.zeros(t.before.shape[:-1] + (t.before.shape[-1] + 1,),
                                                         t.before.dtype))][how]
        return dataclasses.replace(delta, **{name: choice})
    if name == "scalars_before":
        key = ["next_id", "n_alive", "one_sided", "next_id"][how]
        s = dict(value)
        s[key] = [2**40, -3, 1.5, s[key] + 1][how] if key != "one_sided" else "yes"
        return dataclasses.replace(delta, scalars_before=s)
    if value is None:
        return dataclasses.replace(delta, weights_before=np.zeros_like(delta.words_before, dtype=np.float64))
    bad = value.copy()
    if how == 0:
        bad = bad.astype(np.float32 if bad.dtype.kind == "i" else np.int32)
    elif how == 1:
        bad = bad[..., :-1]
    elif bad.size:
        flat = bad.reshape(-1)
        flat[int(rng.integers(0, flat.size))] += [0, 0, 1, 2**20][how]
    return dataclasses.replace(delta, **{name: bad})


def test_damaged_deltas_are_refused_or_leave_a_valid_structure():
    """Undo and redo through a history in which steps were damaged: every step either raises
    PageDeltaError with the structure unchanged, or leaves a structure that passes its checks."""
    rng = np.random.default_rng(5)
    g = karate()
    history = edited_history(g, 40, seed=6)
    refused = applied = 0
    for case in range(FUZZ_CASES):
        k = int(rng.integers(0, len(history)))
        state, delta = history[k]
        h = g.copy()
        for _, d in reversed(history[k + 1:]):
            h.apply_delta(d, forward=False)
        bad = _replace_array(delta, rng)
        forward = bool(case % 2)
        if forward:
            h.apply_delta(delta, forward=False)
        before = structure_state(h)
        try:
            h.apply_delta(bad, forward=forward, verify=True)
        except PageDeltaError as exc:
            assert "\n" not in str(exc)
            refused += 1
            assert_same_structure(structure_state(h), before)
        else:
            applied += 1
        h.check_invariants()
    assert refused > FUZZ_CASES // 2


def test_a_snapshot_round_trips_exactly():
    g = karate()
    edited_history(g, 30, seed=7)
    h = SlottedGraph.from_arrays({k: v.copy() for k, v in g.to_arrays().items()}, name="again")
    assert_same_structure(structure_state(h), structure_state(g))
    h.add_edge(0, 33) if not h.has_edge(0, 33) else h.remove_edge(0, 33)
    h.check_invariants()


@pytest.mark.parametrize("damage", [
    lambda a: a.pop("pool"),
    lambda a: a.__setitem__("pool", a["pool"][:-3]),
    lambda a: a.__setitem__("pool", a["pool"].astype(np.int64)),
    lambda a: a.__setitem__("index", a["index"][:3]),
    lambda a: a.__setitem__("scalars", np.array([16, 0, 1, 2**40, 5, 0, 8])),
    lambda a: a.__setitem__("scalars", np.array([17, 0, 1, 34, 34, 0, 8])),
    lambda a: a.__setitem__("scalars", np.array([16.0, 0, 1, 34, 34, 0, 8])),
    lambda a: a.__setitem__("meta", a["meta"] + 1),
    lambda a: a["pool"].__setitem__(7, 2**30),
    lambda a: a["index"].__setitem__((3, 0), 10_000),
    lambda a: a["alive"].__setitem__(3, False),
], ids=["missing", "short-pool", "dtype", "index-rows", "huge-ids", "page-size", "float-scalars", "meta",
        "word", "physical-page", "alive"])
def test_a_damaged_snapshot_is_refused_in_one_line(damage):
    g = karate()
    arrays = {k: v.copy() for k, v in g.to_arrays().items()}
    damage(arrays)
    with pytest.raises(SnapshotError) as info:
        SlottedGraph.from_arrays(arrays)
    assert "\n" not in str(info.value)


def test_randomly_damaged_snapshots_never_escape_as_raw_errors():
    rng = np.random.default_rng(8)
    g = karate()
    edited_history(g, 20, seed=9)
    good = g.to_arrays()
    refused = 0
    for _ in range(FUZZ_CASES):
        arrays = {k: v.copy() for k, v in good.items()}
        key = str(rng.choice(list(arrays)))
        flat = arrays[key].reshape(-1)
        if flat.size:
            i = int(rng.integers(0, flat.size))
            flat[i] = flat.dtype.type(not flat[i]) if flat.dtype == bool else flat[i] + flat.dtype.type(
                rng.integers(1, 1000))
        try:
            h = SlottedGraph.from_arrays(arrays)
        except SnapshotError:
            refused += 1
            continue
        h.check_invariants()          # accepted: e.g. a dirty flag or a case count changed
    assert refused > FUZZ_CASES // 2
