"""``cofe sweep``: run a grid of configurations, score every cell, name the best per measure.

    cofe sweep --docs D --evalset E --out DIR --chunk-size 128,256,512 --retriever bm25,dense

Cells are run directories under DIR (resumed when run again); the cache shares
parsing, chunking and indexes across them. ``--pipeline mod:factory`` sweeps
your own pipeline: ``factory(**params)`` gets each cell's parameters.

    cofe sweep --cells RUN RUN/replay/pool RUN/replay/context

ranks cells already scored instead of running a grid: run directories, results folders,
or a replay's scored runs (``cofe replay`` writes ``RUN/replay/<oracle>/``), named
``RUN@oracle``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cofe._cache import Cache, default_cache_dir
from cofe._errors import InputError, InputProblem
from cofe.cli._args import existing_path
from cofe.cli._commands import HELP

if TYPE_CHECKING:
    from cofe.sweep import SweepResult

BUILT_IN = {  # PipelineConfig field -> the type of its values
    "chunk_size": int,
    "chunk_overlap": int,
    "tables": str,  # true,false: table-aware chunking on and off (pydantic reads the words)
    "splitter": str,
    "retriever": str,
    "reranker": str,
    "candidates": int,
    "top_k": int,
}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "sweep",
        help=HELP["sweep"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--evalset", type=existing_path, help="the eval set (a grid needs it)")
    p.add_argument(
        "--docs", type=existing_path, help="documents folder (parsed once for every cell)"
    )
    p.add_argument(
        "--out",
        type=Path,
        help="sweep folder: one run per cell (with --cells: where best.csv, means.csv and "
        "sweep.json go; optional)",
    )
    p.add_argument(
        "--cells",
        nargs="+",
        type=existing_path,
        metavar="FOLDER",
        help="rank these scored cells instead of running a grid: run directories, results "
        "folders, or a replay's RUN/replay/<oracle>/ folders",
    )
    for name in BUILT_IN:
        p.add_argument(
            f"--{name.replace('_', '-')}",
            metavar="V1,V2,...",
            help=f"values of {name} (built-in pipeline)",
        )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a grid parameter for --pipeline's factory (repeatable)",
    )
    p.add_argument("--pipeline", default="default", help="'default' or package.module:factory")
    p.add_argument("--cache", type=Path, help=f"cache folder (default: {default_cache_dir()})")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--alpha", type=float, default=0.05)
    p.set_defaults(run=run)


def _values(raw: str, kind: type | None) -> list[int | str]:
    """The comma-separated values; ``kind`` None: whole numbers as ints, the rest as text."""
    out: list[int | str] = []
    for text in (v.strip() for v in raw.split(",")):
        if not text:
            continue
        if kind is int or (kind is None and text.lstrip("-").isdigit()):
            try:
                out.append(int(text))
            except ValueError:
                raise InputError(
                    InputProblem("<command line>", None, None, f"{text!r} is not a whole number")
                ) from None
        else:
            out.append(text)
    return out


def parse_grid(args: argparse.Namespace) -> dict[str, list[Any]]:
    grid: dict[str, list[Any]] = {}
    for name, kind in BUILT_IN.items():
        raw = getattr(args, name)
        if raw:
            grid[name] = _values(raw, kind)
    for item in args.param:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip():
            raise InputError(
                InputProblem("<command line>", None, "--param", f"{item!r}: use NAME=V1,V2")
            )
        grid[name.strip()] = _values(raw, None)
    if not grid:
        raise InputError(
            InputProblem("<command line>", None, None, "no grid: give e.g. --chunk-size 128,512")
        )
    return grid


def _factory(spec: str) -> Callable[..., Any] | None:
    if spec == "default":
        return None
    from cofe.runner import load_factory

    return load_factory(spec)


def render_sweep(result: SweepResult) -> str:
    from cofe.report import format_table

    rows = []
    for _, r in result.best.iterrows():
        better = "yes" if r["significant"] else "no"
        tied = r.get("tied") or ""
        rows.append(
            [
                f"{r['step']}/{r['measure']}",
                f"tie: {tied}" if tied else r["best"],
                f"{r['best_mean']:.3f} [{r['best_low']:.3f}, {r['best_high']:.3f}]",
                r["runner_up"],
                f"{r['runner_up_mean']:.3f}",
                f"{r['difference']:+.3f} [{r['diff_low']:+.3f}, {r['diff_high']:+.3f}]",
                f"{r['p_holm']:.2g}",
                better,
            ]
        )
    header = [
        "measure",
        "best",
        "mean [95 % CI]",
        "runner-up",
        "mean",
        "best - runner-up",
        "p (Holm)",
        "better?",
    ]
    top = [
        result.headline,
        *([result.small_sample] if result.small_sample else []),
        *([f"Caveat: {result.caveat}"] if result.caveat else []),
        "",
    ]
    return "\n".join(top) + (
        f"Best cell per measure ({len(result.cells)} cells, measures in pipeline order; paired "
        "test of the best against the runner-up, Holm-corrected over the measures; cells "
        "with the same mean are a tie, none of them best)\n" + format_table(header, rows)
    )


def _cell_name(path: Path, shape: dict[str, Any]) -> str:
    """A cell's name: a replay's scored run as ``RUN@oracle`` (its folder is only the
    oracle's name), a run's scoring (``RUN/scores``) as the run's, else the folder's."""
    replay = shape.get("replay")
    folder = path.resolve()
    if isinstance(replay, dict) and replay.get("oracle"):
        run = folder.parent.parent if folder.parent.name == "replay" else folder.parent
        return f"{run.name}@{replay['oracle']}"
    if (folder.parent / "manifest.json").exists():  # RUN/scores, RUN/scores-strict ...
        return (
            folder.parent.name if folder.name == "scores" else f"{folder.parent.name}/{folder.name}"
        )
    return folder.name


def rank_folders(args: argparse.Namespace) -> int:
    """``--cells``: the scored folders ranked as a sweep's cells, nothing run."""
    from cofe.cli._compare import load
    from cofe.sweep import rank_results

    grid = [name for name in BUILT_IN if getattr(args, name)] + (["--param"] if args.param else [])
    if grid or args.docs:
        given = grid[0] if grid else "--docs"
        raise InputError(
            InputProblem(
                "<command line>",
                None,
                "--cells",
                f"ranks cells already scored: give it without a grid ({given}) or --docs",
            )
        )
    if len(args.cells) < 2:
        raise InputError(
            InputProblem("<command line>", None, "--cells", "give at least two cells to rank")
        )
    results = {}
    for path in args.cells:
        result = load(path)
        name = _cell_name(path, result.shape)
        if name in results:  # two folders of one name: their paths tell them apart
            name = str(path)
        results[name] = result
    hashes = {name: r.evalset_sha256 for name, r in results.items() if r.evalset_sha256}
    if len(set(hashes.values())) > 1:  # cells are paired by sample: one eval set
        (a, sha_a), (b, sha_b) = (
            next(iter(hashes.items())),
            next((n, h) for n, h in hashes.items() if h != next(iter(hashes.values()))),
        )
        raise InputError(
            InputProblem(
                "<command line>",
                None,
                "--cells",
                f"the cells answered different eval sets ({a}: {sha_a[:12]}, {b}: "
                f"{sha_b[:12]}): their samples cannot be paired",
            )
        )
    swept = rank_results(results, alpha=args.alpha)
    print(render_sweep(swept))
    if args.out:
        print(f"\nFiles: {swept.write(args.out)}/ best.csv means.csv sweep.json")
    return 0


def run(args: argparse.Namespace) -> int:
    from cofe._progress import progress_lines
    from cofe.sweep import run_sweep

    if args.cells:
        return rank_folders(args)
    for flag, value in (("--evalset", args.evalset), ("--out", args.out)):
        if value is None:
            raise InputError(
                InputProblem(
                    "<command line>", None, flag, "a grid needs it (or rank scored --cells)"
                )
            )
    grid = parse_grid(args)
    cache = Cache(args.cache or default_cache_dir())
    # bars on a terminal; elsewhere a plain line every 10 s (parsing, answering, scoring)
    with progress_lines() as progress:
        result = run_sweep(
            grid,
            args.evalset,
            args.out,
            docs=args.docs,
            factory=_factory(args.pipeline),
            cache=cache,
            concurrency=args.concurrency,
            progress=progress,
            alpha=args.alpha,
            log=lambda line: print(line, file=sys.stderr, flush=True),
        )
    files = result.write(args.out)
    print(render_sweep(result))
    print(
        f"\nFiles: {files}/ best.csv means.csv sweep.json; one run directory per cell "
        "(compare any of them with cofe compare)"
    )
    return 0
