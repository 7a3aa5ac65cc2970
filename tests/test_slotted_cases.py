"""Each rule case of the slotted-page layout, triggered on purpose on 16-word pages.

A 16-word page has 13 usable words; a vertex costs 3 (degree word + slot pair) plus one word
per entry, and a full page of a large list holds 10 entries. Every test checks which case
the edit took (``case_counts``), the resulting layout, and the invariants.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.graph.csr import CSRGraph
from kernels.graph.slotted import SlottedGraph

P = 16


def _counts_moved(g: SlottedGraph, edit) -> dict[str, int]:
    before = g.case_counts
    edit()
    g.check_invariants()
    return {k: v - before[k] for k, v in g.case_counts.items() if v != before[k]}


def _packed(n: int, edges=(), directed=True, weighted=False) -> SlottedGraph:
    """n vertices packed tightly (fill 1.0) with the given edges."""
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.arange(1, len(edges) + 1, dtype=float) if weighted else None
    csr = CSRGraph.from_edges(n, src, dst, w, directed=directed)
    return SlottedGraph.from_csr(csr, page_size=P, fill=1.0)


def _page_vertices(g: SlottedGraph) -> list[list[int]]:
    return [[r["vertex"] for r in g.page_layout(p)["records"]] for p in range(g.num_pages)]


def _hub(n_targets: int, weighted=False) -> SlottedGraph:
    """Vertex 0 pointing to 1..n_targets, everything else isolated."""
    return _packed(n_targets + 2, [(0, t) for t in range(1, n_targets + 1)], weighted=weighted)


# ---- adding an edge ---------------------------------------------------------------------
def test_add_edge_with_room_shifts_later_lists_in_place():
    g = _packed(4)                                     # 4 x 3 words: one page, 1 word free
    assert _page_vertices(g) == [[0, 1, 2, 3]]
    assert _counts_moved(g, lambda: g.add_edge(0, 1)) == {"add_in_place": 1}
    layout = g.page_layout(0)
    assert [r["degree_word"] for r in layout["records"]] == [3, 5, 6, 7]
    assert layout["free"] == (8, 8)                    # page exactly full now


def test_full_page_moves_the_lists_after_the_source_to_a_new_page():
    g = _packed(4, [(0, 1)])
    assert _counts_moved(g, lambda: g.add_edge(0, 2)) == {"add_move_following": 1}
    assert _page_vertices(g) == [[0], [1, 2, 3]]
    assert g.index.first_vertex.tolist() == [0, 1]
    assert sorted(g.neighbors(0).tolist()) == [1, 2]


def test_full_page_moves_the_source_list_itself_when_it_is_last():
    g = _packed(4, [(3, 0)])
    assert _counts_moved(g, lambda: g.add_edge(3, 1)) == {"add_move_own": 1}
    assert _page_vertices(g) == [[0, 1, 2], [3]]
    assert sorted(g.neighbors(3).tolist()) == [0, 1]


def test_a_list_alone_in_a_full_page_becomes_a_large_list():
    g = _hub(10)                                       # 3 + 10 words: vertex 0 fills its page
    assert _page_vertices(g)[0] == [0]
    assert _counts_moved(g, lambda: g.add_edge(0, 11)) == {"add_become_large": 1}
    idx = g.index
    assert idx.large_position[:2].tolist() == [0, 1] and idx.large_pages[:2].tolist() == [2, 2]
    assert g.page_layout(0)["header"]["large"] == 1 and g.page_layout(1)["large_list"]["entries_here"] == 1
    assert g.degree(0) == 11


def test_a_large_list_appends_to_its_last_page_then_grows_by_a_page():
    g = _hub(20)                                       # 2 full pages of 10 entries
    assert g.index.large_pages[0] == 2
    assert _counts_moved(g, lambda: g.add_edge(0, 21)) == {"add_large_new_page": 1}
    assert g.index.large_pages[:3].tolist() == [3, 3, 3]
    g.add_vertex()
    assert _counts_moved(g, lambda: g.add_edge(0, 22)) == {"add_large_append": 1}
    assert g.degree(0) == 22


# ---- removing an edge -------------------------------------------------------------------
def test_remove_edge_swaps_with_the_last_entry_and_compacts_the_page():
    g = _packed(4, [(0, 1), (0, 2), (1, 3)])
    assert _counts_moved(g, lambda: g.remove_edge(0, 1)) == {"remove_in_page": 1}
    assert g.neighbors(0).tolist() == [2]              # the last entry took the hole
    assert g.page_layout(0)["records"][1]["degree_word"] == 5


def test_remove_from_a_large_list_keeps_every_page_but_the_last_full():
    g = _hub(25)                                       # 10 + 10 + 5
    assert _counts_moved(g, lambda: g.remove_edge(0, 3)) == {"remove_large": 1}
    layout = g.page_layout(0)
    assert layout["large_list"]["entries_here"] == 10 and layout["records"][0]["neighbors"][2] == 25


def test_an_emptied_trailing_page_of_a_large_list_is_freed():
    g = _hub(21)                                       # 10 + 10 + 1
    assert _counts_moved(g, lambda: g.remove_edge(0, 21)) == {"remove_free_trailing_page": 1}
    assert g.index.large_pages[:2].tolist() == [2, 2]


def test_a_large_list_back_to_one_page_is_an_ordinary_page_again():
    g = _hub(11)                                       # 10 + 1
    moved = _counts_moved(g, lambda: g.remove_edge(0, 5))
    assert moved == {"remove_free_trailing_page": 1, "remove_large_to_ordinary": 1}
    assert g.index.large_position[0] == -1 and g.page_layout(0)["header"]["large"] == 0
    assert g.degree(0) == 10


# ---- vertices ---------------------------------------------------------------------------
def test_new_vertices_join_the_last_page_only_while_60_percent_of_it_is_free():
    g = SlottedGraph(P, directed=True)
    assert _counts_moved(g, g.add_vertex) == {"vertex_new_page": 1}        # free 10 of 16 after
    assert _counts_moved(g, g.add_vertex) == {"vertex_to_last_page": 1}    # 10 >= 9.6: joins
    assert _counts_moved(g, g.add_vertex) == {"vertex_new_page": 1}        # 7 < 9.6: new page
    assert _page_vertices(g) == [[0, 1], [2]]


def test_removing_a_vertex_drops_its_record_and_slot_and_fixes_the_index():
    g = _packed(4, [(0, 1)])
    assert _counts_moved(g, lambda: g.remove_vertex(0)) == {"vertex_remove": 1}
    assert _page_vertices(g) == [[1, 2, 3]] and g.index.first_vertex.tolist() == [1]


def test_removing_the_last_vertex_of_a_page_deletes_the_page():
    g = SlottedGraph(P, directed=True)
    for _ in range(3):
        g.add_vertex()
    assert _counts_moved(g, lambda: g.remove_vertex(2)) == {"vertex_remove_delete_page": 1}
    assert g.num_pages == 1


def test_removing_a_vertex_with_a_large_list_frees_all_its_pages():
    g = _hub(25)
    pages = g.num_pages
    assert _counts_moved(g, lambda: g.remove_vertex(0)) == {"vertex_remove_large": 1}
    assert g.num_pages == pages - 3


def test_a_restored_id_goes_back_into_its_page_when_there_is_room():
    g = _packed(4)
    g.remove_vertex(1)
    assert _counts_moved(g, lambda: g.add_vertex(vertex=1)) == {"vertex_restore_in_page": 1}
    assert _page_vertices(g) == [[0, 1, 2, 3]]


def test_a_restored_id_splits_a_full_page():
    g = _packed(4)
    g.remove_vertex(1)
    g.add_edges([0, 0, 0, 2], [2, 3, 0, 3])           # page full again
    assert _counts_moved(g, lambda: g.add_vertex(vertex=1)) == {"vertex_restore_split": 1}
    assert _page_vertices(g) == [[0, 1], [2, 3]]


def test_a_restored_id_between_two_large_lists_gets_a_page_of_its_own():
    g = _packed(14, [(h, t) for h in (0, 2) for t in range(3, 14)])
    g.remove_vertex(1)                                 # its page was its alone: deleted
    assert g.index.large_pages.tolist()[:4] == [2, 2, 2, 2]
    assert _counts_moved(g, lambda: g.add_vertex(vertex=1)) == {"vertex_restore_new_page": 1}
    assert _page_vertices(g)[:4] == [[0], [0], [1], [2]]


# ---- the same cases in an undirected, weighted graph ------------------------------------
def test_undirected_edits_store_both_directions_with_one_weight():
    g = SlottedGraph(P, directed=False, weighted=True)
    for _ in range(14):
        g.add_vertex()
    g.add_edges(np.zeros(12, dtype=int), np.arange(1, 13), weights=np.arange(1.0, 13.0))
    assert g.case_counts["add_become_large"] == 1
    g.check_invariants()
    assert g.edge_weight(5, 0) == g.edge_weight(0, 5) == 5.0
    assert g.num_edges == 12 and g.num_entries == 24
    g.remove_vertex(0)
    g.check_invariants()
    assert g.num_edges == 0


@pytest.mark.parametrize("page_size", [16, 32, 256, 1024, 4096])
def test_every_page_size_builds_and_edits(page_size):
    rng = np.random.default_rng(page_size)
    src, dst = rng.integers(0, 300, 3000), rng.integers(0, 300, 3000)
    hub = np.zeros(1500, dtype=np.int64)               # one list of ~1500: large for small pages
    csr = CSRGraph.from_edges(300, np.concatenate([src, hub]), np.concatenate([dst, rng.integers(0, 300, 1500)]),
                              directed=True)
    from kernels.graph.cleanup import drop_duplicates

    csr = drop_duplicates(csr)
    g = SlottedGraph.from_csr(csr, page_size=page_size)
    g.check_invariants()
    assert g.to_csr().equals(csr)
    for _ in range(50):
        u, v = (int(x) for x in rng.integers(0, 300, 2))
        if g.has_edge(u, v):
            g.remove_edge(u, v)
        else:
            g.add_edge(u, v)
    g.check_invariants()
