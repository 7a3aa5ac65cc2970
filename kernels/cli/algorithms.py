"""``graph-kernels algorithms``: every family, variant, parameter, constraint and metric."""

from __future__ import annotations

from kernels.cli.common import print_json


def register(sub) -> None:
    p = sub.add_parser("algorithms", help="list algorithm families, variants, parameters and metrics")
    p.add_argument("family", nargs="?", help="only this family")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from kernels.algorithms.registry import families, get_family

    fams = [get_family(args.family)] if args.family else list(families().values())
    if args.json:
        print_json([f.to_json() for f in fams])
        return 0
    for f in fams:
        metrics = ", ".join(f"{m.name} ({m.unit})" for m in f.metrics)
        print(f"{f.name}: {f.title}")
        print(f"  needs: {f.needs}; reference: {f.reference_name}; metrics: {metrics}")
        for p in f.params:
            print(f"  --param {p.name}={p.default!s:<8} {p.allowed_text()}. {p.help}")
        for v in f.variants.values():
            reason = v.available()
            state = f"  [unavailable: {reason}]" if reason else ""
            print(f"  {v.name:<22} {v.kind:<12} targets {'/'.join(v.targets)}{state}")
            print(f"      {v.description}")
            for p in v.params:
                print(f"      --param {p.name}={p.default!s:<8} {p.allowed_text()}. {p.help}")
            for c in v.constraints:
                print(f"      constraint: {c.expression}" + (f" ({c.explanation})" if c.explanation else ""))
        print()
    return 0
