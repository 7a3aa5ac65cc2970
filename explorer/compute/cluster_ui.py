"""Compute ▸ Connect to Cluster…: the dialog, the menu and the status-bar label.

The dialog asks for the scheduler's address and, for a ``tls://`` address, the CA, certificate
and key files (``docs/cluster.md`` says how to make them); all four are remembered in
QSettings. The label in the status bar names the cluster and its GPUs while connected.
Connection errors are one sentence in the log and an error message; the user's graphs, edits
and results are untouched by anything that happens on the cluster side.
"""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from explorer.compute.cluster import ClusterConnection, gpu_summary


class ConnectDialog(QDialog):
    """Address and TLS files; :meth:`values` after ``exec()``."""

    def __init__(self, remembered: dict, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Connect to Cluster")
        form = QFormLayout(self)
        self.address = QLineEdit(remembered.get("address", ""))
        self.address.setPlaceholderText("tls://gpu-server:8786 (or tcp://127.0.0.1:8786 on this machine)")
        self.address.setMinimumWidth(420)
        form.addRow("scheduler", self.address)
        self.files = {}
        for key, label in (("tls_ca", "CA certificate"), ("tls_cert", "certificate"), ("tls_key", "private key")):
            edit = QLineEdit(remembered.get(key, ""))
            edit.setPlaceholderText("for tls:// addresses (.pem)")
            browse = QPushButton("…")
            browse.setFixedWidth(32)
            browse.clicked.connect(lambda _c=False, e=edit, lbl=label: self._browse(e, lbl))
            row = QWidget()
            box = QHBoxLayout(row)
            box.setContentsMargins(0, 0, 0, 0)
            box.addWidget(edit, 1)
            box.addWidget(browse)
            form.addRow(label, row)
            self.files[key] = edit
        note = QLabel("<small>Dask moves pickled data between this program and the workers: connect only to "
                      "a cluster you trust, and use tls:// with certificates for any address off this machine "
                      "(docs/cluster.md).</small>")
        note.setWordWrap(True)
        form.addRow(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Connect")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self, edit: QLineEdit, label: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, f"Choose the {label}", edit.text(), "PEM files (*.pem *.crt "
                                              "*.key);;All files (*)")
        if path:
            edit.setText(path)

    def values(self) -> dict:
        return {"address": self.address.text().strip(),
                **{key: edit.text().strip() for key, edit in self.files.items()}}


def tls_files(values: dict):
    """The dialog's (or the settings') TLS files as ``TlsFiles``, or ``None`` when none is given."""
    from kernels.compute.dask.connect import TlsFiles

    ca, cert, key = values.get("tls_ca") or None, values.get("tls_cert") or None, values.get("tls_key") or None
    if not (ca or cert or key):
        return None
    return TlsFiles.from_options(ca, cert, key)


class ClusterControls:
    """The Compute menu and the status-bar label of one window, following its connection."""

    def __init__(self, window, connection: ClusterConnection, on_targets_changed):
        self.window = window
        self.connection = connection
        self.on_targets_changed = on_targets_changed
        bar = window.menuBar()
        self.menu = bar.addMenu("&Compute")
        view_menu = getattr(window, "view_menu", None)
        if view_menu is not None:
            bar.insertMenu(view_menu.menuAction(), self.menu)
        self.connect_action = self._action("Connect to &Cluster…", self.ask_and_connect,
                                           "run on GPU workers of a Dask cluster (docs/cluster.md)")
        self.workers_action = self._action("Cluster &Workers", self.log_workers,
                                           "list the cluster's workers, GPUs and versions in the log")
        self.disconnect_action = self._action("&Disconnect from Cluster", self.disconnect,
                                              "back to this machine's GPU and CPU only")
        self.label = QLabel()
        self.label.setToolTip("the Dask cluster the Run dock can send jobs to (Compute ▸ Connect to Cluster…)")
        window.statusBar().addPermanentWidget(self.label)
        connection.connected.connect(self._on_connected)
        connection.connectFailed.connect(self._on_failed)
        connection.disconnected.connect(self._on_disconnected)
        connection.warned.connect(lambda text: window.log("warning", text.removeprefix("warning: ")))
        self._update()

    def _action(self, text, slot, tip) -> QAction:
        act = QAction(text, self.window)
        act.setStatusTip(tip)
        act.triggered.connect(lambda _c=False: slot())
        self.menu.addAction(act)
        return act

    # ---- actions -------------------------------------------------------------------------------
    def ask_and_connect(self) -> None:
        remembered = self.window.settings.cluster()
        if not getattr(self.window, "dialogs", True):
            self.connect(remembered)
            return
        dialog = ConnectDialog(remembered, self.window)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.connect(dialog.values())

    def connect(self, values: dict) -> None:
        """Connect to ``values["address"]`` with its TLS files; remembered for next time."""
        from kernels.errors import GraphKernelsError

        try:
            tls = tls_files(values)
        except GraphKernelsError as exc:
            self._on_failed(str(exc))
            return
        self.window.settings.set_cluster(values.get("address", ""), values.get("tls_ca", ""),
                                         values.get("tls_cert", ""), values.get("tls_key", ""))
        self.window.log("info", f"connecting to the cluster at {values.get('address', '')}…")
        self.label.setText(f"cluster: connecting to {values.get('address', '')}…")
        self.connection.connect_to(values.get("address", ""), tls)

    def disconnect(self) -> None:
        if self.connection.is_connected:
            self.connection.disconnect()

    def log_workers(self) -> None:
        if not self.connection.is_connected:
            self.window.log("info", "not connected to a cluster")
            return
        for w in self.connection.workers:
            gpu = w.gpu or {}
            what = (f"{gpu.get('name')}, {gpu.get('memory_bytes', 0) / 2**30:.1f} GiB, compute capability "
                    f"{gpu.get('compute_capability')}") if w.gpu else "no GPU"
            problems = f"; cannot run GPU variants: {'; '.join(w.problems)}" if w.problems else ""
            versions = ", ".join(f"{k} {v}" for k, v in w.versions.items())
            self.window.log("info", f"{w.address} [{w.name}]: {what}; {versions}{problems}")

    # ---- following the connection -----------------------------------------------------------
    def _update(self) -> None:
        c = self.connection
        self.label.setText(c.summary() if c.is_connected else "")
        self.label.setVisible(c.is_connected or c.connecting)
        self.disconnect_action.setEnabled(c.is_connected)
        self.workers_action.setEnabled(c.is_connected)

    def _on_connected(self, workers) -> None:
        self._update()
        self.label.setVisible(True)
        self.window.log("info", f"connected: {self.connection.summary()}")
        unable = [w for w in workers if w.gpu is not None and w.problems]
        for w in unable:
            self.window.log("warning", f"{w.address} cannot run GPU variants: {'; '.join(w.problems)}")
        if not any(w.can_run_gpu for w in workers):
            self.window.log("warning", f"no worker of {self.connection.address} can run GPU variants "
                                       f"({gpu_summary(workers)}): the cluster offers the simulator and CPU targets")
        self.on_targets_changed()

    def _on_failed(self, message: str) -> None:
        self._update()
        self.window.show_error("Cluster", message)

    def _on_disconnected(self) -> None:
        self._update()
        self.window.log("info", "disconnected from the cluster: jobs run on this machine again")
        self.on_targets_changed()
