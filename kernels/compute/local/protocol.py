"""Message framing between the GUI (or a sweep) and the worker process.

A frame is an 8-byte little-endian length followed by a pickle (protocol 5). NumPy arrays
pickle as raw buffers, so a CSR graph crosses the pipe as bytes, not as text. Messages are
plain dicts with an ``op`` key:

requests  : ping, load (key, graph), forget (key), run (id, key, family, variant, params,
            target, repeat, warmup, seed, want_output, launch), compile (id, key, family, variant,
            params, target, seed: the cell up to its compile stage), quit;
            live documents: open_document (key, arrays, revision, name), update_document (key,
            deltas, revision), run_document (id, key, then as run), close_document (key)
replies   : pong, loaded, forgotten, result (id, record, output), compiled (id, summary),
            error (id, kind, message),
            progress, opened / updated (key, summary), closed; an error of kind
            ``UnknownDocument`` means the worker holds no replica (re-open with a snapshot)
"""

from __future__ import annotations

import pickle
import struct

HEADER = struct.Struct("<Q")
MAX_FRAME = 1 << 40


class ProtocolError(EOFError):
    """The other side closed the pipe or sent garbage (usually: it died)."""


def write_frame(stream, message: dict) -> None:
    payload = pickle.dumps(message, protocol=5)
    stream.write(HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def _read_exact(stream, n: int) -> bytes:
    chunks, remaining = [], n
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise ProtocolError("the other side closed the connection")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(stream) -> dict:
    (length,) = HEADER.unpack(_read_exact(stream, HEADER.size))
    if length > MAX_FRAME:
        raise ProtocolError(f"frame of {length} bytes is not plausible")
    return pickle.loads(_read_exact(stream, length))
