"""``cofe run``: answer an eval set with a pipeline, record every stage, then score the run."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from cofe._cache import Cache, default_cache_dir
from cofe._progress import progress_lines
from cofe.cli._args import existing_path
from cofe.cli._commands import HELP
from cofe.cli._score import score_and_write


def add_pipeline_options(p: argparse.ArgumentParser) -> None:
    """The default pipeline's knobs (shared by ``run`` and ``demo``)."""
    g = p.add_argument_group("default pipeline")
    g.add_argument("--splitter", choices=["sentence", "token"], default="sentence")
    g.add_argument("--chunk-size", type=int, default=256, help="tokens per chunk (default 256)")
    g.add_argument("--chunk-overlap", type=int, default=20, help="tokens (default 20)")
    g.add_argument(
        "--tables",
        action="store_true",
        help="table-aware chunking: cut a table only between rows and repeat its "
        "header row at the top of each piece",
    )
    g.add_argument("--retriever", choices=["bm25", "dense", "hybrid"], default="bm25")
    g.add_argument(
        "--reranker", default="none", help="none | minilm | llm | cross-encoder:PATH (default none)"
    )
    g.add_argument("--candidates", type=int, default=30, help="retrieved pool size (default 30)")
    g.add_argument("--top-k", type=int, default=4, help="chunks given to the generator (default 4)")
    g.add_argument(
        "--generator",
        choices=["extractive", "openai"],
        default="extractive",
        help="extractive (offline, not an LLM) or openai (any OpenAI-compatible endpoint)",
    )
    g.add_argument("--base-url", help="endpoint base URL (default: $OPENAI_BASE_URL)")
    g.add_argument("--model", help="model name (default: $OPENAI_MODEL)")
    g.add_argument(
        "--no-probe",
        action="store_true",
        help="do not check that the endpoint answers before starting",
    )
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help=f"cache of parsed files, chunks, embeddings, indexes (default {default_cache_dir()}; "
        "'none' disables it)",
    )
    p.add_argument(
        "--concurrency", type=int, default=4, help="queries answered at once (default 4)"
    )


def pipeline_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {
        "splitter": args.splitter,
        "chunk_size": args.chunk_size,
        "chunk_overlap": args.chunk_overlap,
        "tables": args.tables,
        "retriever": args.retriever,
        "reranker": args.reranker,
        "candidates": args.candidates,
        "top_k": args.top_k,
        "generator": args.generator,
    }
    if args.generator == "openai" or args.reranker == "llm":
        from cofe.llm import Endpoint

        endpoint = Endpoint.from_env(base_url=args.base_url, model=args.model)
        options["endpoint"] = endpoint
        if not getattr(args, "no_probe", False):  # fail in seconds, not after the parse
            endpoint.probe()
    return options


def make_cache(path: Path | None) -> Cache:
    if path is not None and str(path) == "none":
        return Cache(None)
    return Cache(path or default_cache_dir())


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help=HELP["run"], description=__doc__)
    p.add_argument(
        "--pipeline",
        default="default",
        help="'default' (built-in offline pipeline) or 'package.module:factory'",
    )
    p.add_argument(
        "--docs", type=existing_path, help="folder (or file) of documents to parse and index"
    )
    p.add_argument("--evalset", type=existing_path, required=True, help="eval set (JSONL)")
    p.add_argument("--out", type=Path, required=True, help="run directory to write (or resume)")
    p.add_argument(
        "--fresh", action="store_true", help="discard a run already in --out instead of resuming it"
    )
    p.add_argument("--no-score", action="store_true", help="record the run only")
    p.add_argument(
        "--async",
        dest="use_async",
        action="store_true",
        help="drive the pipeline's async path (a LlamaIndex engine's aquery) on one "
        "event loop, --concurrency queries at a time",
    )
    add_pipeline_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    with progress_lines() as progress:
        return _run(args, started, progress)


def _run(args: argparse.Namespace, started: float, progress: bool) -> int:
    from cofe.runner import load_pipeline, run_pipeline

    if args.pipeline == "default":
        if args.docs is None:
            print("cofe: error: the default pipeline needs --docs", file=sys.stderr)
            return 2
        pipeline = load_pipeline("default", **pipeline_options(args))
    else:
        pipeline = load_pipeline(args.pipeline)
    built = time.perf_counter() - started  # importing and building the pipeline (a factory
    # may index a whole corpus), probing its endpoint: part of the command's time
    report = run_pipeline(
        pipeline,
        args.evalset,
        args.out,
        docs=args.docs,
        cache=make_cache(args.cache),
        concurrency=args.concurrency,
        use_async=args.use_async,
        fresh=args.fresh,
        progress=progress,
        build_seconds=built,
    )
    print(report.summary())
    if args.no_score:
        return 0
    from cofe.report import render_result
    from cofe.stages import ScoreConfig

    # the run's manifest records its top-K: the default settings read it from there
    config = ScoreConfig()
    scoring = time.perf_counter()
    result, files = score_and_write(args.out, config)
    scored = time.perf_counter() - scoring
    print()
    print(render_result(result, files_in=str(files)))
    print(
        f"\ntime in all {time.perf_counter() - started:.1f}s: the run "
        f"{report.seconds.get('total', 0.0):.1f}s, scoring {scored:.1f}s"
    )
    return 0
