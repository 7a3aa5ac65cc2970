"""README.md's table of variants is the one generated from ``graph-kernels algorithms --json``
(tools/readme_table.py): adding, renaming or removing a variant without regenerating it fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("readme_table", ROOT / "tools" / "readme_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_table_is_the_generated_one():
    tool = _tool()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    families = tool.algorithms_json()
    assert readme == tool.rewritten(readme, tool.table(families)), \
        "README.md's variants table is stale: run python tools/readme_table.py"
    for family in families:                              # every built-in variant is in it, by name
        for variant in family["variants"]:
            assert f"`{variant['name']}`" in readme, (family["name"], variant["name"])


def test_the_table_lists_a_new_variant_and_only_the_marked_region_changes():
    tool = _tool()
    families = [{"name": "demo", "title": "Demo", "variants": [
        {"name": "cpu-serial", "kind": "cpu-serial", "params": []},
        {"name": "gpu-x", "kind": "gpu", "params": [{"name": "wg"}]}]}]
    text = f"before\n{tool.BEGIN}\nold table\n{tool.END}\nafter\n"
    new = tool.rewritten(text, tool.table(families))
    assert new.startswith(f"before\n{tool.BEGIN}\n| family |") and new.endswith(f"{tool.END}\nafter\n")
    assert "| `demo` | Demo | `cpu-serial` | `gpu-x` (wg) |" in new and "old table" not in new
