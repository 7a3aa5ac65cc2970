"""``graph-kernels info`` and ``convert`` on every format; one-line errors on corrupt files."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import networkx as nx
import pytest

from kernels.cli import main
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph, write_graph
from tests.conftest import DATA, data_path

IO = DATA / "io"

INFO_KEYS = {
    "name": str, "source": str, "fingerprint": str, "rows": int, "cols": int, "square": bool,
    "directed": bool, "weighted": bool, "vertices": (int, type(None)), "edges": int, "stored_entries": int,
    "self_loops": int, "duplicate_entries": int, "degree": dict, "isolated_vertices": (int, type(None)),
    "components": (int, type(None)), "memory": dict, "notices": list,
}


@pytest.fixture(scope="module")
def sample_files(tmp_path_factory):
    """One file per readable format (the NetworkX ones written by NetworkX)."""
    tmp = tmp_path_factory.mktemp("formats")
    g = CSRGraph.from_edges(4, [0, 1, 2, 0], [1, 2, 3, 3], [1.0, 2.0, 3.0, 4.0], directed=False,
                            both_directions=True)
    files = {
        "mtx": data_path("karate.mtx"),
        "mtx.gz": data_path("delaunay_n15.mtx"),
        "dimacs-gr": IO / "road.gr",
        "dimacs-clq": IO / "triangle_plus.clq",
        "metis": IO / "everything.graph",
        "csv": IO / "labels.csv",
        "edgelist": IO / "snap_directed.txt",
    }
    write_graph(g, tmp / "g.npz")
    files["npz"] = tmp / "g.npz"
    nxg = g.to_networkx()
    nx.write_graphml(nxg, tmp / "g.graphml")
    nx.write_gml(nxg, tmp / "g.gml")
    nx.write_pajek(nxg, tmp / "g.net")
    files.update(graphml=tmp / "g.graphml", gml=tmp / "g.gml", pajek=tmp / "g.net")
    (tmp / "g.txt.bz2").write_bytes(__import__("bz2").compress((IO / "snap_directed.txt").read_bytes()))
    files["edgelist.bz2"] = tmp / "g.txt.bz2"
    return files


@pytest.mark.parametrize("kind", ["mtx", "mtx.gz", "dimacs-gr", "dimacs-clq", "metis", "csv", "edgelist",
                                  "npz", "graphml", "gml", "pajek", "edgelist.bz2"])
def test_info_json_schema_on_every_format(sample_files, capsys, kind):
    path = sample_files[kind]
    assert main(["info", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert set(info) == set(INFO_KEYS)
    for key, types in INFO_KEYS.items():
        assert isinstance(info[key], types), (key, info[key])
    assert set(info["degree"]) == {"min", "mean", "max"}
    assert {"csr_bytes", "slotted_bytes_estimate", "slotted_page_size"} <= set(info["memory"])
    assert info["source"] == str(path)
    g = read_graph(path)
    assert (info["rows"], info["stored_entries"], info["fingerprint"]) == (g.n_rows, g.nnz, g.fingerprint)


def test_info_text_output(sample_files, capsys):
    assert main(["info", str(sample_files["mtx"])]) == 0
    out = capsys.readouterr().out
    assert "karate" in out and "vertices        34" in out and "edges           78" in out


def test_info_reading_options(capsys):
    assert main(["info", str(IO / "snap_directed.txt"), "--undirected", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["directed"] is False
    assert main(["info", str(IO / "road.gr"), "--directed"]) == 1
    assert "directed" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["mtx", "dimacs-gr", "metis", "csv", "graphml", "pajek", "npz"])
@pytest.mark.parametrize("out", ["out.mtx", "out.txt", "out.npz", "out.mtx.gz"])
def test_convert_between_formats(sample_files, tmp_path, capsys, kind, out):
    src = sample_files[kind]
    target = tmp_path / out
    assert main(["convert", str(src), str(target)]) == 0
    assert "wrote" in capsys.readouterr().err
    original, converted = read_graph(src), read_graph(target)
    assert converted.n_rows == original.n_rows
    assert converted.directed == original.directed
    assert converted.weighted == original.weighted
    assert converted.same_structure(original)


def test_convert_applies_cleanup_and_reports_it(tmp_path, capsys):
    assert main(["convert", str(data_path("jagmesh7.mtx")), str(tmp_path / "j.txt"), "--drop-self-loops"]) == 0
    assert "removed 1138 self-loops" in capsys.readouterr().err
    assert read_graph(tmp_path / "j.txt").num_self_loops == 0


CORRUPT = {
    "bad.mtx": b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 x\n",
    "bad.mtx.gz": gzip.compress(b"%%MatrixMarket matrix coordinate pattern general\n3 3 9\n1 2\n")[:30],
    "bad.graph": b"3 3\n2\n1\n",
    "bad.npz": b"PK\x03\x04 definitely not a zip archive",
    "bad.graphml": b"<graphml><graph><node id='1'></graph>",
    "noise.bin": bytes(range(256)),
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
@pytest.mark.parametrize("command", ["info", "convert"])
def test_corrupt_file_gives_one_line_and_exit_1(tmp_path, capsys, name, command):
    path = tmp_path / name
    path.write_bytes(CORRUPT[name])
    argv = [command, str(path)] + ([str(tmp_path / "out.mtx")] if command == "convert" else [])
    assert main(argv) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("graph-kernels: error: ") and str(path) in lines[0]
    assert "Traceback" not in captured.err and captured.out == ""
    assert not (tmp_path / "out.mtx").exists()


def test_corrupt_file_through_a_real_process(tmp_path):
    path = tmp_path / "broken.mtx"
    path.write_bytes(CORRUPT["bad.mtx"])
    result = subprocess.run([sys.executable, "-m", "kernels", "info", str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"graph-kernels: error: {path}, line 4: value 2 is 'x', not an integer "
        "(expected 2 values per line: INT INT)"]
