"""``cofe sweep``: run a grid of configurations, score every cell, name the best per measure.

    cofe sweep --docs D --evalset E --out DIR --chunk-size 128,256,512 --retriever bm25,dense

Cells are run directories under DIR (resumed when run again); the cache shares
parsing, chunking and indexes across them. ``--pipeline mod:factory`` sweeps
your own pipeline: ``factory(**params)`` gets each cell's parameters.
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
        help="run a grid of configurations and compare them",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--evalset", type=existing_path, required=True)
    p.add_argument(
        "--docs", type=existing_path, help="documents folder (parsed once for every cell)"
    )
    p.add_argument("--out", type=Path, required=True, help="sweep folder: one run per cell")
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


def run(args: argparse.Namespace) -> int:
    from cofe._progress import progress_lines
    from cofe.sweep import run_sweep

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
