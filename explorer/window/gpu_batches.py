"""Batches of edge updates applied on the GPU, from the Structure dock (issue 27 §4).

The batch (random, or read from a batch file) is drawn or read on the compute task's thread
(from a CSR snapshot taken on the GUI thread) and sent to the worker that keeps the document's
replica for its GPU runs (this machine's, or the
cluster's: the Run dock's target when it is a GPU or the simulator, else this machine's best).
The worker applies it on the replica's device pages with the device path, checks them page for
page against its host replay, and returns the page delta; the document replays that delta
word for word as one undoable command, numbered as the revision the replica now holds, so the
next GPU run sends nothing. If the document changed while the batch ran, the result is not
kept (the user is told) and the replica gets a snapshot before its next run.
"""

from __future__ import annotations

from explorer.model import commands
from explorer.model.requests import BatchRequest
from kernels.errors import GraphKernelsError
from kernels.measure.targets import Target


def batch_target(window) -> str:
    """Where the batch runs: the Run dock's target if it runs GPU kernels, else this machine's
    default for them (``cuda`` with a GPU, else the simulator)."""
    for dock in getattr(window, "compute_docks", []):
        box = getattr(dock, "target_box", None)
        current = box.currentData() if box is not None else None
        if current:
            try:
                if Target.parse(current).is_gpu:
                    return current
            except GraphKernelsError:
                pass
    from explorer.compute.targets import default_target_for
    from kernels.algorithms.registry import get_variant

    target = default_target_for(get_variant("bfs", "gpu-slotted"))
    if target is None:
        raise GraphKernelsError("this machine has neither a GPU nor the CUDA simulator to apply the batch on")
    return target


def submit(window, document, draw):
    """Send the batch ``draw()`` returns (``(batch, text)``, called on the task's thread) to the
    document's replica; the result is pushed as one command. Returns the compute task, or
    ``None`` when it could not start (said in words)."""
    from explorer.compute.client import ComputeClient

    if document is None or not document.editable or document.journal is None:
        reason = document.not_editable_reason if document is not None else "no graph is open"
        window.show_error("Batch not applied", f"the graph cannot be edited: {reason}")
        return None
    client = ComputeClient.for_window(window)
    try:
        target = batch_target(window)
        request = BatchRequest(draw=draw, target=target, live_source=document.journal,
                               live_key=f"doc-{document.doc_id}", document_name=document.name,
                               revision=document.revision + 1)
        task = client.submit_batch(request)
    except GraphKernelsError as exc:
        window.show_error("Batch not applied", f"{document.name}: {exc}")
        return None
    before = document.revision
    window.log("info", f"started {request.describe()}")

    def finished(result: dict) -> None:
        if document.revision != before:
            client.forget_document_revision(request.live_key)
            window.show_warning(f"{document.name} changed while the batch ran on the GPU: the batch was not kept; "
                                "apply it again")
            return
        applied, text = result["result"], result["text"]
        command = commands.replayed_batch(document, text, applied["report"], applied["delta"], applied["vertices"],
                                          how=f"on the GPU ({target})")
        if window.push_command(command):
            document.note_sync(request.revision, result["sync"])
            window.log("info", f"{text} applied on the GPU; {result['sync_summary']}")
        else:
            client.forget_document_revision(request.live_key)

    def cancelled(_partial) -> None:
        # a cancel stops nothing already on the worker: the replica may hold the batch the document
        # will not keep, under a number the document may give its next edit
        client.forget_document_revision(request.live_key)
        window.show_warning(f"the batch on {document.name} was cancelled: the document is unchanged")

    task.finished.connect(finished)
    task.cancelled.connect(cancelled)
    task.failed.connect(lambda message: window.show_error("Batch not applied", f"{document.name}: {message}"))
    return task
