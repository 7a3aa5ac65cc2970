"""The public API of SlottedGraph: policies, errors, undo-friendliness, introspection."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import GraphEditError, InputRequirementError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.slotted import SlottedGraph, summary


def _triangle_plus(directed=False, weighted=True, page_size=16) -> SlottedGraph:
    g = SlottedGraph(page_size, directed=directed, weighted=weighted)
    for _ in range(5):
        g.add_vertex()
    g.add_edges([0, 1, 2, 3], [1, 2, 0, 3], weights=[1.0, 2.0, 3.0, 4.0] if weighted else None)
    return g


def _words(g: SlottedGraph):
    return g._pool.copy(), g._wpool.copy(), g._index.copy(), g._meta.copy()


def _unchanged(before, g) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(before, _words(g), strict=True))


# ---- construction -----------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, 8, 15, 1000, 2**17, 256.0, "1024"])
def test_page_sizes_outside_the_rule_are_refused(bad):
    with pytest.raises(ParameterError, match="page_size"):
        SlottedGraph(bad)


@pytest.mark.parametrize("good", [16, 32, 256, 1280, 4096])
def test_page_sizes_within_the_rule_are_accepted(good):
    assert SlottedGraph(good).page_size == good


def test_bulk_build_refuses_duplicates_rectangular_and_one_sided_undirected_input():
    dup = CSRGraph.from_edges(3, [0, 0], [1, 1], directed=True)
    with pytest.raises(InputRequirementError, match="drop-duplicates"):
        SlottedGraph.from_csr(dup)
    rect = CSRGraph.from_edges(2, [0], [2], n_cols=3, directed=True)
    with pytest.raises(InputRequirementError, match="square_graph_form"):
        SlottedGraph.from_csr(rect)
    one_sided = CSRGraph(np.array([0, 1, 1]), np.array([1]), directed=False)
    with pytest.raises(InputRequirementError, match="without its reverse"):
        SlottedGraph.from_csr(one_sided)
    with pytest.raises(ParameterError, match="fill"):
        SlottedGraph.from_csr(CSRGraph.from_edges(2, [0], [1]), fill=0.0)


def test_an_empty_graph_builds_and_converts():
    g = SlottedGraph.from_csr(CSRGraph.from_edges(0, [], [], directed=False))
    g.check_invariants()
    assert g.num_pages == 0 and g.to_csr().n_rows == 0
    assert g.add_vertex() == 0
    g.check_invariants()


# ---- errors change nothing --------------------------------------------------------------
def test_edits_on_missing_vertices_or_edges_raise_and_change_nothing():
    g = _triangle_plus()
    g.remove_vertex(4)
    before = _words(g)
    for edit, match in [
        (lambda: g.add_edge(0, 7), "does not exist"),
        (lambda: g.add_edge(0, 4), "was removed"),
        (lambda: g.add_edge(0, 1), "already exists"),
        (lambda: g.add_edge(1, 0), "already exists"),
        (lambda: g.remove_edge(0, 3), "does not exist"),
        (lambda: g.remove_edge(-1, 0), "does not exist"),
        (lambda: g.edit_edge(0, 3, 2), "does not exist"),
        (lambda: g.edit_edge(0, 1, 2), "already exists"),
        (lambda: g.remove_vertex(4), "was removed"),
        (lambda: g.add_vertex(vertex=2), "already exists"),
        (lambda: g.add_vertex(vertex=9), "cannot be restored"),
        (lambda: g.add_edges([0, 2], [3, 1]), "already exists"),
        (lambda: g.add_edges([0, 0], [4, 3]), "was removed"),
        (lambda: g.add_edges([0, 3], [3, 0]), "twice in the batch"),
        (lambda: g.remove_edges([0, 0], [1, 3]), "does not exist"),
        (lambda: g.remove_edges([0, 1], [1, 0]), "twice in the batch"),
        (lambda: g.neighbors(4), "add_vertex\\(vertex=4\\) restores it"),
        (lambda: g.add_edge(0.5, 1), "not an integer"),
        (lambda: g.add_edges([0.0], [4.0]), "integer vertex ids"),
        (lambda: g.remove_edges([0], [1.0]), "integer vertex ids"),
    ]:
        with pytest.raises(GraphEditError, match=match):
            edit()
        assert _unchanged(before, g)


def test_weights_on_an_unweighted_graph_are_refused():
    g = _triangle_plus(weighted=False)
    with pytest.raises(ParameterError, match="unweighted"):
        g.add_edge(0, 4, weight=2.0)
    with pytest.raises(ParameterError, match="unweighted"):
        g.add_edges([0], [4], weights=[2.0])


# ---- policies -----------------------------------------------------------------------------
def test_self_loops_are_stored_once_and_counted_once():
    g = _triangle_plus()
    assert g.has_edge(3, 3) and g.neighbors(3).tolist() == [3]
    assert g.num_edges == 4 and g.num_entries == 7 and g.num_self_loops == 1


def test_ids_are_not_reused_and_removed_ids_are_empty_csr_rows():
    g = _triangle_plus()
    g.remove_vertex(1)
    assert g.add_vertex() == 5
    assert g.vertices().tolist() == [0, 2, 3, 4, 5]
    csr = g.to_csr()
    assert csr.n_rows == 6 and csr.degrees().tolist() == [1, 0, 1, 1, 0, 0]


def test_remove_vertex_returns_what_restores_it():
    for directed in (False, True):
        g = _triangle_plus(directed=directed)
        before = g.to_csr()
        removed = g.remove_vertex(0)
        assert not g.has_edge(2, 0)                    # clean removal: no edge points to 0
        g.add_vertex(vertex=removed.vertex)
        g.add_edges(removed.sources, removed.targets, removed.weights)
        g.check_invariants()
        assert g.to_csr().equals(before)


def test_clean_false_leaves_edges_pointing_to_the_removed_vertex():
    g = _triangle_plus(directed=True)
    g.remove_vertex(0, clean=False)
    assert g.has_edge(2, 0)                            # the thesis' behaviour
    g.check_invariants()
    g.remove_edge(2, 0)                                # such an entry can still be removed
    assert not g.has_edge(2, 0)


def test_edit_edge_is_undone_by_the_opposite_edit():
    g = _triangle_plus()
    before = g.to_csr()
    old_w = g.edit_edge(0, 1, 4, weight=9.0)
    assert g.has_edge(4, 0) and not g.has_edge(1, 0) and g.edge_weight(0, 4) == 9.0
    g.edit_edge(0, 4, 1, weight=old_w)
    assert g.to_csr().equals(before)


def test_edits_are_deterministic():
    a, b = _triangle_plus(page_size=32), _triangle_plus(page_size=32)
    for g in (a, b):
        g.add_edges([4, 4, 1], [0, 1, 3], [5.0, 6.0, 7.0])
        g.remove_edge(0, 1)
        g.remove_vertex(2)
    assert _unchanged(_words(a), b)


def test_a_copy_is_independent():
    g = _triangle_plus()
    c = g.copy()
    c.add_edge(0, 4)
    assert not g.has_edge(0, 4) and c.has_edge(0, 4)
    g.check_invariants()
    c.check_invariants()


# ---- introspection ------------------------------------------------------------------------
def test_page_stats_and_layout_describe_the_words():
    g = SlottedGraph.from_csr(CSRGraph.from_edges(40, np.zeros(30, int), np.arange(1, 31), directed=True),
                              page_size=16)
    st = g.page_stats()
    n = g.num_pages
    assert all(len(v) == n for v in st.values())
    assert np.array_equal(st["used_words"] + st["free_words"], np.full(n, 16))
    assert st["large"][:3].all() and not st["large"][3:].any()
    for p in range(n):
        lay = g.page_layout(p)
        words = lay["words"]
        assert lay["header"]["vertices"] == words[0] == len(lay["slots"]) == st["vertices"][p]
        start, end = lay["free"]
        assert end - start == st["free_words"][p] and not words[start:end].any()
        for slot, rec in zip(lay["slots"], lay["records"], strict=True):
            assert words[slot["words"][0]] == rec["degree_word"] and words[slot["words"][1]] == rec["vertex"]
    assert g.page_layout(1)["large_list"] == {"vertex": 0, "position": 1, "pages": 3, "entries_here": 10}
    with pytest.raises(ParameterError):
        g.page_layout(n)


def test_index_is_a_read_only_view_and_memory_counts_pages_weights_and_index():
    g = _triangle_plus(page_size=32)
    idx = g.index
    with pytest.raises(ValueError):
        idx.first_vertex[0] = 3
    assert g.memory_bytes == g.num_pages * (32 * 4 + 32 * 8) + g.num_pages * 16
    s = summary(g)
    assert s["pages"] == g.num_pages and s["memory"]["slotted_bytes"] == g.memory_bytes


def test_edits_mark_exactly_the_touched_pages_dirty():
    g = SlottedGraph.from_csr(CSRGraph.from_edges(40, np.arange(39), np.arange(1, 40), directed=True),
                              page_size=16)
    g.mark_synced()
    assert len(g.dirty_physical_pages()) == 0 and not g.index_dirty
    g.add_edge(20, 5)
    page = int(np.searchsorted(g.index.first_vertex, 20, side="right")) - 1
    assert g.dirty_physical_pages().tolist() == [g.index.physical_page[page]]
    g.mark_synced()
    g.add_edges(np.full(12, 20), np.arange(22, 34))      # overflows: splits and index changes
    assert g.index_dirty and len(g.dirty_physical_pages()) >= 2
    assert g.page_stats()["dirty"].sum() == len(g.dirty_physical_pages())


# ---- the invariant checker catches broken layouts ----------------------------------------
def _corruptible() -> SlottedGraph:
    csr = CSRGraph.from_edges(30, np.concatenate([np.zeros(14, int), np.arange(1, 10)]),
                              np.concatenate([np.arange(1, 15), np.arange(2, 11)]), np.arange(1.0, 24.0),
                              directed=True)
    g = SlottedGraph.from_csr(csr, page_size=16)       # vertex 0: a 2-page large list
    g.check_invariants()
    return g


def _ordinary_page(g) -> int:
    return int(np.flatnonzero(g.page_stats()["vertices"] > 1)[0])


def _corrupt_word(g, page, word, value):
    g._pool[int(g.index.physical_page[page]) * g.page_size + word] = value


@pytest.mark.parametrize("corruption, message", [
    (lambda g: _corrupt_word(g, _ordinary_page(g), 0, 1), "records"),                # vertex count
    (lambda g: _corrupt_word(g, _ordinary_page(g), 1, 15), "overlaps the slots"),     # records end
    (lambda g: _corrupt_word(g, _ordinary_page(g), 15, 99), "ascending|live ids"),    # slot vertex id
    (lambda g: _corrupt_word(g, _ordinary_page(g), 3, 0), "packed"),                  # degree word
    (lambda g: _corrupt_word(g, 0, 3, 99), "degree word"),                            # large list total
    (lambda g: _corrupt_word(g, 1, 2, 0), "header"),                                  # large flag
    (lambda g: _corrupt_word(g, _ordinary_page(g), g.page_layout(_ordinary_page(g))["free"][0], 7), "free gap"),
    (lambda g: g._index.__setitem__((0, 2), g._index[0, 2] + 1), "index first vertex"),
    (lambda g: g._index.__setitem__((1, 1), 0), "index says position"),
    (lambda g: g._meta.__setitem__(4, 3), "counter says"),
    (lambda g: g._wpool.__setitem__(int(g.index.physical_page[2]) * 16 + 1, 5.0), "weight pool"),
    (lambda g: g._pool.__setitem__(slice(len(g._pool) - 3, len(g._pool) - 2), 4), "not blank"),
])
def test_check_invariants_names_what_is_broken(corruption, message):
    from kernels.graph.slotted import LayoutInvariantError

    g = _corruptible()
    g._reserve(2)                                        # a spare page at the end of the pool
    corruption(g)
    with pytest.raises(LayoutInvariantError, match=message):
        g.check_invariants()


def test_check_invariants_catches_a_duplicate_entry_and_a_one_sided_undirected_edge():
    from kernels.graph.slotted import LayoutInvariantError

    g = SlottedGraph(64, directed=True)
    for _ in range(3):
        g.add_vertex()
    g.add_edges([0, 0], [1, 2])
    _corrupt_word(g, 0, 5, 1)                            # 0 -> 1, 0 -> 1
    with pytest.raises(LayoutInvariantError, match="duplicate"):
        g.check_invariants()
    u = SlottedGraph(64, directed=False)
    for _ in range(3):
        u.add_vertex()
    u.add_edges([0], [1])
    u._pool[4] = 2                                       # 0 -> 2 where 0 -> 1 was; 1 -> 0 stays
    with pytest.raises(LayoutInvariantError, match="no v -> u"):
        u.check_invariants()


# ---- weights and vertex ids that are not numbers (issue 14, part 6) ------------------------
@pytest.mark.parametrize("bad", ["2.5", 1 + 2j, [1.0], float("nan"), float("inf"), -float("inf"), True, None])
def test_a_weight_that_is_not_a_finite_real_number_is_refused_and_changes_nothing(bad):
    g = _triangle_plus(weighted=True)
    before = _words(g)
    if bad is not None:
        with pytest.raises(ParameterError, match="weight"):
            g.add_edge(0, 4, bad)
        with pytest.raises(ParameterError, match="weight"):
            g.edit_edge(0, 1, 4, weight=bad)
    with pytest.raises(ParameterError, match="weights"):
        g.add_edges([0, 1], [4, 4], weights=[1.0, bad])
    assert _unchanged(before, g)
    g.check_invariants()


def test_integer_and_numpy_weights_are_accepted_and_float32_overflow_is_refused():
    g = _triangle_plus(weighted=True)
    g.add_edge(0, 4, 3)
    g.add_edge(1, 4, np.float32(2.5))
    g.add_edges([2], [4], weights=np.array([7], dtype=np.int64))
    assert g.edge_weight(0, 4) == 3.0 and g.edge_weight(1, 4) == 2.5 and g.edge_weight(2, 4) == 7.0
    small = SlottedGraph(16, weighted=True, weight_dtype=np.float32)
    small.add_vertex()
    small.add_vertex()
    with pytest.raises(ParameterError, match="float32"):
        small.add_edge(0, 1, 1e300)
    small.check_invariants()


@pytest.mark.parametrize("bad", [True, np.bool_(False), float("nan"), float("inf"), 1.0, "1", [1]])
def test_a_vertex_id_that_is_not_an_integer_is_refused_in_every_edit(bad):
    g = _triangle_plus()
    g.remove_vertex(1)
    before = _words(g)
    for edit in (lambda: g.add_vertex(vertex=bad), lambda: g.add_edge(bad, 0), lambda: g.add_edge(0, bad),
                 lambda: g.remove_edge(bad, 2), lambda: g.remove_vertex(bad), lambda: g.edit_edge(0, 2, bad),
                 lambda: g.add_edges([bad], [0]), lambda: g.remove_edges([0], [bad])):
        with pytest.raises(GraphEditError):
            edit()
    assert _unchanged(before, g)
    assert not g.has_vertex(True) and not g.has_vertex(1)


def test_a_clean_removal_after_a_kept_one_removes_every_entry_pointing_to_the_vertex():
    g = _triangle_plus(weighted=False)      # 0 -- 1, 1 -- 2, 2 -- 0, 3 -- 3
    g.remove_vertex(1, clean=False)           # 0 and 2 keep their entries to 1
    g.add_vertex(vertex=1)
    g.remove_vertex(1, clean=True)
    assert 1 not in g.neighbors(0).tolist() and 1 not in g.neighbors(2).tolist()
    assert g.sources_of(1).tolist() == []
    g.check_invariants()
