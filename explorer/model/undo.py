"""Undoable commands and the undo stack, without Qt (after glue's ``Command.do/undo``).

A :class:`Command` performs itself with :meth:`~Command.do` (the first time: it may refuse by
raising, and then nothing has changed), reverses itself with :meth:`~Command.undo` and performs
itself again with :meth:`~Command.redo`. :class:`UndoStack` keeps the commands done, in order,
and a position among them, with the behaviour users knew from Qt's ``QUndoStack``:

* :meth:`~UndoStack.push` does the command first and keeps it only when that succeeded; the
  steps after the position (undone ones) are dropped, and with them a clean state among them;
* a limit on the steps kept (the oldest go first; a clean state among them can no longer be
  reached);
* a clean state (the position of the last save): :meth:`~UndoStack.is_clean`,
  :meth:`~UndoStack.set_clean`;
* macros: :meth:`~UndoStack.macro` groups the commands pushed inside it into one step; if the
  block raises, the commands it did are undone and nothing is kept;
* merging: a command whose :meth:`~Command.merge_with` absorbs the next one makes one step of
  both (never across the clean state);
* the texts of the next undo and redo, and :meth:`~UndoStack.load` to put back a history
  whose commands are already applied (a session being opened).

Observers hear of every change of position, steps or clean state through ``events.changed``
(no arguments) and of the clean state turning through ``events.clean_changed(clean)``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from explorer.model.events import Notifier


class Command:
    """One undoable step; subclasses implement :meth:`do` and :meth:`undo`."""

    text: str = ""

    def do(self) -> None:
        """Perform the command the first time (raise to refuse it: nothing may have changed)."""
        raise NotImplementedError

    def undo(self) -> None:
        raise NotImplementedError

    def redo(self) -> None:
        """Perform the command again after an undo (by default as the first time)."""
        self.do()

    def merge_with(self, other: Command) -> bool:
        """Absorb ``other`` (already done, pushed right after this one) into this step; return
        whether it was absorbed. By default commands do not merge."""
        return False


class MacroCommand(Command):
    """Several commands as one step: undone in reverse order, redone in order."""

    def __init__(self, text: str):
        self.text = text
        self.children: list[Command] = []

    def do(self) -> None:
        for child in self.children:      # children are done as they are pushed into the macro
            child.redo()

    def undo(self) -> None:
        for child in reversed(self.children):
            child.undo()

    def redo(self) -> None:
        for child in self.children:
            child.redo()


class UndoStack:
    """The commands done on one document, a position among them and its clean state."""

    def __init__(self, limit: int = 0):
        self._limit = int(limit)            # 0: unlimited
        self._commands: list[Command] = []
        self._index = 0                     # commands[:index] are done
        self._clean_index = 0               # -1: the clean state can no longer be reached
        self._macros: list[MacroCommand] = []
        self.events = _StackEvents()

    # ---- what is on it ------------------------------------------------------------------
    @property
    def limit(self) -> int:
        return self._limit

    def count(self) -> int:
        return len(self._commands)

    def index(self) -> int:
        """How many commands are done (the position: 0 is before the first)."""
        return self._index

    def command(self, i: int) -> Command:
        return self._commands[i]

    def commands(self) -> list[Command]:
        return list(self._commands)

    def text(self, i: int) -> str:
        return self._commands[i].text

    def in_macro(self) -> bool:
        return bool(self._macros)

    def can_undo(self) -> bool:
        return not self._macros and self._index > 0

    def can_redo(self) -> bool:
        return not self._macros and self._index < len(self._commands)

    def undo_text(self) -> str:
        return self._commands[self._index - 1].text if self.can_undo() else ""

    def redo_text(self) -> str:
        return self._commands[self._index].text if self.can_redo() else ""

    # ---- clean state ----------------------------------------------------------------------
    def is_clean(self) -> bool:
        return not self._macros and self._clean_index == self._index

    def clean_index(self) -> int:
        return self._clean_index

    def set_clean(self) -> None:
        """The current position is the saved one."""
        if self._macros:
            return
        with self._announcing():
            self._clean_index = self._index

    # ---- changing it ---------------------------------------------------------------------------
    def push(self, command: Command) -> None:
        """Do ``command`` and keep it as the next step (inside a macro: as part of the macro's
        step). If :meth:`Command.do` raises, the exception propagates and nothing is kept."""
        command.do()
        if self._macros:
            self._macros[-1].children.append(command)
            return
        with self._announcing():
            self._keep(command)

    def undo(self) -> None:
        if not self.can_undo():
            return
        with self._announcing():
            self._commands[self._index - 1].undo()
            self._index -= 1

    def redo(self) -> None:
        if not self.can_redo():
            return
        with self._announcing():
            self._commands[self._index].redo()
            self._index += 1

    def set_index(self, index: int) -> None:
        """Undo or redo until ``index`` commands are done (one notification at the end)."""
        if self._macros:
            return
        index = max(0, min(int(index), len(self._commands)))
        with self._announcing():
            while self._index > index:
                self._commands[self._index - 1].undo()
                self._index -= 1
            while self._index < index:
                self._commands[self._index].redo()
                self._index += 1

    def clear(self) -> None:
        """Forget every step (nothing is undone); the present is clean."""
        with self._announcing():
            self._commands.clear()
            self._macros.clear()
            self._index = self._clean_index = 0

    def load(self, commands: Iterable[Command], index: int) -> None:
        """Put back a history whose first ``index`` commands are applied and the rest undone, as
        it is (nothing is done or undone); the stack must be empty. The position is clean."""
        if self._commands or self._macros:
            raise ValueError("load() needs an empty undo stack")
        commands = list(commands)
        with self._announcing():
            self._commands = commands
            self._index = max(0, min(int(index), len(commands)))
            self._clean_index = self._index
            self._apply_limit()

    # ---- macros ---------------------------------------------------------------------------
    def begin_macro(self, text: str) -> None:
        """Commands pushed until :meth:`end_macro` become one step called ``text``."""
        with self._announcing():
            self._macros.append(MacroCommand(text))

    def end_macro(self) -> None:
        if not self._macros:
            raise RuntimeError("end_macro() without begin_macro()")
        with self._announcing():
            macro = self._macros.pop()
            if not macro.children:
                return                       # nothing happened: no step
            if self._macros:
                self._macros[-1].children.append(macro)
            else:
                self._keep(macro)

    @contextlib.contextmanager
    def macro(self, text: str) -> Iterator[MacroCommand]:
        """``with stack.macro("text"):`` the pushes inside are one step; if the block raises,
        what it did is undone and no step is kept."""
        self.begin_macro(text)
        macro = self._macros[-1]
        try:
            yield macro
        except BaseException:
            with self._announcing():
                self._macros.remove(macro)
                for child in reversed(macro.children):
                    child.undo()
            raise
        self.end_macro()

    # ---- inside ---------------------------------------------------------------------------
    def _keep(self, command: Command) -> None:
        if self._index < len(self._commands):
            del self._commands[self._index:]             # the undone steps cannot be redone now
            if self._clean_index > self._index:
                self._clean_index = -1
        top = self._commands[-1] if self._commands else None
        if top is not None and self._index != self._clean_index and top.merge_with(command):
            return
        self._commands.append(command)
        self._index += 1
        self._apply_limit()

    def _apply_limit(self) -> None:
        extra = len(self._commands) - self._limit
        if self._limit <= 0 or extra <= 0:
            return
        del self._commands[:extra]
        self._index = max(0, self._index - extra)
        if self._clean_index != -1:
            self._clean_index = -1 if self._clean_index < extra else self._clean_index - extra

    @contextlib.contextmanager
    def _announcing(self) -> Iterator[None]:
        """Notify once after the block (also when it raised midway: the position moved)."""
        state = self._state()
        clean = self.is_clean()
        try:
            yield
        finally:
            if self._state() != state:
                self.events.changed.emit()
            if self.is_clean() != clean:
                self.events.clean_changed.emit(self.is_clean())

    def _state(self) -> tuple:
        return (self._index, self._clean_index, len(self._macros), tuple(map(id, self._commands)),
                self.undo_text(), self.redo_text())

    def __repr__(self) -> str:
        return f"UndoStack({self._index}/{len(self._commands)} done, clean at {self._clean_index})"


class _StackEvents:
    def __init__(self):
        self.changed = Notifier("changed")
        self.clean_changed = Notifier("clean_changed")
