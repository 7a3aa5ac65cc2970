"""``graph-kernels targets``: which execution targets this machine offers."""

from __future__ import annotations

from kernels.cli.common import print_json
from kernels.measure.targets import describe_targets


def register(sub) -> None:
    p = sub.add_parser("targets", help="list execution targets (cuda, sim, cpu) and which is default")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    entries = describe_targets()
    if args.json:
        print_json(entries)
        return 0
    for e in entries:
        mark = "*" if e["default"] else " "
        state = "available" if e["available"] else "unavailable"
        print(f"{mark} {e['target']:<5} {state:<12} {e['detail']}")
    return 0
