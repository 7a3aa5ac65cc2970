"""The stages a variant's execution goes through, so that each can be timed on its own.

``Variant.make(problem, params, target)`` returns an :class:`Execution`. The runner calls
``compile()`` (build and compile specialised kernels; numba's first call), ``upload()``
(host→device), ``preprocess()`` (device-side preparation of the uploaded input, e.g.
``gpu-oriented``'s orientation: not in any runner stage's time - an execution that does
work there times it itself and reports it in its result statistics), ``launch()``
repeatedly (the timed kernel work, which must give the same output each time),
``download()`` (device→host, returns the output) and ``release()``.
``reset()`` runs before each timed launch when ``needs_reset`` is true (in-place algorithms
such as Floyd–Warshall); it is kept out of the kernel time.

**Streams and CUDA graphs.** A GPU execution queues its work (kernels, device copies, memsets)
on ``self.stream``: numba's default stream (``0``) unless the runner sets another one. An
execution whose ``launch()`` is a fixed sequence of device work on ``self.stream`` — no read
back to the host, no allocation, the same kernels with the same arguments every time — says
``capturable = True``; the runner may then capture one ``launch()`` into a CUDA graph and time
replays of it (``kernels.measure.cuda_graphs``). ``reset()`` of a capturable execution goes on
``self.stream`` too, so that it is ordered with the replays.
"""

from __future__ import annotations


class Execution:
    needs_reset = False
    #: ``launch()`` is a fixed sequence of device work on ``self.stream`` (no host reads, no
    #: allocations): it may be captured once into a CUDA graph and replayed
    capturable = False
    #: the numba stream the launch queues its work on (0: numba's default stream)
    stream = 0
    #: bytes the kernel touches on the device (inputs + outputs), for the "fits in L2" flag
    device_bytes: int = 0

    def compile(self) -> None:
        """Build/compile what the launch needs (kernel specialisation, numba compilation)."""

    def upload(self) -> None:
        """Copy inputs to the device."""

    def preprocess(self) -> None:
        """Prepare the uploaded input on the device (optional; timed by the execution itself)."""

    def launch(self) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        """Restore inputs an in-place launch overwrote (not timed)."""

    def synchronize(self) -> None:
        """Wait for queued device work (no-op on the CPU)."""

    def download(self):
        raise NotImplementedError

    def release(self) -> None:
        """Free device memory early (optional)."""


class HostExecution(Execution):
    """A CPU or library variant: the launch is a call of ``fn(*args)``.

    ``compile()`` makes one call so that numba's JIT compilation is measured separately
    from the steady-state time."""

    def __init__(self, fn, *args, warm_args=None, **kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.warm_args = warm_args
        self._result = None

    def compile(self) -> None:
        if self.warm_args is not None:
            self.fn(*self.warm_args, **self.kwargs)
        else:
            self._result = self.fn(*self.args, **self.kwargs)

    def launch(self) -> None:
        self._result = self.fn(*self.args, **self.kwargs)

    def download(self):
        if self._result is None:
            self.launch()
        return self._result
