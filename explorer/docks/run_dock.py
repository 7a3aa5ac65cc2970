"""The Run dock: family → variant → parameters → target, repetitions; Run, Sweep, Resume Sweep, Cancel.

Everything on the form comes from the algorithm registry (:mod:`kernels.algorithms.registry`):
a new family or variant appears here without GUI code of its own. Parameters are checked by
the registry before anything is sent (a bad value or a broken constraint is an error on the
form, and in the log when Run is pressed); jobs go to the window's
:class:`~explorer.compute.ComputeClient`, which runs them in the worker process. Results are
drawn by the Results dock; this dock reports progress, failures and worker restarts.
Every sweep appends each finished cell to its file (the settings' data folder); Resume Sweep
continues such a file on the current graph (``run_sweep(resume=True)``), running only the
missing cells, or says why it cannot.
"""

from __future__ import annotations

import contextlib
import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.compute import ComputeClient, ComputeTask
from explorer.compute.cluster_ui import ClusterControls
from explorer.compute.targets import default_target_for, describe_target, targets_for, unavailable_reason
from explorer.docks.run_form import ParamForm, SweepPanel, check_params
from explorer.model.requests import DEFAULT_TIME_LIMIT_S, RunRequest, SweepRequest
from explorer.model_signals import signals
from explorer.window.compute_dock import ComputeDock
from kernels.algorithms.registry import check_vertex_params, families, plugin_problems
from kernels.errors import GraphKernelsError, ParameterError
from kernels.measure.targets import Target
from kernels.run.sim_estimate import estimate, format_duration

ERROR_COLOUR = "#b01010"
# the Launch combo: label, the runner's launch mode (kernels.measure.cuda_graphs.LAUNCH_MODES)
LAUNCH_CHOICES = (("Auto", "auto"), ("CUDA graph", "graph"), ("Direct", "direct"),
                  ("Queued (device time)", "queued"))


def _select_saved(combo: QComboBox, value) -> None:
    """Select the item whose data is ``value``, a session's untrusted text: anything but one of
    the combo's strings leaves the choice as it is (``findData`` of a huge int raises)."""
    index = combo.findData(value) if isinstance(value, str) else -1
    if index >= 0:
        combo.setCurrentIndex(index)


def _how_timed(record: dict) -> str:
    """``, device time (graph replays); 12.3 ms in all``: how the kernel time was taken, and the
    run's whole host time beside it (a live-page run's sync and dispatch are not kernel time)."""
    from explorer.plots.format import format_seconds

    timing = record.get("timing") or {}
    mode = timing.get("launch", "direct")
    how = {"graph": "device time, CUDA-graph replays", "queued": "device time, queued launches",
           "direct": "direct launches, host overhead included"}.get(mode, mode)
    total = (timing.get("stages") or {}).get("total_s")
    return f", {how}" + (f"; {format_seconds(total)} for the whole run" if total else "") \
        if Target.read(record.get("target")) == Target.CUDA else ""


def _simulated(target: str | None) -> bool:
    """Whether the Run dock's target (its text, ``None`` when none is offered) is the simulator's,
    here or on a cluster."""
    chosen = Target.read(target)
    return chosen is not None and chosen.simulated


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _cell_key(params: dict, names: list[str]) -> tuple:
    """A configuration's swept values, told apart by type (True is not 1)."""
    return tuple((type(params.get(n)) is bool, params.get(n)) for n in names)


class RunDock(QDockWidget, ComputeDock):
    """Choose and run a variant, or sweep its parameters, on the current graph."""

    refused = Signal(str)          # a request refused before running (the reason)

    def __init__(self, window):
        super().__init__("Run", window)
        self.setObjectName("RunDock")
        self.window_ = window
        self.client = ComputeClient.for_window(window)
        self.families = families()
        from kernels.graph.io.registry import format_problems, formats

        formats()                                   # format plug-ins load now, so that their problems are said
        for problem in plugin_problems() + format_problems():   # a misspelt plug-in: said, the rest works
            window.log("warning", problem)
        self.document = None
        self.results = None                         # the Results dock: Resume Sweep continues its shown sweep
        self.task: ComputeTask | None = None
        self._job_label = ""
        # launch parameters as last set, per variant: switching variant and back keeps them
        self._kept_params: dict[tuple[str, str], dict] = {}
        self._shown: tuple[str, str] | None = None
        self._building = False

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 6)
        self.graph_label = QLabel()
        self.graph_label.setWordWrap(True)
        layout.addWidget(self.graph_label)

        top = QFormLayout()
        self.family_box = QComboBox()
        for name, fam in self.families.items():
            self.family_box.addItem(name, name)
            self.family_box.setItemData(self.family_box.count() - 1, fam.title, Qt.ItemDataRole.ToolTipRole)
        self.variant_box = QComboBox()
        top.addRow("family", self.family_box)
        top.addRow("variant", self.variant_box)
        layout.addLayout(top)
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.description.setStyleSheet("color: #444;")
        layout.addWidget(self.description)

        params_box = QGroupBox("parameters")
        params_layout = QVBoxLayout(params_box)
        self.form = ParamForm()
        params_layout.addWidget(self.form)
        layout.addWidget(params_box)

        settings = QFormLayout()
        self.target_box = QComboBox()
        self.target_box.setToolTip("where the variant runs: cuda (the GPU), sim (numba's CUDA simulator: correct "
                                   "but slow, its times are not GPU times) or cpu")
        self.repeat_box = QSpinBox()
        self.repeat_box.setRange(1, 1000)
        self.repeat_box.setValue(5)
        self.repeat_box.setToolTip("timed repetitions after one untimed warm-up; the chart shows their median, "
                                   "min and max")
        self.time_limit_box = QDoubleSpinBox()
        self.time_limit_box.setRange(1, 86400)
        self.time_limit_box.setDecimals(0)
        self.time_limit_box.setSuffix(" s")
        self.time_limit_box.setValue(DEFAULT_TIME_LIMIT_S)
        self.time_limit_box.setToolTip("a run (or a sweep's configuration) that takes longer is stopped: the "
                                       "worker is killed and restarted")
        self.launch_box = QComboBox()
        for label, mode in LAUNCH_CHOICES:
            self.launch_box.addItem(label, mode)
        self.launch_box.setToolTip("how timed launches are made on a GPU: Auto replays a CUDA graph captured from "
                                   "the variant's launch where it can (a fixed kernel sequence, CuPy present), "
                                   "else launches directly; CUDA graph asks for it (the record says if and why "
                                   "it fell back); Direct times numba launches, their host overhead included; "
                                   "Queued times the device alone, the launches queued behind a busy kernel "
                                   "(for vendor libraries CuPy cannot capture)")
        settings.addRow("target", self.target_box)
        settings.addRow("repetitions", self.repeat_box)
        settings.addRow("launch", self.launch_box)
        settings.addRow("time limit", self.time_limit_box)
        layout.addLayout(settings)

        sweep_box = QGroupBox("sweep")
        sweep_layout = QVBoxLayout(sweep_box)
        self.sweep_panel = SweepPanel()
        sweep_layout.addWidget(self.sweep_panel)
        layout.addWidget(sweep_box)
        layout.addStretch(1)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(body)

        # the buttons, errors and progress stay in view however long the form is
        footer = QWidget()
        foot = QVBoxLayout(footer)
        foot.setContentsMargins(6, 2, 6, 6)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {ERROR_COLOUR};")
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        foot.addWidget(self.error_label)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("run the variant once with these parameters (Ctrl+R)")
        self.run_button.setDefault(True)
        self.sweep_button = QPushButton("Sweep")
        self.sweep_button.setToolTip("run every configuration of the sweep above (Ctrl+Shift+R)")
        self.resume_button = QPushButton("Resume Sweep")
        self.resume_button.setToolTip("run only the configurations the shown sweep lacks (it was cancelled or "
                                      "killed), adding them to its file; on the current graph")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("stop the run (its worker is restarted) or the sweep (what finished is kept)")
        for b in (self.run_button, self.sweep_button, self.resume_button, self.cancel_button):
            buttons.addWidget(b)
        foot.addLayout(buttons)
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(12)
        self.progress.setVisible(False)
        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)
        foot.addWidget(self.progress)
        foot.addWidget(self.progress_label)

        outer = QWidget()
        outer_layout = QVBoxLayout(outer)
        outer_layout.setContentsMargins(0, 0, 0, 0)
        outer_layout.setSpacing(0)
        outer_layout.addWidget(scroll, 1)
        outer_layout.addWidget(footer)
        self.setWidget(outer)

        self._elapsed_timer = QTimer(self)
        self._elapsed_timer.setInterval(500)
        self._elapsed_timer.timeout.connect(self._show_elapsed)

        self.family_box.currentIndexChanged.connect(self._family_chosen)
        self.variant_box.currentIndexChanged.connect(self._variant_chosen)
        self.form.changed.connect(self.validate)
        self.sweep_panel.changed.connect(self.validate)
        self.target_box.currentIndexChanged.connect(self.validate)
        self.run_button.clicked.connect(self.run)
        self.sweep_button.clicked.connect(self.sweep)
        self.resume_button.clicked.connect(lambda _c=False: self.resume_sweep())
        self.cancel_button.clicked.connect(self.cancel)
        self.client.busyChanged.connect(lambda _b: self._update_buttons())
        self.client.workerRestarted.connect(self._on_worker_restarted)

        window.currentDocumentChanged.connect(self.set_document)
        self._install_menu(window)
        self.cluster_controls = ClusterControls(window, self.client.cluster, self._variant_chosen)
        self._family_chosen()
        self.set_document(window.current_document())
        results = window.findChild(QDockWidget, "ResultsDock")
        if results is not None:
            self.watch_results(results)

    # ==== menus ====================================================================================
    def _install_menu(self, window) -> None:
        """A Run menu on the window's menu bar (before View), so every command has a key."""
        bar = window.menuBar()
        menu = bar.addMenu("&Run")
        view_menu = getattr(window, "view_menu", None)
        if view_menu is not None:
            bar.insertMenu(view_menu.menuAction(), menu)
        self.menu = menu

        def action(text, slot, shortcut=None, tip=""):
            act = QAction(text, window)
            if shortcut:
                act.setShortcut(QKeySequence(shortcut))
            act.setStatusTip(tip)
            act.triggered.connect(lambda _c=False: slot())
            menu.addAction(act)
            return act

        self.run_action = action("&Run", self.run, "Ctrl+R", "run the chosen variant on the current graph")
        self.sweep_action = action("&Sweep", self.sweep, "Ctrl+Shift+R", "run every configuration of the sweep")
        self.resume_action = action("Res&ume Sweep", self.resume_sweep, None,
                                    "run only the configurations the shown sweep lacks, adding them to its file")
        action("Resume Sweep from &File…", self.resume_from_file_dialog, None,
               "continue a sweep file (one a killed or cancelled sweep left) on the current graph")
        self.cancel_action = action("&Cancel", self.cancel, "Ctrl+.", "stop the running job")
        menu.addSeparator()
        action("Show Run &Panel", lambda: (self.show(), self.raise_(), self.family_box.setFocus()), "Ctrl+Alt+R")
        action("Restart &Worker", self.restart_worker, None,
               "stop the worker processes; the next run starts a fresh one")
        action("Simulator &Time Before Asking…", self.simulator_limit_dialog, None,
               "runs and sweeps on the CUDA simulator estimated to take longer ask first")

    def watch_results(self, results) -> None:
        """Follow the Results dock's shown sweep: Resume Sweep is enabled when it can be continued."""
        self.results = results
        results.resumableChanged.connect(self._update_buttons)
        self._update_buttons()

    # ==== the current graph ==========================================================================
    def set_document(self, document) -> None:
        if self.document is not None:
            with contextlib.suppress(RuntimeError, TypeError):    # already gone with its tab
                signals(self.document).changed.disconnect(self._on_document_changed)
        self.document = document
        if document is not None:
            signals(document).changed.connect(self._on_document_changed)
        self._on_document_changed()

    def _on_document_changed(self, *_args) -> None:
        d = self.document
        if d is None:
            self.graph_label.setText("<i>no graph open: open or generate one to run kernels on it</i>")
        else:
            kind = "directed" if d.directed else "undirected"
            self.graph_label.setText(f"on <b>{html.escape(d.name)}</b> — {d.num_vertices:,} vertices, "
                                     f"{d.num_edges:,} edges, {kind}")
        # a vertex parameter set on another graph (or before the graph shrank) is flagged now,
        # on the form, not when the run is refused
        self.validate()

    # ==== family, variant, form ====================================================================
    @property
    def family(self):
        return self.families.get(self.family_box.currentData())

    @property
    def variant(self):
        fam = self.family
        name = self.variant_box.currentData()
        return fam.variants.get(name) if fam is not None and name else None

    def _family_chosen(self, *_args) -> None:
        fam = self.family
        self._building = True
        self.variant_box.clear()
        if fam is not None:
            for name, var in fam.variants.items():
                reason = unavailable_reason(var)
                label = f"{name}  ({var.kind})" + ("  — unavailable" if reason else "")
                self.variant_box.addItem(label, name)
                tip = var.description + (f"\nunavailable here: {reason}" if reason else "")
                self.variant_box.setItemData(self.variant_box.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
            # start on the first variant that runs here, GPU ones first: that is what users came for
            order = sorted(range(len(fam.variants)), key=lambda i: (
                unavailable_reason(list(fam.variants.values())[i]) is not None,
                not list(fam.variants.values())[i].is_gpu, i))
            if order:
                self.variant_box.setCurrentIndex(order[0])
        self._building = False
        self._variant_chosen()

    def _variant_chosen(self, *_args) -> None:
        if self._building:
            return
        fam, var = self.family, self.variant
        if fam is None or var is None:
            return
        if self._shown is not None and self.form.fields:
            self._kept_params[self._shown] = self.form.texts()
        self._shown = (fam.name, var.name)
        params = fam.all_params(var)
        self.form.set_params(params)
        if self._shown in self._kept_params:
            self.form.set_texts(self._kept_params[self._shown])
        self.sweep_panel.set_params(params)
        text = f"<b>{html.escape(fam.title)}</b><br>{html.escape(var.description)}"
        if fam.needs:
            text += f"<br><small>input: {html.escape(fam.needs)}; checked against {html.escape(fam.reference_name)}"\
                    "</small>"
        if var.constraints:
            text += "<br><small>constraints: " + "; ".join(
                html.escape(c.expression + (f" ({c.explanation})" if c.explanation else "")) for c in var.constraints
            ) + "</small>"
        self.description.setText(text)
        previous = self.target_box.currentData()
        self.target_box.blockSignals(True)
        self.target_box.clear()
        offered = list(targets_for(var))
        for t in offered:
            self.target_box.addItem(describe_target(t), t)
        cluster = self.client.cluster
        for t in cluster.targets_for(var):          # a connected cluster's targets come after the local ones
            self.target_box.addItem(cluster.describe_target(t), t)
            offered.append(t)
        wanted = previous if previous in offered else default_target_for(var)
        if wanted is not None:
            self.target_box.setCurrentIndex(self.target_box.findData(wanted))
        self.target_box.setEnabled(self.target_box.count() > 1)
        self.target_box.blockSignals(False)
        self.validate()

    def choose(self, family: str, variant: str, params: dict | None = None, target: str | None = None,
               repeat: int | None = None) -> None:
        """Set the form as a user would (tests, sessions, scripts)."""
        index = self.family_box.findData(family)
        if index < 0:
            raise GraphKernelsError(f"no algorithm family '{family}' here (families: {', '.join(self.families)})")
        self.family_box.setCurrentIndex(index)
        index = self.variant_box.findData(variant)
        if index < 0:
            raise GraphKernelsError(f"{family} has no variant '{variant}'")
        self.variant_box.setCurrentIndex(index)
        if params:
            self.form.set_texts({k: v for k, v in params.items()})
        if target is not None:
            index = self.target_box.findData(target)
            if index < 0:
                raise GraphKernelsError(f"{family}/{variant} cannot run on '{target}' here")
            self.target_box.setCurrentIndex(index)
        if repeat is not None:
            self.repeat_box.setValue(repeat)
        self.validate()

    # ==== checking =================================================================================
    def validate(self) -> str:
        """Check the form through the registry; show and return the first problem ('' if none)."""
        fam, var = self.family, self.variant
        if fam is None or var is None:
            return ""
        problems = []
        reason = unavailable_reason(var)
        if reason:
            problems.append(f"{fam.name}/{var.name} cannot run here: {reason}")
        params, error, bad = check_params(fam, var, self.form)
        if error:
            problems.append(error)
        elif params is not None:
            error, bad = self._vertex_problem(fam, params)
            if error:
                problems.append(error)
        self.form.mark_errors(bad)
        self._update_sweep_summary()
        text = problems[0] if problems else ""
        self.error_label.setText(text)
        self._update_buttons()
        return text

    def _vertex_problem(self, fam, params: dict) -> tuple[str, list[str]]:
        """A vertex parameter (BFS ``source``) that names no vertex of the current graph: the
        words and the field at fault, or ("", [])."""
        d = self.document
        if d is None or not fam.vertex_params:
            return "", []
        try:
            check_vertex_params(fam, params, d.csr(), d.slotted)
        except ParameterError as exc:
            return f"{exc} — on {d.name}", [exc.parameter]
        except GraphKernelsError:
            return "", []
        return "", []

    def _update_sweep_summary(self) -> None:
        fam, var = self.family, self.variant
        swept = set(self.sweep_panel.swept())
        fixed, error, _bad = check_params(fam, var, self.form, skip=swept)
        try:
            total, invalid, first = self.sweep_panel.count(fam, var, fixed or {})
        except GraphKernelsError as exc:
            self.sweep_panel.summary.setText(f"<span style='color:{ERROR_COLOUR}'>{html.escape(str(exc))}</span>")
            return
        text = f"{_plural(total, 'configuration')}"
        if invalid:
            text += f", {invalid} ruled out by a constraint (shown as – in the heatmap)"
        others = [n for n in self.form.fields if n not in swept]
        if others:
            text += f"; {', '.join(others)} as set above"
        if error:
            text += f"<br><span style='color:{ERROR_COLOUR}'>{html.escape(error)}</span>"
        self.sweep_panel.summary.setText(text)

    def _update_buttons(self) -> None:
        busy = self.client.busy
        can = self.document is not None and not busy and self.variant is not None \
            and self.target_box.currentData() is not None
        self.run_button.setEnabled(can)
        self.sweep_button.setEnabled(can and bool(self.sweep_panel.swept()))
        self.cancel_button.setEnabled(busy)
        resumable = self.document is not None and not busy and self.results is not None \
            and bool(self.results.resumable_file())
        self.resume_button.setEnabled(resumable)
        if hasattr(self, "run_action"):
            self.run_action.setEnabled(can)
            self.sweep_action.setEnabled(can and bool(self.sweep_panel.swept()))
            self.resume_action.setEnabled(resumable)
            self.cancel_action.setEnabled(busy)

    def _refuse(self, message: str) -> None:
        """Tell the user why nothing runs: on the form, in the status bar and in the log."""
        self.error_label.setText(message)
        self.window_.log("error", message)
        self.window_.statusBar().showMessage(message, 12000)
        self.refused.emit(message)

    def _common_checks(self) -> str:
        if self.client.busy:
            return f"{self.client.current.title} is still running: wait for it or press Cancel"
        if self.document is None:
            return "no graph is open: open or generate a graph first"
        fam, var = self.family, self.variant
        if fam is None or var is None:
            return "choose an algorithm family and a variant"
        reason = unavailable_reason(var)
        if reason:
            return f"{fam.name}/{var.name} cannot run here: {reason}"
        if self.target_box.currentData() is None:
            return f"{fam.name}/{var.name} has no target on this machine"
        return ""

    def _graph(self):
        d = self.document
        slot = f"graph-{getattr(d, 'doc_id', id(d))}"
        return d.csr(), d.key, slot

    # ==== the simulator's time, said before it runs =============================================
    def simulator_ask_above(self) -> float:
        settings = getattr(self.window_, "settings", None)
        return settings.simulator_ask_above() if settings is not None else float("inf")

    def simulator_limit_dialog(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        value, ok = QInputDialog.getInt(self, "Simulator time", "Ask before simulator runs estimated to take more "
                                        "than (seconds):", int(self.simulator_ask_above()), 1, 7 * 86400)
        if ok:
            self.window_.settings.set_simulator_ask_above(value)

    def simulator_go_ahead(self, what: str, seconds: float, detail: str) -> bool:
        """Say the estimate; above the user's limit ask (a dialog), or refuse without dialogs."""
        limit = self.simulator_ask_above()
        self.window_.log("info", f"{what}: {detail}")
        self.progress_label.setText(f"{what}: {detail}")
        if seconds <= limit:
            return True
        question = (f"{what} will take {detail}, more than the {format_duration(limit)} after which you asked "
                    "to be asked (Run ▸ Simulator Time Before Asking…). The simulator runs one Python thread per "
                    "CUDA thread; a smaller graph or launch runs faster. Run it anyway?")
        if getattr(self.window_, "dialogs", False) and self.window_.isVisible():
            from PySide6.QtWidgets import QMessageBox

            answer = QMessageBox.question(self, "Slow on the simulator", question)
            if answer == QMessageBox.StandardButton.Yes:
                return True
            # the user's own choice, not an error: an info line, and the form is not marked red
            message = f"{what} not started: you chose not to wait {format_duration(seconds)} on the simulator"
            self.progress_label.setText(message)
            self.window_.log("info", message)
            self.window_.statusBar().showMessage(message, 12000)
            return False
        self._refuse(f"{what} not started: estimated {format_duration(seconds)} on the simulator, above the "
                     f"{format_duration(limit)} limit (Run ▸ Simulator Time Before Asking… raises it)")
        return False

    def _simulator_estimate(self, graph, params_list: list[dict]) -> tuple[float, str]:
        fam, var = self.family, self.variant
        estimates = [estimate(fam.name, var.name, graph, p, repeat=self.repeat_box.value()) for p in params_list]
        seconds = sum(e.seconds for e in estimates)
        if len(estimates) == 1:
            return seconds, estimates[0].describe()
        threads = sum(e.threads * e.runs for e in estimates)
        return seconds, (f"about {format_duration(seconds)} on the CUDA simulator ({len(estimates)} configurations, "
                         f"{threads:,} simulated threads in all their runs; each configuration's launch shape "
                         "costed as measured for this variant)")

    # ==== commands =================================================================================
    def run(self) -> ComputeTask | None:
        """Run the chosen variant once on the current graph (refused, with the reason, if invalid)."""
        problem = self._common_checks()
        fam, var = self.family, self.variant
        params = None
        if not problem:
            params, error, bad = check_params(fam, var, self.form)
            if not error:
                error, bad = self._vertex_problem(fam, params)
            self.form.mark_errors(bad)
            if error:
                problem = f"{fam.name}/{var.name} not run: {error}"
        if problem:
            self._refuse(problem)
            return None
        try:
            graph, key, slot = self._graph()
        except GraphKernelsError as exc:
            self._refuse(f"the graph could not be prepared: {exc}")
            return None
        if _simulated(self.target_box.currentData()) and var.is_gpu:
            seconds, detail = self._simulator_estimate(graph, [params])
            if not self.simulator_go_ahead(f"{fam.name}/{var.name} on {self.document.name}", seconds, detail):
                return None
        live = self.document.journal if (var.live_pages and self.document.editable) else None
        request = RunRequest(graph=graph, graph_key=key, graph_slot=slot, family=fam.name, variant=var.name,
                             params=params, target=self.target_box.currentData(), repeat=self.repeat_box.value(),
                             time_limit=self.time_limit_box.value(), launch=self.launch_box.currentData(),
                             live_source=live,
                             live_key=f"doc-{self.document.doc_id}" if live is not None else "")
        return self._submit(request)

    def sweep(self) -> ComputeTask | None:
        """Run every configuration of the sweep panel's grid (others as on the form)."""
        problem = self._common_checks()
        fam, var = self.family, self.variant
        grid = fixed = None
        if not problem:
            try:
                grid = self.sweep_panel.grid()
            except GraphKernelsError as exc:
                problem = f"sweep not started: {exc}"
        if not problem:
            fixed, error, bad = check_params(fam, var, self.form, skip=set(grid))
            if not error:
                error, bad = self._vertex_problem(fam, fixed)
            self.form.mark_errors(bad)
            if error:
                problem = f"sweep not started: {error}"
        if problem:
            self._refuse(problem)
            return None
        graph, key, _slot = self._graph()
        target = self.target_box.currentData()
        if not self._sweep_go_ahead(fam, var, graph, grid, fixed, target, "sweep"):
            return None
        request = SweepRequest(graph=graph, graph_key=key, family=fam.name, variant=var.name, grid=grid,
                               fixed=fixed, target=target, repeat=self.repeat_box.value(),
                               launch=self.launch_box.currentData(),
                               time_limit=self.time_limit_box.value(), out=self._new_sweep_file(fam.name, var.name))
        return self._submit(request)

    def _sweep_go_ahead(self, fam, var, graph, grid, fixed, target, what, done=()) -> bool:
        """On the simulator, say (and above the user's limit ask) how long the cells not in ``done``
        (keys as ``tuple(sorted(params))``) will take."""
        if not _simulated(target) or not var.is_gpu:
            return True
        import itertools

        names = list(grid)
        cells = [p for p in ({**fixed, **dict(zip(names, combo, strict=True))}
                             for combo in itertools.product(*(grid[n] for n in names)))
                 if not fam.constraint_violation(var, p) and _cell_key(p, names) not in done]
        if not cells:
            return True
        seconds, detail = self._simulator_estimate(graph, [fam.resolve_params(var, p) for p in cells])
        return self.simulator_go_ahead(f"{what} of {fam.name}/{var.name} on {self.document.name}", seconds, detail)

    def _new_sweep_file(self, family: str, variant: str) -> str:
        """Where a sweep started here writes its cells as they finish (the settings' data directory)."""
        from explorer.model.requests import new_sweep_path

        settings = getattr(self.window_, "settings", None)
        if settings is None:
            return ""
        try:
            return str(new_sweep_path(settings.data_directory(), family, variant, self.document.name))
        except OSError as exc:
            self.window_.log("warning", f"the sweep is not saved as it runs: its folder cannot be made ({exc})")
            return ""

    def resume_sweep(self, path=None) -> ComputeTask | None:
        """Run only the configurations the sweep file ``path`` (default: the Results dock's shown
        sweep) lacks, on the current graph, adding them to the file. Refused, saying why, when the
        file is not a sweep that can be continued here; the core refuses a different graph,
        variant, grid or device (``ResumeRefused``) and the file stays as it was."""
        if path is None:
            path = self.results.resumable_file() if self.results is not None else ""
            if not path:
                self._refuse("no sweep to resume: the shown sweep is complete, running, or not in a file "
                             "(Run ▸ Resume Sweep from File… continues one)")
                return None
        path = str(path)
        if self.client.busy:
            self._refuse(f"{self.client.current.title} is still running: wait for it or press Cancel")
            return None
        if self.document is None:
            self._refuse("no graph is open: open the graph the sweep ran on first")
            return None
        try:
            request = self._resume_request(path)
        except GraphKernelsError as exc:
            self._refuse(f"sweep not resumed: {exc}")
            return None
        fam, var = self.families[request.family], self.families[request.family].variants[request.variant]
        done = {_cell_key(c["params"], list(request.grid)) for c in request.resume_from["cells"]
                if c["status"] != "lost"}
        if not self._sweep_go_ahead(fam, var, request.graph, request.grid, request.fixed, request.target,
                                    "resumed sweep", done):
            return None
        return self._submit(request)

    def _resume_request(self, path: str) -> SweepRequest:
        """The request continuing ``path``; whether it can be continued here, and how, is the
        core's decision (:func:`kernels.compute.resume.plan_resume`), which this shows."""
        from kernels.compute.resume import plan_resume

        cluster = self.client.cluster

        def offered(var) -> dict:
            # by place, as the device's text: the file's own target is compared without its place
            return {"local": targets_for(var),
                    "cluster": [str(Target.parse(t).local()) for t in cluster.targets_for(var)]}

        plan = plan_resume(path, self.families, why_unavailable=unavailable_reason, offered=offered,
                           repeat=self.repeat_box.value(), time_limit=self.time_limit_box.value())
        target = str(Target.parse(plan.target).on_the_cluster()) if plan.place == "cluster" else plan.target
        graph, key, _slot = self._graph()
        return SweepRequest(graph=graph, graph_key=key, family=plan.family, variant=plan.variant, grid=plan.grid,
                            fixed=plan.fixed, target=target, repeat=plan.repeat, warmup=plan.warmup,
                            launch=plan.launch, time_limit=plan.time_limit, out=plan.path, resume=True,
                            resume_from=plan.previous)

    def resume_from_file_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        settings = getattr(self.window_, "settings", None)
        start = str(settings.data_directory() / "sweeps") if settings is not None else ""
        path, _ = QFileDialog.getOpenFileName(self, "Resume sweep from file", start,
                                              "Sweep files (*.json);;All files (*)")
        if path:
            self.resume_sweep(path)

    def cancel(self) -> None:
        if self.client.busy:
            self.client.cancel()
            self.progress_label.setText(f"cancelling {self.client.current.title}…")
            self.window_.log("info", f"cancelling {self.client.current.title}")

    def restart_worker(self) -> None:
        try:
            self.client.restart_workers()
        except GraphKernelsError as exc:
            self._refuse(str(exc))
            return
        self.window_.log("info", "worker processes stopped: the next run starts a fresh one")
        self.window_.statusBar().showMessage("worker processes stopped", 5000)

    # ==== a job's life ===============================================================================
    def _submit(self, request) -> ComputeTask | None:
        try:
            task = (self.client.submit_sweep if isinstance(request, SweepRequest) else self.client.submit_run)(request)
        except GraphKernelsError as exc:
            self._refuse(str(exc))
            return None
        self.task = task
        self.error_label.setText("")
        self.window_.log("info", f"started {request.describe()}")
        if isinstance(request, SweepRequest) and request.out and not request.resume:
            self.window_.log("info", f"{request.title}: each configuration is added to {request.out} as it "
                                     "finishes (Run ▸ Resume Sweep continues it after a cancel or a kill)")
        self.progress.setVisible(True)
        if isinstance(request, SweepRequest):
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)
        else:
            self.progress.setRange(0, 0)
        # the progress line names the graph: several tabs may hold graphs of the same family of inputs
        self._job_label = f"{request.title} on {self.document.name}" if self.document is not None else request.title
        self.progress_label.setText(f"{self._job_label}: starting")
        task.progressed.connect(self._on_progress)
        task.cellsArrived.connect(self._on_cells)
        task.finished.connect(lambda result, t=task: self._on_finished(t, result))
        task.failed.connect(lambda message, t=task: self._on_failed(t, message))
        task.cancelled.connect(lambda partial, t=task: self._on_cancelled(t, partial))
        task.done.connect(self._on_done)
        self._elapsed_timer.start()
        self._update_buttons()
        return task

    def _on_progress(self, fraction: float, text: str) -> None:
        if fraction >= 0 and self.task is not None and self.task.kind == "sweep":
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(fraction * 1000))
        self.progress_label.setText(f"{self._job_label}: {text}" if text else self._job_label)

    def _show_elapsed(self) -> None:
        task = self.task
        if task is not None and task.running:
            self.progress_label.setText(f"{self._job_label}: {task.text or 'running'} — {task.elapsed_s:.0f} s")

    def _on_cells(self, cells: list) -> None:
        for cell in cells:
            if cell.get("status") in ("failed", "lost"):
                where = ", ".join(f"{k}={v}" for k, v in cell["params"].items())
                self.window_.log("warning", f"sweep configuration {where} {cell['status']}: {cell.get('reason', '')}")

    def _note_live_sync(self, request, result) -> None:
        """The run synced a worker's replica of the document's pages: say what crossed."""
        doc = next((d for d in self.window_.documents() if getattr(d, "journal", None) is request.live_source), None)
        if doc is not None:
            doc.note_sync(result["revision"], result["sync"])
        self.window_.log("info", f"{request.title} on the live pages of {request.graph_name}: "
                                 f"{result.get('sync_summary', '')}")

    def _on_finished(self, task: ComputeTask, result) -> None:
        req = task.request
        if task.kind == "run":
            rec = result["record"]
            if result.get("sync") is not None:
                self._note_live_sync(req, result)
            times = (rec.get("timing") or {}).get("kernel") or {}
            from explorer.plots.format import format_seconds, result_text

            summary = (f"{req.title} on {req.graph_name}: {result_text(rec.get('result'))}, median "
                       f"{format_seconds(times.get('median_s'))} ({rec.get('target')}{_how_timed(rec)})")
            if rec.get("verified"):
                self.window_.log("info", f"{summary}, verified ✓")
                self.window_.statusBar().showMessage(f"{summary} ✓", 10000)
            else:
                detail = (rec.get("verification") or {}).get("detail", "")
                self.window_.show_error("Verification failed",
                                        f"{summary}: VERIFICATION FAILED ✗ — {detail}. The result is wrong; "
                                        "its time means nothing.")
        else:
            ok = sum(1 for c in result["cells"] if c["status"] == "ok")
            best = result.get("best")
            text = f"{req.describe()}: {ok} of {result['total_cells']} configurations ran"
            if best:
                from explorer.plots.format import format_seconds

                text += (f"; best {', '.join(f'{k}={v}' for k, v in best['params'].items())} at "
                         f"{format_seconds(best['median_s'])}")
            if req.out:
                text += f" (in {req.out})"
            self.window_.log("info", text)
            self.window_.statusBar().showMessage(text, 10000)
            wrong = [c for c in result["cells"] if c["status"] == "wrong"]
            if wrong:
                self.window_.show_error("Verification failed", f"{len(wrong)} configuration(s) of the sweep gave a "
                                        "wrong result (marked in the heatmap)")
            lost = [c for c in result["cells"] if c["status"] == "lost"]
            if lost:
                again = ("Resume Sweep runs them again" if req.out else
                         "run the sweep again with a file to be able to resume it")
                self.window_.show_error("Configurations lost", f"{_plural(len(lost), 'configuration')} of the sweep "
                                        f"were lost ({lost[-1].get('reason', 'the cluster was lost')}); the "
                                        f"{_plural(ok, 'configuration')} that finished are kept"
                                        f"{f' in {req.out}' if req.out else ''}: {again}")

    def _on_failed(self, task: ComputeTask, message: str) -> None:
        self.window_.show_error(f"{task.title} failed", message)
        self.error_label.setText(message)
        if task.details:
            self.window_.log("debug", task.details)

    def _on_cancelled(self, task: ComputeTask, partial) -> None:
        if task.kind == "sweep":
            done = len(partial["cells"]) if partial else len(task.cells)
            text = f"{task.title} cancelled: the {_plural(done, 'configuration')} that finished are kept"
            if task.request.out:
                text += f" in {task.request.out} (Resume Sweep runs the rest)"
        else:
            text = f"{task.title} cancelled: its worker was stopped (a fresh one starts with the next run)"
        self.window_.log("warning", text)
        self.window_.statusBar().showMessage(text, 10000)

    def _on_worker_restarted(self, message: str) -> None:
        # the job's failure carries the same sentence to the log: say it once there
        self.window_.statusBar().showMessage(message, 15000)

    def _on_done(self) -> None:
        self._elapsed_timer.stop()
        self.progress.setVisible(False)
        task = self.task
        if task is not None:
            self.progress_label.setText(f"{self._job_label or task.title}: {task.state} after {task.elapsed_s:.1f} s")
        self._update_buttons()

    # ==== window integration ===========================================================================
    def session_state(self) -> dict:
        return {"family": self.family_box.currentData(), "variant": self.variant_box.currentData(),
                "params": self.form.texts(), "target": self.target_box.currentData(),
                "repeat": self.repeat_box.value(), "time_limit": self.time_limit_box.value(),
                "launch": self.launch_box.currentData(),
                "sweep": {"rows": self.sweep_panel.rows_param.currentText(),
                          "rows_values": self.sweep_panel.rows_values.text(),
                          "cols": self.sweep_panel.cols_param.currentText(),
                          "cols_values": self.sweep_panel.cols_values.text()}}

    def restore_session_state(self, state: dict) -> None:
        family, variant = state.get("family"), state.get("variant")
        if family in self.families and variant in self.families[family].variants:
            self.choose(family, variant, state.get("params") or {})
            _select_saved(self.target_box, state.get("target"))
        elif family:
            self.window_.log("warning", f"the session's run settings name {family}/{variant}, which is not "
                                        "available here")
        if "repeat" in state:
            self.repeat_box.setValue(int(state["repeat"]))
        if "time_limit" in state:
            self.time_limit_box.setValue(float(state["time_limit"]))
        _select_saved(self.launch_box, state.get("launch"))
        sweep = state.get("sweep") or {}
        if sweep.get("rows") in self.sweep_panel.params:
            self.sweep_panel.rows_param.setCurrentText(sweep["rows"])
            self.sweep_panel.rows_values.setText(sweep.get("rows_values", ""))
            self.sweep_panel.cols_param.setCurrentText(sweep.get("cols") or SweepPanel.NONE)
            self.sweep_panel.cols_values.setText(sweep.get("cols_values", ""))
        self.validate()

    def shutdown(self) -> None:
        self._elapsed_timer.stop()
        self.client.shutdown()
