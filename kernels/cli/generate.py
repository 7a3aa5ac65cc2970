"""``graph-kernels generate KIND [--OPTION VALUE ...] --seed S --out FILE``: seeded graphs.

The options of each kind come from the generator registry
(:data:`kernels.graph.generators.GENERATORS`), so a new generator needs no change here.
``graph-kernels generate --list`` shows every kind with its options;
``graph-kernels generate KIND --help`` shows one.
"""

from __future__ import annotations

import argparse
import sys
import time

from kernels.errors import GraphKernelsError, ParameterError


def register(sub) -> None:
    p = sub.add_parser(
        "generate", help="generate a seeded random or structured graph (or SpMV matrix) and write it",
        description="Generate a graph or sparse matrix, deterministic for a seed, and write it to a file. "
                    "Options depend on KIND: see --list, or KIND --help.")
    p.add_argument("kind", nargs="?", metavar="KIND", help="generator (see --list)")
    p.add_argument("--list", action="store_true", help="list the generators and their options")
    p.add_argument("--json", action="store_true", help="with --list: print the list as JSON")
    p.add_argument("options", nargs=argparse.REMAINDER, metavar="--OPTION VALUE",
                   help="options of KIND, then --out FILE (and --seed S, --weights ...)")
    p.set_defaults(func=run)


class _OptionParser(argparse.ArgumentParser):
    """A per-kind parser whose complaints become one-line project errors (exit code 1)."""

    def error(self, message: str):
        raise GraphKernelsError(f"{self.prog}: {message}")


def _describe_option(option) -> str:
    default = "" if option.required else f"; default {option.default_text()}"
    return f"{option.help} ({option.allowed()}{default})"


def _kind_parser(spec) -> _OptionParser:
    parser = _OptionParser(prog=f"graph-kernels generate {spec.name}", description=spec.summary,
                           allow_abbrev=False)
    for option in spec.all_options:
        if option.type is bool:
            parser.add_argument(option.cli_flag, dest=option.name, default=None,
                                action=argparse.BooleanOptionalAction, help=_describe_option(option))
        else:
            parser.add_argument(option.cli_flag, dest=option.name, default=None,
                                metavar=option.name.upper(), help=_describe_option(option))
    parser.add_argument("--out", "-o", required=True, metavar="FILE",
                        help="output file; the format follows the extension (.mtx, .txt, .npz, ...)")
    parser.add_argument("--format", help="force the output format")
    return parser


def _parse_options(spec, tokens: list[str]) -> tuple[dict, argparse.Namespace]:
    parser = _kind_parser(spec)
    args, unknown = parser.parse_known_args(tokens)
    if unknown:
        known = ", ".join(o.cli_flag for o in spec.all_options)
        raise ParameterError(f"option of {spec.name}", unknown[0], f"{known}, --out, --format")
    options = {}
    for option in spec.all_options:
        value = getattr(args, option.name)
        if value is None:
            if option.required:
                raise GraphKernelsError(f"{parser.prog}: missing {option.cli_flag} ({option.allowed()})")
            continue
        options[option.name] = value if option.type is bool else option.parse(value)
    return options, args


def _list_generators(as_json: bool) -> None:
    from kernels.graph.generators import GENERATORS

    if as_json:
        from kernels.cli.common import print_json

        print_json({name: {"summary": spec.summary, "produces": spec.produces,
                           "options": [{"name": o.name, "type": o.type.__name__,
                                        "default": None if o.required else o.default,
                                        "required": o.required, "allowed": o.allowed(), "help": o.help}
                                       for o in spec.all_options]}
                    for name, spec in GENERATORS.items()})
        return
    for name, spec in GENERATORS.items():
        print(f"{name}: {spec.summary}")
        for option in spec.options:
            print(f"    {option.cli_flag:<20} {_describe_option(option)}")
        common = " ".join(o.cli_flag for o in spec.common_options)
        if common:
            print(f"    also: {common}")


def run(args) -> int:
    if args.list:
        _list_generators(args.json)
        return 0
    if not args.kind:
        raise GraphKernelsError("generate: name a KIND (graph-kernels generate --list shows them)")
    from kernels.cli.common import progress_of
    from kernels.graph.generators import generator_spec
    from kernels.graph.io import write_graph

    spec = generator_spec(args.kind)
    options, parsed = _parse_options(spec, args.options)
    progress = progress_of(args)
    start = time.perf_counter()
    with progress.task(f"generating {spec.name}", ticking=True):    # generators report no progress: elapsed
        graph = spec(**options)
    generated = time.perf_counter() - start
    start = time.perf_counter()
    with progress.task(f"writing {parsed.out}", ticking=True):
        write_graph(graph, parsed.out, format=parsed.format)
    written = time.perf_counter() - start
    for notice in graph.notices:
        print(notice, file=sys.stderr)
    size = (f"{graph.n_rows:,} x {graph.n_cols:,} matrix, {graph.nnz:,} nonzeros" if spec.produces == "matrix"
            else f"{graph.n_rows:,} vertices, {graph.num_edges:,} edges")
    print(f"generated {graph.name}: {size} in {generated:.2f} s; wrote {parsed.out} in {written:.2f} s")
    return 0
