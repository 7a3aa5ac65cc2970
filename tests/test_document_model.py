"""The GUI's document model alone, without Qt (no window, no qtbot): every edit command done,
undone and redone on a small graph returns the pages word for word; the undo stack keeps its
limit, its clean state and its macros as Qt's did; observers hear every change.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from explorer.model import commands, session
from explorer.model.document import UNDO_LIMIT, GraphDocument
from explorer.model.events import Notifier
from explorer.model.undo import Command, UndoStack
from kernels.errors import GraphEditError
from kernels.graph.io import read_graph
from kernels.graph.slotted import SlottedGraph
from tests.conftest import data_path


@pytest.fixture(scope="module")
def karate():
    return read_graph(data_path("karate.mtx"))


@pytest.fixture
def doc(karate):
    """karate on pages of 16 words (edits split pages and make large lists)."""
    slotted = SlottedGraph.from_csr(karate, page_size=16)
    return GraphDocument(name="karate", csr=karate, slotted=slotted, source="karate.mtx")


def words(g: SlottedGraph) -> dict:
    """The exact structure: pool words, weights, index, live vertices, CSR."""
    pool, wpool, index = g.host_arrays()
    return {"pool": pool.copy(), "wpool": None if wpool is None else wpool.copy(), "index": index.copy(),
            "vertices": g.vertices().copy(), "csr": g.to_csr()}


def same(a: dict, b: dict) -> bool:
    arrays = all(np.array_equal(a[k], b[k]) for k in ("pool", "index", "vertices"))
    weights = (a["wpool"] is None) == (b["wpool"] is None) and (a["wpool"] is None or
                                                                 np.array_equal(a["wpool"], b["wpool"]))
    return arrays and weights and a["csr"].equals(b["csr"])


class Heard:
    """Everything a document and its stack announce."""

    def __init__(self, document: GraphDocument):
        self.summaries: list = []
        self.history = 0
        self.clean: list[bool] = []
        self.names: list[str] = []
        self.synced = 0
        document.events.changed.connect(self.summaries.append)
        document.events.renamed.connect(self.names.append)
        document.events.synced.connect(self._synced)
        document.undo_stack.events.changed.connect(self._history)
        document.undo_stack.events.clean_changed.connect(self.clean.append)

    def _history(self) -> None:
        self.history += 1

    def _synced(self) -> None:
        self.synced += 1

    def directions(self) -> list[str]:
        return [s.direction for s in self.summaries]


def batch_file(tmp_path) -> str:
    path = tmp_path / "edits.txt"
    path.write_text("+ 0 9\n+ 3 20\n- 0 1\n")
    return str(path)


COMMANDS = {
    "add vertex": lambda d, tmp: commands.add_vertex(d),
    "remove vertex": lambda d, tmp: commands.remove_vertex(d, 33),
    "remove vertex, edges to it kept": lambda d, tmp: commands.remove_vertex(d, 0, clean=False),
    "add edge": lambda d, tmp: commands.add_edge(d, 0, 9),
    "remove edge": lambda d, tmp: commands.remove_edge(d, 0, 1),
    "edit edge": lambda d, tmp: commands.edit_edge(d, 0, 1, 9),
    "random batch, one by one": lambda d, tmp: commands.random_batch(d, 30, "mixed", seed=3),
    "random batch, vectorised": lambda d, tmp: commands.random_batch(d, 30, "mixed", seed=3, path="host"),
    "batch file": lambda d, tmp: commands.file_batch(d, batch_file(tmp)),
    "batch replayed from a copy": lambda d, tmp: commands.replayed_batch(
        d, *commands.batch_on_copy(d.slotted.copy(), 30, "mixed", 4)),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_edit_is_done_undone_and_redone_to_the_exact_pages(doc, tmp_path, name):
    heard = Heard(doc)
    before, key = words(doc.slotted), doc.key
    command = COMMANDS[name](doc, tmp_path)
    commands.push(doc, command)
    after = words(doc.slotted)
    assert not same(before, after) and doc.key != key
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undo_text() == command.text
    assert doc.csr().equals(after["csr"])                        # the snapshot follows the revision
    doc.undo_stack.undo()
    assert same(words(doc.slotted), before) and doc.undo_stack.redo_text() == command.text
    doc.slotted.check_invariants()
    doc.undo_stack.redo()
    assert same(words(doc.slotted), after)
    doc.slotted.check_invariants()
    assert heard.directions() == ["do", "undo", "redo"] and doc.revision == 3
    assert doc.journal.revision == 3 and doc.last_edit is heard.summaries[-1]


def test_a_page_size_change_swaps_the_structures_and_back(doc):
    old = doc.slotted
    before = words(old)
    rebuilt = commands.rebuild_structure(commands.structure_snapshot(old), 64)
    commands.push(doc, commands.change_page_size(doc, rebuilt))
    assert doc.slotted is rebuilt and doc.page_size == 64
    assert doc.undo_stack.undo_text() == "page size 16 -> 64 (rebuild)"
    commands.push(doc, commands.add_edge(doc, 0, 9))              # an edit on the new pages
    doc.undo_stack.set_index(0)
    assert doc.slotted is old and same(words(old), before)
    doc.undo_stack.set_index(2)
    assert doc.slotted is rebuilt and rebuilt.has_edge(0, 9) and doc.csr().equals(rebuilt.to_csr())


def test_a_refused_edit_changes_nothing_and_is_not_kept(doc, karate):
    heard = Heard(doc)
    before = words(doc.slotted)
    with pytest.raises(GraphEditError):
        commands.push(doc, commands.remove_edge(doc, 0, 33))      # no such edge
    doc.busy_reason = "rebuilding on pages of 64 words"
    with pytest.raises(GraphEditError, match="is busy: rebuilding"):
        commands.push(doc, commands.add_vertex(doc))
    read_only = GraphDocument(name="matrix", csr=karate, not_editable_reason="a rectangular matrix")
    with pytest.raises(GraphEditError, match="cannot be edited: a rectangular matrix"):
        commands.push(read_only, commands.add_vertex(read_only))
    assert same(words(doc.slotted), before) and doc.revision == 0
    assert doc.undo_stack.count() == 0 and read_only.undo_stack.count() == 0
    assert heard.summaries == [] and heard.history == 0


def test_the_document_says_what_changed(doc):
    heard = Heard(doc)
    doc.set_name("  club ")
    doc.set_name("club")                     # the same name: nothing to say
    doc.mark_synced()
    doc.note_sync(doc.revision, {"sent": "snapshot"})
    assert heard.names == ["club"] and doc.name == "club" and heard.synced == 2
    commands.push(doc, commands.add_edge(doc, 0, 9))
    assert doc.pending_pages() > 0 and heard.summaries[-1].describe().startswith("add edge 0 -- 9")
    doc.undo_stack.undo()
    assert heard.summaries[-1].describe() == "undone: add edge 0 -- 9"


# ---- the undo stack --------------------------------------------------------------------------
class Counter:
    def __init__(self):
        self.value = 0


class Add(Command):
    """Adds to a counter; merges with the next Add when ``merging``."""

    def __init__(self, counter: Counter, amount: int, merging: bool = False):
        self.counter, self.amount, self.merging = counter, amount, merging
        self.text = f"add {amount}"

    def do(self) -> None:
        if self.amount < 0:
            raise ValueError("refused")
        self.counter.value += self.amount

    def undo(self) -> None:
        self.counter.value -= self.amount

    def merge_with(self, other: Command) -> bool:
        if not (self.merging and isinstance(other, Add) and other.merging):
            return False
        self.amount += other.amount
        self.text = f"add {self.amount}"
        return True


def test_the_undo_limit_drops_the_oldest_steps():
    counter, stack = Counter(), UndoStack(limit=3)
    for amount in (1, 2, 3, 4, 5):
        stack.push(Add(counter, amount))
    assert stack.count() == 3 and stack.index() == 3 and [stack.text(i) for i in range(3)] == ["add 3", "add 4",
                                                                                                "add 5"]
    stack.set_index(0)
    assert counter.value == 1 + 2 and not stack.can_undo()
    assert not stack.is_clean() and stack.clean_index() == -1          # the saved state was dropped
    assert GraphDocument(name="g", csr=read_graph(data_path("karate.mtx"))).undo_stack.limit == UNDO_LIMIT == 500


def test_the_clean_state_is_where_it_was_saved():
    counter, stack = Counter(), UndoStack()
    clean: list[bool] = []
    stack.events.clean_changed.connect(clean.append)
    assert stack.is_clean()
    stack.push(Add(counter, 1))
    stack.push(Add(counter, 2))
    stack.set_clean()
    stack.undo()
    stack.redo()
    assert stack.is_clean() and clean == [False, True, False, True]
    stack.undo()
    stack.push(Add(counter, 5))               # the saved state was undone and is now gone
    assert not stack.is_clean() and stack.clean_index() == -1 and counter.value == 6
    stack.clear()
    assert stack.is_clean() and stack.count() == 0


def test_a_macro_is_one_step_and_a_failed_one_leaves_nothing(doc):
    heard = Heard(doc)
    before = words(doc.slotted)
    with doc.undo_stack.macro("two edges"):
        commands.push(doc, commands.add_edge(doc, 0, 9))
        assert not doc.undo_stack.can_undo()                 # not in the middle of a step
        commands.push(doc, commands.add_edge(doc, 3, 20))
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undo_text() == "two edges"
    after = words(doc.slotted)
    doc.undo_stack.undo()
    assert same(words(doc.slotted), before)
    doc.undo_stack.redo()
    assert same(words(doc.slotted), after) and heard.directions() == ["do", "do", "undo", "undo", "redo", "redo"]
    with pytest.raises(GraphEditError), doc.undo_stack.macro("refused halfway"):
        commands.push(doc, commands.add_edge(doc, 5, 30))
        commands.push(doc, commands.remove_edge(doc, 0, 33))   # refused: the first is undone too
    assert same(words(doc.slotted), after) and doc.undo_stack.count() == 1 and not doc.undo_stack.in_macro()
    with doc.undo_stack.macro("nothing"):
        pass
    assert doc.undo_stack.count() == 1                      # an empty macro is no step


def test_commands_that_merge_make_one_step_but_never_across_the_saved_state():
    counter, stack = Counter(), UndoStack()
    stack.push(Add(counter, 1, merging=True))
    stack.set_clean()
    stack.push(Add(counter, 2, merging=True))              # the saved state stays reachable
    stack.push(Add(counter, 3, merging=True))
    assert stack.count() == 2 and stack.undo_text() == "add 5" and counter.value == 6
    stack.undo()
    assert counter.value == 1 and stack.is_clean()
    with pytest.raises(ValueError):
        stack.push(Add(counter, -1))                        # refused: not kept
    assert stack.count() == 2 and stack.redo_text() == "add 5"


def test_undo_and_redo_texts_and_observers():
    counter, stack = Counter(), UndoStack()
    changes = []
    stack.events.changed.connect(lambda: changes.append((stack.index(), stack.undo_text(), stack.redo_text())))
    assert (stack.can_undo(), stack.can_redo(), stack.undo_text(), stack.redo_text()) == (False, False, "", "")
    stack.push(Add(counter, 1))
    stack.push(Add(counter, 2))
    stack.set_index(0)                                      # one notification for the whole walk
    stack.redo()
    stack.undo()
    stack.undo()                                            # nothing to undo: nothing said
    assert changes == [(1, "add 1", ""), (2, "add 2", ""), (0, "", "add 1"), (1, "add 1", "add 2"),
                       (0, "", "add 1")]


def test_an_observer_that_raises_neither_stops_the_others_nor_the_change(monkeypatch):
    caught, heard = [], []
    monkeypatch.setattr(sys, "excepthook", lambda *info: caught.append(info[1]))
    notifier = Notifier("changed")

    def broken(_value):
        raise RuntimeError("observer bug")

    notifier.connect(broken)
    notifier.connect(heard.append)
    notifier.connect(heard.append)                           # connected once
    notifier.emit(7)
    assert heard == [7] and [str(e) for e in caught] == ["observer bug"]
    assert notifier.disconnect(broken) and not notifier.disconnect(broken) and len(notifier) == 1


# ---- the session format, without Qt ----------------------------------------------------------
def test_a_saved_history_comes_back_where_it_was_left_and_walks_both_ways(doc, tmp_path, karate):
    commands.push(doc, commands.add_edge(doc, 0, 9))
    commands.push(doc, commands.change_page_size(doc, commands.rebuild_structure(
        commands.structure_snapshot(doc.slotted), 32)))
    commands.push(doc, commands.random_batch(doc, 20, "mixed", seed=5))
    commands.push(doc, commands.remove_vertex(doc, 33))
    doc.undo_stack.undo()
    states = []
    for i in range(doc.undo_stack.count() + 1):
        doc.undo_stack.set_index(i)
        states.append(words(doc.slotted))
    doc.undo_stack.set_index(3)
    path = session.write(session.collect([doc]), tmp_path / "s.ggesession")

    data = session.read(path)
    rec = data.documents[0]
    again = GraphDocument(name=rec.name, csr=rec.csr, slotted=data.structures[rec.structure], source=rec.source)
    heard = Heard(again)
    session.restore_undo_history(again, rec, data.structures)
    stack = again.undo_stack
    assert (stack.count(), stack.index(), stack.is_clean()) == (4, 3, True) and heard.summaries == []
    assert [stack.text(i) for i in range(4)] == [doc.undo_stack.text(i) for i in range(4)]
    assert same(words(again.slotted), states[3])
    for i in (4, 2, 1, 0, 4):
        stack.set_index(i)
        assert same(words(again.slotted), states[i]), i
        again.slotted.check_invariants()
    assert not stack.is_clean() and again.csr().same_structure(states[4]["csr"])
    with pytest.raises(ValueError):
        stack.load([], 0)                                     # only an empty stack is filled
