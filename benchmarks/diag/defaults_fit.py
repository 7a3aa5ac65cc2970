"""Score the ``auto`` rules against a bench_defaults.py sweep file, without a GPU: for each case
and real input, what the registry's rules choose now (on this machine, from the same inputs) and
that cell's measured time / the best measured cell.

    python3 benchmarks/diag/defaults_fit.py benchmarks/results/defaults-nvidia-h100-80gb-hbm3.jsonl
"""
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_defaults import load  # noqa: E402

from kernels.algorithms.registry import get_variant  # noqa: E402
from kernels.run.runner import resolved_ahead  # noqa: E402


def chosen(family, variant, params, graph):
    fam, var = get_variant(family, variant)
    resolved = fam.resolve_params(var, params)
    problem = fam.prepare(graph, resolved, 0)
    # the rules, not a measured trial (k-clique's work=auto measures on a GPU): this scores rules
    return resolved_ahead(fam, var, problem, resolved, "cuda")


def main(path):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    cells = defaultdict(list)
    for r in rows:
        if r.get("median_s") and r.get("verified") and not r["default"]:
            cells[(r["case"], r["input"])].append(r)
    graphs = {}
    summary = defaultdict(lambda: [0, 0])
    for (case, spec), cs in sorted(cells.items()):
        if not cs[0]["real"]:
            continue
        family = case.split("/")[0]
        best = min(cs, key=lambda r: r["median_s"])
        default_variant, default_params = {
            "triangles": ("gpu-oriented", {}), "spmv": (case.split("/")[1], {}),
            "kclique": ("gpu", {"k": int(case.split("=")[1])} if "k=" in case else {})}[family]
        graph = graphs.get(spec) or graphs.setdefault(spec, load(spec))
        pick = chosen(family, default_variant, default_params, graph)
        keys = set().union(*(r["params"] for r in cs))

        def match(r, pick=pick, keys=keys, family=family):
            if family == "kclique" and r["variant"] != f"gpu-{pick.get('work')}":
                return False
            return all(pick.get(k) == v for k, v in r["params"].items() if k in keys and k in pick)

        hit = [r for r in cs if match(r)]
        if family == "spmv" and case.endswith("adaptive"):
            hit = [r for r in cs if r["params"].get("short_mode") == "group"
                   and r["params"].get("threads_per_row") == pick["threads_per_row"]] if \
                pick.get("short_mode") in ("group", "auto") else hit
        ratio = hit[0]["median_s"] / best["median_s"] if hit else float("nan")
        summary[case][1] += 1
        summary[case][0] += ratio <= 1.10
        shown = {k: pick.get(k) for k in ("rows", "threads_per_row", "group_size", "work", "long_row") if k in pick}
        print(f"{case:22s} {spec:26s} pick {shown} ratio {ratio:.2f}  best {best['variant']} {best['params']}")
    for case, (ok, n) in summary.items():
        print(f"SUMMARY {case}: {ok}/{n} within 10 %")


if __name__ == "__main__":
    main(sys.argv[1])
