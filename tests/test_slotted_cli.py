"""``graph-kernels pages``: layout description of a file, and the page-size comparison."""

from __future__ import annotations

import json

from kernels.cli import main
from kernels.graph.io import read_graph
from kernels.graph.slotted import SlottedGraph

from .conftest import data_path


def test_pages_describes_the_layout_as_json(capsys):
    path = data_path("as-caida20071105.mtx")
    assert main(["pages", str(path), "--page-size", "256", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    s = SlottedGraph.from_csr(read_graph(path), page_size=256)
    assert out["pages"] == s.num_pages and out["memory"]["slotted_bytes"] == s.memory_bytes
    assert out["large_lists"]["count"] > 0 and sum(out["fill"]["histogram"]["counts"]) == s.num_pages
    assert out["build_seconds"] > 0


def test_pages_compares_page_sizes(capsys):
    assert main(["pages", str(data_path("delaunay_n10.mtx")), "--page-sizes", "256,512,1024,2048"]) == 0
    text = capsys.readouterr().out
    assert [line.split()[0] for line in text.splitlines()[2:]] == ["256", "512", "1024", "2048"]
    assert main(["pages", str(data_path("karate.mtx")), "--page-sizes", "32,64", "--json"]) == 0
    layouts = json.loads(capsys.readouterr().out)["layouts"]
    assert [r["page_size"] for r in layouts] == [32, 64] and layouts[0]["pages"] > layouts[1]["pages"]


def test_pages_reads_a_rectangular_matrix_as_a_directed_graph(capsys):
    assert main(["pages", str(data_path("lp_afiro.mtx")), "--page-size", "16"]) == 0
    captured = capsys.readouterr()
    assert "51 vertices" in captured.out and "directed graph on 51 vertices" in captured.err


def test_pages_refuses_bad_sizes_and_duplicate_entries_in_one_line(capsys, tmp_path):
    assert main(["pages", str(data_path("karate.mtx")), "--page-sizes", "256,100"]) == 1
    assert "multiple of 16" in capsys.readouterr().err
    dup = tmp_path / "dup.mtx"
    dup.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n1 2\n2 3\n")
    assert main(["pages", str(dup), "--page-size", "16"]) == 1
    err = capsys.readouterr().err
    assert "--drop-duplicates" in err and len(err.strip().splitlines()) == 1
    assert main(["pages", str(dup), "--page-size", "16", "--drop-duplicates"]) == 0


def test_every_command_and_the_gui_default_to_one_page_size(capsys):
    """Issue 25: pages and dynamic said 1024 words, info and the GUI 256, for the same graph."""
    from kernels.dynamic import DynamicSettings
    from kernels.graph.page_size import page_size_for
    from kernels.graph.stats import graph_info

    path = data_path("karate.mtx")
    g = read_graph(path)
    assert main(["pages", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["page_size"] == page_size_for(g) == 256
    assert graph_info(g)["memory"]["slotted_page_size"] == 256
    settings = DynamicSettings()
    settings.choose_page_size(g)
    assert settings.page_size == 256
    given = DynamicSettings(page_size=64)
    given.choose_page_size(g)
    assert given.page_size == 64                        # a size given is kept
