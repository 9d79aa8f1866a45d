"""The vectors on disk: the stamped index (index), the vector cache (cache) and the warmer that fills it (warm)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragkit.cli.common import CORPUS_HELP, Subcommands, niceness, print, seconds

__all__ = ["add_vector_commands"]


def _index(args: argparse.Namespace) -> int:
    from ragkit import index
    from ragkit.corpus import load_corpus
    from ragkit.embedding import default_embedder

    corpus = load_corpus(args.corpus)
    strategy, size, overlap = index.configured(args.out, args.strategy, corpus=corpus, rebuild=args.action == "build")
    if args.action == "status":
        stamp, _entries = index.read_index(args.out, corpus)
        if stamp is None:
            print(f"no index in {args.out}: run `python -m ragkit index build --corpus {args.corpus} --out {args.out}`")
            return 1
        report = index.status(corpus, args.out, index.current_stamp(default_embedder(), strategy, size, overlap))
    else:
        run = index.build if args.action == "build" else index.update
        report = run(corpus, args.out, default_embedder(), strategy, size, overlap, wait=args.wait)
    print(f"index {args.out}: strategy {strategy}, chunk size {size}, overlap {overlap}")
    print("\n".join(report.lines()))
    return 0 if report.searchable else 1


def _cache(args: argparse.Namespace) -> int:
    import shutil

    from ragkit.embedding import default_embedder
    from ragkit.plumbing.cache import CACHE_FILE, VectorCache
    from ragkit.plumbing.locations import cache_dir

    root = cache_dir()
    if args.action == "clear":
        from ragkit.errors import InputError
        from ragkit.plumbing import warming

        if not root.is_dir():
            print(f"cleared {root}: nothing to clear")
            return 0
        # under the warmer's lock: clearing beneath a running warmer would leave it reporting vectors that are gone;
        # taking the lock also rewrites the status file with no stage done
        with warming.holding(root) as holder:
            if holder is None:
                pid = warming.read_status(root).pid or "?"
                raise InputError(
                    f"a warmer (pid {pid}) is filling {root}: nothing cleared. Let it finish, or stop "
                    f"it (`kill {pid}`), then clear again"
                )
            removed = [p for p in (root / CACHE_FILE, root / "onnx") if p.exists()]
            removed += [root / f"{CACHE_FILE}{s}" for s in ("-wal", "-shm") if (root / f"{CACHE_FILE}{s}").exists()]
            for path in removed:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        print(f"cleared {root}: " + (", ".join(p.name for p in removed) if removed else "nothing to clear"))
        return 0
    cache: VectorCache = default_embedder().cache
    print(f"private cache: {root} (RAGKIT_CACHE)")
    if cache.shared is not None:
        print(f"shared cache:  {cache.shared.parent} (RAGKIT_SHARED_CACHE, read-only)")
    rows = cache.summary()
    if not rows:
        print("no cached vectors yet: `python -m ragkit warm` fills the cache")
    for layer, stamp, kind, n, size in rows:
        mark = "" if stamp == cache.stamp else "  (another model or configuration)"
        print(f"  {layer:<7} {kind:<6} {n:6,d} rows {size / 1e6:7.1f} MB  {stamp}{mark}")
    return 0


def _warm(args: argparse.Namespace) -> int:
    import os

    from ragkit.errors import InputError
    from ragkit.plumbing import warming
    from ragkit.plumbing.locations import cache_dir

    if args.cache:
        os.environ["RAGKIT_CACHE"] = str(args.cache)
    if args.background:
        if args.cache:
            raise InputError("--background warms the notebooks' own cache; fill a shared one in the foreground")
        print(warming.start_background(args.background, args.nice))
        return 0
    try:
        with warming.holding() as holder:
            if holder is None:
                print(
                    f"another warmer is running (pid {warming.read_status().pid or '?'}): this one leaves it to "
                    "finish"
                    + (
                        f"; {args.cache} is not finished by this run: run this command again once that warmer has ended"
                        if args.cache
                        else ""
                    )
                )
                return 0
            # the lock is held before the heavy imports: a notebook opened meanwhile already sees a warmer to wait for
            from ragkit.teach.course import warm

            print(warm(holder, progress=not args.quiet))
            if args.cache:
                _finish_shared(args.cache)  # still under the lock: no other warmer writes into it meanwhile
    except OSError as exc:
        message = f"cache folder {cache_dir()} is not writable ({exc.strerror or exc}): nothing warmed"
        if args.cache:
            raise InputError(f"{message}; give --cache a folder you can write to") from exc
        print(f"{message}; set RAGKIT_CACHE to a writable folder to keep vectors between sessions")
    return 0


def _finish_shared(folder: Path) -> None:
    """Finish a cache this run filled for sharing, and say so only once its journal mode really changed."""
    from ragkit.embedding import default_embedder
    from ragkit.errors import InputError
    from ragkit.plumbing.cache import finish_shared

    cache = default_embedder().cache
    filled = sum(n for layer, stamp, _, n, _ in cache.summary() if layer == "private" and stamp == cache.stamp)
    cache.close()
    if not filled:
        raise InputError(
            f"nothing was written into {folder} (see the warning above): it is not finished for "
            "sharing; fix the cause and run this command again"
        )
    print(
        f"{finish_shared(folder)} is ready to share: give it to root and make it read-only "
        f"(`chown -R root: {folder}; chmod -R a-w,a+rX {folder}`), then point RAGKIT_SHARED_CACHE at {folder}"
    )


def add_vector_commands(sub: Subcommands) -> None:
    """The index, cache and warm commands and their arguments."""
    p = sub.add_parser("index", help="a stamped on-disk index: build, status, update")
    p.add_argument(
        "action",
        choices=["build", "status", "update"],
        help="build: index every document from scratch; status: compare the index with the corpus "
        "(current, stale, new, failed documents); update: re-embed only what is stale, new or failed",
    )
    p.add_argument("--corpus", type=Path, help=CORPUS_HELP)
    p.add_argument("--out", type=Path, default=Path(".ragkit-index"), help="the index's folder (default .ragkit-index)")
    p.add_argument("--strategy", default=None, help="chunking strategy (default: the index's own, else E)")
    p.add_argument("--wait", type=seconds, default=30.0, help="seconds to wait for another writer (default 30)")
    p.set_defaults(run=_index)
    p = sub.add_parser("cache", help="the vector cache: status (what it holds) or clear (the private one)")
    p.add_argument(
        "action",
        choices=["status", "clear"],
        help="status: what the cache holds; clear: remove its vectors and ONNX export (refused while a "
        "warmer fills it)",
    )
    p.set_defaults(run=_cache)
    p = sub.add_parser("warm", help="embed everything the notebooks use into the cache (`make lab` and Binder run it)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--cache",
        type=Path,
        help="cache folder to warm (default: RAGKIT_CACHE, else the clone's .ragkit-cache/; see docs/developer.md)",
    )
    p.add_argument(
        "--background",
        type=Path,
        metavar="LOG",
        help="start the warmer detached, logging to LOG, and return once it holds its lock (`make lab`)",
    )
    p.add_argument(
        "--nice", type=niceness, default=19, help="the background warmer's niceness (default 19, the lowest)"
    )
    p.set_defaults(run=_warm)
