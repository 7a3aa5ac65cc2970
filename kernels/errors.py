"""The project's exception types.

Every error a user can cause derives from :class:`GraphKernelsError`; the command line
prints its message in one line and exits non-zero, the GUI shows it in words. Anything
else escaping is a bug.
"""

from __future__ import annotations

#: numba-cuda's driver and compiler errors, by class name (the CUDA simulator defines its own
#: classes of the same names): raised by the device, not by a user's input
DEVICE_ERROR_NAMES = ("CudaAPIError", "CudaDriverError", "CudaSupportError", "LinkerError", "NvvmError",
                      "NvrtcError")
#: of those, the ones raised while compiling a kernel
COMPILER_ERROR_NAMES = ("LinkerError", "NvvmError", "NvrtcError")


class GraphKernelsError(Exception):
    """Base of every error caused by input, parameters or the environment."""


class GraphFormatError(GraphKernelsError):
    """A file could not be read: names the file, the line (when known) and what was expected."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 expected: str | None = None):
        self.path = str(path) if path is not None else None
        self.line = line
        self.expected = expected
        self.reason = message
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path
            if self.line is not None:
                where += f", line {self.line}"
            where += ": "
        text = f"{where}{self.reason}"
        if self.expected:
            text += f" (expected {self.expected})"
        return text


class UnsupportedFormatError(GraphFormatError):
    """The file is of a format (or a variant of one) that the project does not read or write."""


class InputRequirementError(GraphKernelsError):
    """An algorithm was given an input it cannot work on (not square, directed, unweighted, ...)."""


class ParameterError(GraphKernelsError):
    """A launch or algorithm parameter is invalid: names the parameter, the value and what is allowed."""

    def __init__(self, parameter: str, value: object, allowed: str, detail: str | None = None):
        self.parameter = parameter
        self.value = value
        self.allowed = allowed
        text = f"invalid value {value!r} for parameter '{parameter}': allowed {allowed}"
        if detail:
            text += f" ({detail})"
        super().__init__(text)


class ConstraintError(GraphKernelsError):
    """A combination of parameters breaks a declared constraint (e.g. ``rows <= wg``)."""


class ResourceLimitError(GraphKernelsError):
    """The work would need more memory (host or device) than is available; says how much."""


class TargetUnavailableError(GraphKernelsError):
    """The requested execution target (cuda, sim, cpu) cannot be used here."""


class GraphEditError(GraphKernelsError):
    """An edit or query names a vertex or an edge that does not exist, or adds one that does."""


class ClusterError(GraphKernelsError):
    """A Dask cluster could not be used: no scheduler at the address, a TLS mismatch, a timeout,
    no worker able to run the job, or a worker lost with the job on it."""


class DeviceLoopError(GraphKernelsError):
    """A traversal's device loop (``loop=device``, one cooperative launch) could not be launched on
    this GPU: names the grid it asked for and the alternative (``loop=host``)."""
