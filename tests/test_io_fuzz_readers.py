"""Mutation fuzzing, reader by reader: valid seed files are damaged at random and read with the
format forced, plain and compressed; the only thing that may escape is the project's format or
resource error, on one line naming the file. A read that succeeds must give a consistent graph.

``FUZZ_CASES`` sets the cases per reader (default 40, a few seconds each); ``FUZZ_CASES=10000``
is the deep run quoted in docs/formats.md. ``FUZZ_SEED`` changes the random stream. A failing
case is reported with its seed, so that it can be replayed.

The .npz cases mutate the arrays themselves (indptr, indices, shape, data, dtypes, member names),
the zip members (not .npy, duplicated, deflated) and the raw .npy headers; the one file that
crashed SciPy (a heap corruption in ``sort_indices``) is read in a child process, so that a
regression fails a test instead of killing pytest.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import random
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kernels.errors import GraphFormatError, ResourceLimitError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph

CASES = int(os.environ.get("FUZZ_CASES", "40"))
SEED = int(os.environ.get("FUZZ_SEED", "0"))

TEXT_SEEDS = {
    "mtx": ("g.mtx", b"%%MatrixMarket matrix coordinate real general\n% c\n4 4 5\n1 2 1.5\n2 3 2\n3 1 0.25\n"
                     b"4 4 1\n4 1 -3e2\n"),
    "mtx-sym": ("s.mtx", b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 2\n3 3\n"),
    "edgelist": ("e.txt", b"# Directed graph\n# Nodes: 5 Edges: 4\n0\t1\n1\t2\n2\t0\n3\t4\n"),
    "edgelist-weighted": ("w.wel", b"1,2,0.5\n2,3,1.5\n3,1,2\n"),
    "csv": ("c.csv", b"source,target,weight\na,b,1\nb,c,2.5\n\"c\",a,3\n"),
    "dimacs-gr": ("r.gr", b"c road\np sp 3 3\na 1 2 4\na 2 3 1\na 3 1 2\n"),
    "dimacs-clq": ("k.clq", b"c clique\np edge 3 3\ne 1 2\ne 2 3\ne 1 3\n"),
    "metis": ("m.graph", b"% metis fmt 11\n3 2 11\n1 2 5\n2 1 5 3 7\n3 2 7\n"),
    "graphml": ("x.graphml", b'<?xml version="1.0"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
                             b'<key id="w" for="edge" attr.name="weight" attr.type="double"/>\n'
                             b'<graph edgedefault="undirected">\n<node id="a"/><node id="b"/>\n'
                             b'<edge source="a" target="b"><data key="w">2.5</data></edge>\n</graph></graphml>\n'),
    "gml": ("y.gml", b'graph [\n  directed 1\n  node [ id 0 label "a" ]\n  node [ id 1 ]\n'
                     b'  edge [ source 0 target 1 weight 2 ]\n]\n'),
    "pajek": ("p.net", b'*Vertices 3\n1 "a"\n2 "b"\n3 "c"\n*Arcs\n1 2 1.0\n2 3 2.0\n'),
    "pajek-sections": ("q.net", b'% c\n*Network x\n*Vertices 4 2\n1 "a b" 0.1 0.2\n*Arcslist\n1 2 3\n'
                                b'*Edges\n3 4 2.5 c Blue\n4 4\n*Partition p\n*Vertices 4\n1\n'),
    "pajek-matrix": ("r.net", b"*Vertices 3\n*Matrix\n0 1 0\n2.5 0 0\n0 0 1\n"),
}
FORMAT_OF = {"mtx-sym": "mtx", "edgelist-weighted": "edgelist", "pajek-sections": "pajek", "pajek-matrix": "pajek"}
VOCABULARY = [b"0", b"1", b"-1", b"+4", b"1.5", b"nan", b"inf", b"x", b"", b" ", b"\t", b",", b";", b"%", b"#",
              str(2**31).encode(), str(2**63).encode(), str(10**30).encode(), b"p", b"a", b"e", b"[", b"]",
              b"<", b">", b"/>", b'"', b"\x00", b"\xff", b"\x1b", b"\r", b"\n", b"\xc3\xa9", b"&amp;", b"&#0;",
              b"<!DOCTYPE x [<!ENTITY a 'aaaa'>]>", b"&a;", b"node [", b"edge [", b"*Arcs", b"*Edges",
              b"%%MatrixMarket", b"symmetric", b"skew-symmetric", b"pattern", b"integer", b"array", b"1" * 400,
              b"7" * 5000, b"-" + b"9" * 4301]  # past Python's 4,300-digit limit for int()
COMPRESSIONS = {"": lambda d: d, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to four random edits of a byte string."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:  # flip a byte
            buf[min(pos, len(buf) - 1)] = rng.randrange(256)
        elif op == 1:  # insert a token
            buf[pos:pos] = rng.choice(VOCABULARY)
        elif op == 2:  # delete a span
            del buf[pos:pos + rng.randint(1, 12)]
        elif op == 3:  # truncate
            del buf[pos:]
        elif op == 4:  # duplicate a span (repeated lines, repeated records)
            end = min(len(buf), pos + rng.randint(1, 40))
            buf[pos:pos] = buf[pos:end] * rng.randint(1, 50)
        elif op == 5:  # replace a number by a big or odd one
            buf[pos:pos + 1] = rng.choice([b"2147483648", b"-7", b"9" * 25, b"0", b"1e400", b"0x10", b"7" * 5000,
                                           b"nan", b"-inf", b"Infinity"])
        elif op == 6:  # swap two lines
            lines = bytes(buf).split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            buf = bytearray(b"\n".join(lines))
        else:  # a control character
            buf[pos:pos] = bytes([rng.choice([0, 7, 8, 11, 12, 13, 27, 127])])
    return bytes(buf)


def check_read(path: Path, fmt: str | None) -> str | None:
    """None if the read kept the promise, else what went wrong."""
    try:
        g = read_graph(path, format=fmt)
    except (GraphFormatError, ResourceLimitError) as exc:
        text = str(exc)
        if "\n" in text or "\r" in text:
            return f"message on several lines: {text!r}"
        if str(path) not in text:
            return f"message does not name the file: {text!r}"
        return None
    except Exception as exc:  # noqa: BLE001 - the point of the test: anything else is a finding
        return f"{type(exc).__name__} escaped: {exc!r}"[:300]
    if not isinstance(g, CSRGraph):
        return f"returned {type(g).__name__}"
    if g.indptr[0] != 0 or g.indptr[-1] != g.nnz or np.any(np.diff(g.indptr) < 0):
        return "inconsistent indptr"
    if g.nnz and (g.indices.min() < 0 or g.indices.max() >= g.n_cols):
        return "index out of range"
    if g.weights is not None and not np.isfinite(g.weights).all():
        return "read with a NaN or infinite weight (the live structure would refuse it later)"
    return None


def run_cases(tmp_path: Path, make_case, label: str) -> None:
    failures = []
    for k in range(CASES):
        rng = random.Random(f"{SEED}:{label}:{k}")
        name, data, fmt = make_case(rng)
        path = tmp_path / name
        path.write_bytes(data)
        problem = check_read(path, fmt)
        if problem is not None:
            failures.append(f"case {k} (FUZZ_SEED={SEED}) {name}: {problem}")
        path.unlink()
    assert not failures, f"{len(failures)} of {CASES} cases broke the promise:\n" + "\n".join(failures[:10])


@pytest.mark.parametrize("seed_name", sorted(TEXT_SEEDS))
def test_damaged_text_files_raise_only_format_errors(tmp_path, seed_name):
    file_name, valid = TEXT_SEEDS[seed_name]
    fmt = FORMAT_OF.get(seed_name, seed_name)

    def case(rng: random.Random):
        suffix = rng.choice(list(COMPRESSIONS))
        data = COMPRESSIONS[suffix](mutate_bytes(valid, rng))
        if suffix and rng.random() < 0.2:  # damage the compressed stream too
            data = mutate_bytes(data, rng)
        return file_name + suffix, data, rng.choice([fmt, fmt, None])

    run_cases(tmp_path, case, seed_name)


# ---- npz -----------------------------------------------------------------------------------

def _npz_members(rng: random.Random) -> dict[str, np.ndarray]:
    if rng.random() < 0.5:  # the project's layout
        return {"format": np.array("gge-csr-1"), "indptr": np.array([0, 2, 3, 3, 5], np.int64),
                "indices": np.array([1, 3, 0, 2, 3], np.int32), "weights": np.array([1.0, 2, 3, 4, 5]),
                "shape": np.array([4, 4], np.int64), "directed": np.array(True), "name": np.array("g")}
    return {"format": np.array(b"csr"), "indptr": np.array([0, 2, 3, 3, 5], np.int32),  # SciPy's save_npz
            "indices": np.array([1, 3, 0, 2, 3], np.int32), "data": np.array([1.0, 2, 3, 4, 5]),
            "shape": np.array([4, 4], np.int64)}


ODD_VALUES = [
    np.array([0, 5000000, 2, 3, 5]), np.array([0, 3, 1, 4, 5]), np.array([-1, 2, 3, 3, 5]), np.array([0, 2]),
    np.array([0, 2, 3, 3, 2**62]), np.array([2**63 + 5], np.uint64), np.array([1.5, 2.0]), np.array([True, False]),
    np.array([1 + 2j]), np.array(["a", "b"]), np.zeros((2, 2), np.int64), np.array(7), np.array([], np.int64),
    np.array([2**31, 0, 1, 2, 3]), np.array([4, 4], np.uint8), np.array([-4, 4]), np.array([2**40, 2]),
    np.array(b"csc"), np.array("coo"), np.array(b"\x00\n\x1b[2J"), np.array("c" * 5000), np.array("\u2028x"),
    np.array([np.nan, np.inf, -np.inf, 0, 1]), np.array([1, 2, 3], ">i8"), np.array([0.5], np.float16),
    np.array([(1, 2)], dtype=[("a", "i4"), ("b", "i4")]), np.array(["2024-01-01"], "datetime64[D]"),
]


def _mutated_members(rng: random.Random) -> dict[str, np.ndarray]:
    members = _npz_members(rng)
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(sorted(members) + ["extra"])
        op = rng.randrange(4)
        if op == 0:
            members[key] = rng.choice(ODD_VALUES)
        elif op == 1 and key in members:
            del members[key]
        elif op == 2 and key in members and members[key].ndim == 1 and len(members[key]):
            arr = members[key].copy()
            try:
                arr[rng.randrange(len(arr))] = rng.choice([-1, 0, 1, 4, 5, 100, 2**30])
            except (OverflowError, ValueError, TypeError):
                continue  # the value does not fit this dtype: no mutation this time
            members[key] = arr
        elif key in members and members[key].dtype.kind in "iuf":
            with np.errstate(invalid="ignore", over="ignore"):
                members[key] = members[key].astype(rng.choice(["i1", "u2", "i8", "u8", "f4", "f8", "?"]))
    return members


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _mutated_header(blob: bytes, rng: random.Random) -> bytes:
    """Damage the .npy header text: the part NumPy parses with its own literal evaluator."""
    end = blob.index(b"\n") + 1
    header, body = bytearray(blob[:end]), blob[end:]
    choice = rng.randrange(6)
    if choice == 0:
        header[rng.randrange(10, len(header))] = rng.choice(b"(){}[]'\":,\x00\x1b\n\\")
    elif choice == 1:
        header[6:8] = rng.choice([b"\x03\x00", b"\x09\x09", b"\x00\x00", b"\x02\x00"])
    elif choice == 2:
        header = bytearray(header.replace(b"'descr': '", b"'descr': '" + rng.choice([b"|O", b"<c16", b"V8", b"S0"])
                                          + b"', 'x': '"))
    elif choice == 3:
        header = bytearray(header.replace(b"'shape': (", b"'shape': (" + rng.choice(
            [b"99999999999999999999, ", b"-1, ", b"(((((", b"2, 2, ", b"1e9, "])))
    elif choice == 4:
        header[0:6] = rng.choice([b"\x93NUMPZ", b"PK\x03\x04\x00\x00", b"\x00" * 6])
    else:
        header[8:10] = rng.choice([b"\xff\xff", b"\x00\x00", b"\x05\x00"])
    return bytes(header) + body


def npz_case(rng: random.Random):
    members = _mutated_members(rng)
    blobs = {f"{k}.npy": _npy(v) for k, v in members.items() if v.dtype.kind != "O"}
    if blobs and rng.random() < 0.3:
        name = rng.choice(sorted(blobs))
        blobs[name] = _mutated_header(blobs[name], rng)
    if rng.random() < 0.1:
        blobs[rng.choice(["readme.txt", "x/", "evil.pkl", "indices"])] = b"not an array \x00\n"
    buf = io.BytesIO()
    method = rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, blob in blobs.items():
            zf.writestr(name, blob)
        if rng.random() < 0.05 and blobs:
            with warnings.catch_warnings():  # zipfile warns about the duplicate name it writes
                warnings.simplefilter("ignore")
                zf.writestr(rng.choice(sorted(blobs)), b"\x93NUMPY\x01\x00")
    data = buf.getvalue()
    if rng.random() < 0.15:
        data = mutate_bytes(data, rng)
    suffix = rng.choice(["", "", "", ".gz"])
    return "g.npz" + suffix, COMPRESSIONS[suffix](data), rng.choice(["npz", None])


def test_damaged_npz_files_raise_only_format_errors(tmp_path):
    run_cases(tmp_path, npz_case, "npz")


CRASHED_SCIPY = """
import numpy as np, sys
from kernels.graph.io import read_graph
from kernels.errors import GraphFormatError
path = sys.argv[1]
np.savez(path, indptr=np.array([0, 5000000, 2, 3]), indices=np.array([0, 1, 2]), data=np.array([1.0, 2, 3]),
         shape=np.array([3, 3]), format=np.array(b"csr"))
try:
    read_graph(path)
    print("accepted")
except GraphFormatError as exc:
    print("refused:", exc)
"""


def test_scipy_file_with_a_wild_indptr_is_refused_without_crashing(tmp_path):
    """This file made SciPy's sort_indices corrupt the heap (a segmentation fault); read in a
    child, so that a regression is a failed test rather than a dead test run."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", CRASHED_SCIPY, str(tmp_path / "crash.npz")], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the reader crashed the process (exit {proc.returncode}): {proc.stderr[-500:]}"
    assert proc.stdout.startswith("refused:") and "indptr" in proc.stdout, proc.stdout
