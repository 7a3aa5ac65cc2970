"""The host path of batch updates (``SlottedGraph.apply_updates``): checked against the
one-edge-at-a-time engine (``remove_edges`` then ``add_edges`` on a copy) and an edge dict,
with the layout invariants after every batch; refusals change nothing."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kernels.errors import GraphEditError, GraphFormatError, ParameterError
from kernels.graph.slotted import SlottedGraph
from kernels.graph.update_batches import random_batch, read_batch_file
from tests.batch_helpers import edge_dict, model_apply, random_graph


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("page_size", [16, 32, 64])
def test_batches_equal_the_engine_edge_by_edge_with_valid_pages(directed, weighted, page_size):
    g = SlottedGraph.from_csr(random_graph(40, 160, page_size, directed=directed, weighted=weighted),
                              page_size=page_size, fill=0.9)
    rng = np.random.default_rng(page_size)
    opened = 0
    for size in (5, 30, 80, 10):
        reference = g.copy()
        batch = random_batch(g, size, size // 2, rng)
        report = g.apply_updates(**batch)
        g.check_invariants()
        reference.remove_edges(*batch["delete"])
        reference.add_edges(*batch["insert"])
        assert edge_dict(g) == edge_dict(reference)
        assert report.entries_inserted == (1 if directed else 2) * size
        opened += report.pages_opened
        assert set(report.pages_touched) <= set(g.index.physical_page)
    assert opened > 0, "no batch was larger than the free words of its pages"


def test_a_batch_larger_than_the_free_slots_opens_overflow_pages_and_a_large_list():
    g = SlottedGraph.from_csr(random_graph(30, 40, 1), page_size=16, fill=1.0)
    pages = g.num_pages
    hub_targets = np.array([v for v in range(1, 30) if not g.has_edge(0, v)])
    report = g.apply_updates(insert=(np.zeros(len(hub_targets), np.int64), hub_targets))
    g.check_invariants()
    assert report.pages_opened > 0 and g.num_pages > pages
    assert g.index.large_pages.max() >= 3                       # vertex 0 spans pages now
    assert sorted(g.neighbors(0).tolist()) == sorted(set(g.neighbors(0).tolist()) | set(hub_targets.tolist()))
    report = g.apply_updates(delete=(np.zeros(len(hub_targets), np.int64), hub_targets))
    g.check_invariants()
    assert report.pages_freed > 0
    assert g.index.large_pages.max() == -1 or 0 not in g.index.first_vertex[g.index.large_pages > 0]


def test_new_entries_follow_the_survivors_in_ascending_order():
    g = SlottedGraph.from_csr(random_graph(20, 30, 2, directed=True), page_size=64)
    before = g.neighbors(3).tolist()
    gone = before[:1]
    fresh = [v for v in (19, 7, 11) if v not in before]
    g.apply_updates(delete=([3] * len(gone), gone), insert=([3] * len(fresh), fresh))
    assert g.neighbors(3).tolist() == before[1:] + sorted(fresh)


def test_an_edge_deleted_and_inserted_by_one_batch_is_reinserted_with_its_new_weight():
    g = SlottedGraph.from_csr(random_graph(20, 40, 3, weighted=True), page_size=32)
    u, v = 0, int(g.neighbors(0)[0])
    g.apply_updates(delete=([u], [v]), insert=([u], [v], [42.0]))
    assert g.edge_weight(u, v) == 42.0 and g.edge_weight(v, u) == 42.0
    g.check_invariants()


def test_weight_changes_set_both_directions():
    g = SlottedGraph.from_csr(random_graph(20, 40, 4, weighted=True), page_size=32)
    u, v = 5, int(g.neighbors(5)[0])
    model = model_apply(edge_dict(g), False, reweight=([u], [v], [7.5]))
    report = g.apply_updates(reweight=([u], [v], [7.5]))
    assert edge_dict(g) == model and report.weights_changed == (1 if u == v else 2)
    g.check_invariants()


def _refused(g, match, **batch):
    before = {k: v.copy() for k, v in g.to_arrays().items()}
    with pytest.raises(GraphEditError, match=match):
        g.apply_updates(**batch)
    after = g.to_arrays()
    assert all(np.array_equal(before[k], after[k]) for k in before), "a refused batch changed the structure"


def test_refusals_follow_the_host_rules_and_change_nothing():
    g = SlottedGraph.from_csr(random_graph(20, 40, 5), page_size=16)
    u, v = 2, int(g.neighbors(2)[0])
    absent = next(w for w in range(20) if w != u and not g.has_edge(u, w))
    _refused(g, "appears twice", insert=([u, u], [absent, absent]))
    _refused(g, "appears twice", insert=([u, absent], [absent, u]))          # one undirected edge
    _refused(g, "appears twice", delete=([u, v], [v, u]))
    _refused(g, "already exists", insert=([v], [u]))
    _refused(g, "does not exist", delete=([u], [absent]))
    g.remove_vertex(19)
    _refused(g, "target 19 of insertion .* was removed", insert=([u], [19]))
    with pytest.raises(GraphEditError, match="vertex 25 does not exist"):
        g.apply_updates(insert=([u], [25]))
    with pytest.raises(ParameterError, match="reweight"):
        g.apply_updates(reweight=([u], [v], [1.0]))
    # the first failing rule wins, then the first position in the batch
    _refused(g, "appears twice", delete=([u, u], [absent, absent]), insert=([v], [u]))
    _refused(g, f"edge {u} -- {absent} does not exist", delete=([u], [absent]), insert=([v], [u]))


def test_weight_change_of_an_edge_the_batch_inserts_is_refused():
    g = SlottedGraph.from_csr(random_graph(20, 40, 6, weighted=True), page_size=32)
    absent = next(w for w in range(1, 20) if not g.has_edge(0, w))
    _refused(g, "no weight to change", insert=([0], [absent], [1.0]), reweight=([0], [absent], [2.0]))


def test_batch_files_are_read_and_bad_lines_named(tmp_path):
    path = tmp_path / "edits.txt"
    path.write_text("# a batch\n+ 1 2 3.5\n- 4 5\n= 6 7 2\n\n")
    batch = read_batch_file(path)
    assert batch["insert"][0].tolist() == [1] and batch["insert"][2].tolist() == [3.5]
    assert batch["delete"][1].tolist() == [5] and batch["reweight"][2].tolist() == [2.0]
    path.write_text("+ 1 x\n")
    with pytest.raises(GraphFormatError, match="line 1"):
        read_batch_file(path)


@pytest.mark.parametrize("content, says", [
    (b"+ 1 2\n\xff\xfe garbage\n", "not UTF-8"),
    (b"+ 1 99999999999999999999999999\n", "out of range"),
    (b"+ 1 2 nan\n", "finite"),
    (b"= 1 2 inf\n", "finite"),
    (b"+ 1 " + b"9" * 5000 + b"\n", "integers"),          # past Python's digit limit
    (b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4, "not UTF-8"),   # a gzip file named as a batch
    (b"import os\n", "expected"),
])
def test_a_damaged_or_crafted_batch_file_is_refused_in_one_sentence(tmp_path, content, says):
    path = tmp_path / "batch.txt"
    path.write_bytes(content)
    with pytest.raises(GraphFormatError, match=says) as err:
        read_batch_file(path)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_a_batch_file_larger_than_the_memory_it_needs_is_refused_before_reading(tmp_path, monkeypatch):
    from kernels.errors import ResourceLimitError
    from kernels.graph import update_batches

    path = tmp_path / "batch.txt"
    path.write_text("+ 1 2\n" * 1000)
    monkeypatch.setattr(update_batches, "available_memory", lambda: 1000)   # far less than the file needs
    opened = []
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a) or (_ for _ in ()).throw(AssertionError))
    with pytest.raises(ResourceLimitError, match="would need"):
        read_batch_file(path)
    assert not opened


def _reference_failure(g, directed, delete, insert, reweight):
    """(category, batch position) of the first refusal by the rules of docs/updates.md, written
    from the edge view alone (no pages), or None."""
    parts = [(list(zip(*p[:2], strict=True)) if p else []) for p in (delete, insert, reweight)]
    tagged = []
    for k, part in enumerate(parts):
        first = sum(len(q) for q in parts[:k])
        tagged.append([(first + t, int(u), int(v)) for t, (u, v) in enumerate(part)])

    def key(u, v):
        return (u, v) if directed else (min(u, v), max(u, v))

    def stored(u, v):
        return g.has_vertex(u) and g.has_vertex(v) and g.has_edge(u, v)

    found = [[] for _ in range(5)]
    for part in tagged:
        seen: dict = {}
        for tag, u, v in part:
            if not (g.has_vertex(u) and g.has_vertex(v)):
                found[0].append(tag)
            seen.setdefault(key(u, v), []).append(tag)
        found[1] += [t for tags in seen.values() if len(tags) > 1 for t in tags]
    deleted = {key(u, v) for _, u, v in tagged[0]}
    inserted = {key(u, v) for _, u, v in tagged[1]}
    found[2] = [t for t, u, v in tagged[0] if not stored(u, v)]
    found[3] = [t for t, u, v in tagged[1] if stored(u, v) and key(u, v) not in deleted]
    found[4] = [t for t, u, v in tagged[2]
                if not stored(u, v) or key(u, v) in deleted or key(u, v) in inserted]
    for category, tags in enumerate(found):
        if tags:
            return category, min(tags)
    return None


@pytest.mark.parametrize("directed", [False, True])
def test_refusals_name_the_edge_the_rules_name_on_random_batches(directed):
    """Random batches, most of them invalid in one or several ways at once (removed vertex,
    duplicates, absent deletions, present insertions, bad weight changes): the host path
    refuses exactly when the rules do, naming the same edge, and changes nothing then."""
    from kernels.graph.slotted import batch_rules

    rng = np.random.default_rng(27)
    for trial in range(150):
        g = SlottedGraph.from_csr(random_graph(12, 30, trial, directed=directed, weighted=True),
                                  page_size=16)
        if trial % 3 == 0:
            g.remove_vertex(int(rng.integers(0, 12)))
        stored = list(edge_dict(g))

        def pairs(n, stored=stored):
            out = [stored[rng.integers(len(stored))] if stored and rng.random() < 0.6
                   else tuple(int(x) for x in rng.integers(0, 12, 2)) for _ in range(n)]
            return [a for a, _ in out], [b for _, b in out]

        du, dv = pairs(int(rng.integers(0, 4)))
        iu, iv = pairs(int(rng.integers(0, 4)))
        ru, rv = pairs(int(rng.integers(0, 3)))
        batch = {"delete": (du, dv), "insert": (iu, iv, [2.0] * len(iu)),
                 "reweight": (ru, rv, [3.0] * len(ru))}
        expected = _reference_failure(g, directed, (du, dv), (iu, iv), (ru, rv))
        if expected is None:
            reference = model_apply(edge_dict(g), directed, **batch)
            g.apply_updates(**batch)
            g.check_invariants()
            assert edge_dict(g) == reference
            continue
        prepared = batch_rules.prepare(g, batch["insert"], batch["delete"], batch["reweight"])
        message = str(batch_rules.refusal(g, prepared, *expected))
        _refused(g, "^" + re.escape(message) + "$", **batch)


@pytest.mark.parametrize("directed", [False, True])
def test_a_hub_with_more_updates_than_an_insertion_sort_takes_matches_the_engine(directed):
    """One source with 120 insertions and 60 deletions in one batch (its groups are sorted by
    np.sort, not insertion sort, and its list becomes a large list over several pages)."""
    g = SlottedGraph.from_csr(random_graph(300, 400, 9, directed=directed), page_size=32)
    hub = 5
    stored = [int(w) for w in g.neighbors(hub)]
    for w in range(300):                     # give the hub a long list first (engine edits)
        if w != hub and w not in stored and len(stored) < 80:
            g.add_edges([hub], [w])
            stored.append(w)
    rng = np.random.default_rng(3)
    dels = [int(w) for w in rng.permutation(stored)[:60]]
    free = [w for w in range(300) if w != hub and w not in stored]
    ins = [int(w) for w in rng.permutation(free)[:120]]
    reference = g.copy()
    g.apply_updates(delete=([hub] * len(dels), dels), insert=([hub] * len(ins), ins))
    g.check_invariants()
    reference.remove_edges([hub] * len(dels), dels)
    reference.add_edges([hub] * len(ins), ins)
    assert edge_dict(g) == edge_dict(reference)
    survivors = [w for w in stored if w not in set(dels)]
    assert [int(w) for w in g.neighbors(hub)] == survivors + sorted(ins)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_rebuild_in_many_small_tasks_equals_the_engine(monkeypatch, weighted):
    """The rebuild takes touched units in tasks of about ``UNIT_CHUNK_PAGES`` old pages, each unit
    rewritten in its own pages: with tasks of 3 pages, random batches and a hub's list grown over
    several pages leave the edges the engine leaves edge by edge, with valid pages."""
    from kernels.graph.slotted import batch_host

    monkeypatch.setattr(batch_host, "UNIT_CHUNK_PAGES", 3)
    g = SlottedGraph.from_csr(random_graph(60, 300, 5, weighted=weighted), page_size=16, fill=0.9)
    rng = np.random.default_rng(11)
    for size in (10, 120, 40, 200):
        reference = g.copy()
        batch = random_batch(g, size, size // 2, rng)
        if size == 120:                                            # a hub's list across many pages
            targets = np.array([v for v in range(1, 60) if not g.has_edge(0, v)][:40])
            batch = {"insert": (np.zeros(len(targets), np.int64), targets)}
        g.apply_updates(**batch)
        g.check_invariants()
        if "delete" in batch:
            reference.remove_edges(*batch["delete"])
        reference.add_edges(*batch["insert"])
        assert edge_dict(g) == edge_dict(reference)
    assert g.index.large_pages.max() >= 3
