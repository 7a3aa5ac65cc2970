"""The GUI's log panel is a logging handler: records of the core (``kernels``) and of the GUI
(``explorer``) arrive in it from any thread, ``window.log`` still works and goes through
logging, and each window's own messages stay in its own panel."""

from __future__ import annotations

import logging
import threading

import pytest

from explorer.docks.log_dock import LogPanelHandler
from explorer.main_window import MainWindow
from tests import gui_support

pytestmark = pytest.mark.gui


def make_window(qtbot, tmp_path, name="a") -> MainWindow:
    """A window that is never shown, on settings of its own folder."""
    return gui_support.make_window(qtbot, tmp_path, compute=False, size=None, sub=name)


def test_a_record_logged_from_a_worker_thread_reaches_the_panel_on_the_gui_thread(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    seen_on = []
    window.log_dock.entryAdded.connect(lambda entry: seen_on.append(threading.current_thread()))
    worker = threading.Thread(target=lambda: logging.getLogger("kernels.compute.sweep").warning("cell 3 failed"))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: "cell 3 failed" in window.log_dock.messages("warning"), timeout=5000)
    assert seen_on[-1] is threading.main_thread()


def test_the_core_s_info_records_appear_and_its_debug_records_do_not(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    logging.getLogger("kernels.run.runner").info("spmv/cpu-serial on g: dropped 2 self-loops")
    logging.getLogger("kernels.graph.io.api").debug("chatter")
    assert "spmv/cpu-serial on g: dropped 2 self-loops" in window.log_dock.messages("info")
    assert "chatter" not in window.log_dock.messages()


def test_window_log_goes_through_logging_and_stays_in_its_window(qtbot, tmp_path):
    first, second = make_window(qtbot, tmp_path, "a"), make_window(qtbot, tmp_path, "b")
    records = []
    probe = logging.Handler()
    probe.emit = records.append
    logging.getLogger("explorer").addHandler(probe)
    try:
        first.log("warning", "only in the first window")
        first.log("debug", "details")
    finally:
        logging.getLogger("explorer").removeHandler(probe)
    assert [(r.name, r.levelno, r.getMessage()) for r in records] == [
        ("explorer.window", logging.WARNING, "only in the first window"), ("explorer.window", logging.DEBUG, "details")]
    assert first.log_dock.messages("warning") == ["only in the first window"]
    assert first.log_dock.messages("debug") == ["details"]
    assert "only in the first window" not in second.log_dock.messages()


def test_a_closed_window_stops_listening(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    handler = window.log_handler
    assert handler in logging.getLogger("kernels").handlers
    window.close()
    assert handler not in logging.getLogger("kernels").handlers
    assert handler not in logging.getLogger("explorer").handlers


def test_the_handler_is_a_logging_handler_on_both_package_loggers(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    assert isinstance(window.log_handler, LogPanelHandler) and isinstance(window.log_handler, logging.Handler)
    assert logging.getLogger("kernels").isEnabledFor(logging.INFO)
    assert logging.getLogger("explorer").isEnabledFor(logging.DEBUG)


@pytest.fixture
def example_plugin_registered():
    """The example plug-in's variant registered in this process (as its entry point would), and
    taken out again so that other tests see the built-in registry."""
    import importlib
    import sys
    from pathlib import Path

    from kernels.algorithms.registry import families

    families()
    folder = str(Path(__file__).resolve().parent.parent / "examples" / "plugin-triangles")
    sys.path.append(folder)
    try:
        module = importlib.import_module("gge_triangles_plugin.family")
        yield module
    finally:
        module.FAMILY.variants.pop("cpu-marker", None)
        for name in [m for m in sys.modules if m.startswith("gge_triangles_plugin")]:
            del sys.modules[name]
        sys.path.remove(folder)


def test_a_plugin_variant_appears_in_the_run_dock(qtbot, tmp_path, example_plugin_registered):
    window = make_window(qtbot, tmp_path)
    window.add_compute_docks()
    run = next(d for d in window.compute_docks if d.objectName() == "RunDock")
    run.family_box.setCurrentIndex(run.family_box.findData("triangles"))
    variants = [run.variant_box.itemData(i) for i in range(run.variant_box.count())]
    assert "cpu-marker" in variants, variants
