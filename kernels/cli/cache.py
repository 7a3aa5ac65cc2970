"""``graph-kernels cache info|clear``: the disk cache of compiled kernels (kernels/cuda/kernel_cache.py)."""

from __future__ import annotations

from kernels.cli.common import print_json


def register(sub) -> None:
    p = sub.add_parser("cache", help="the disk cache of compiled GPU kernels: where, how big; or empty it")
    p.add_argument("action", choices=("info", "clear"),
                   help="info: its folder, entries, size and limit; clear: remove every entry")
    p.add_argument("--json", action="store_true", help="info as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from kernels.cuda.kernel_cache import CACHE_ENV, LIMIT_ENV, default_store
    from kernels.memory import format_bytes

    store = default_store()
    if store is None:
        print(f"the kernel cache is off ({CACHE_ENV}=off): every process compiles its kernels")
        return 0
    if args.action == "clear":
        removed = store.clear()
        claims = store.root / "claims"
        if claims.is_dir():              # compile-ahead marks: of kernels no longer there
            for mark in claims.iterdir():
                mark.unlink(missing_ok=True)
        print(f"removed {removed} compiled kernel(s) from {store.root}")
        return 0
    info = store.info()
    if args.json:
        print_json(info)
        return 0
    print(f"kernel cache {info['path']} ({CACHE_ENV} moves it, or =off)")
    print(f"  {info['entries']} compiled kernel(s), {format_bytes(info['bytes'])} of "
          f"{format_bytes(info['limit_bytes'])} ({LIMIT_ENV}; least recently used go first)")
    return 0
