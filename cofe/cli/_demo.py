"""``cofe demo``: the whole chain offline on shipped real data, at two chunk sizes, side by side."""

from __future__ import annotations

import argparse
from pathlib import Path

from cofe._errors import InputError
from cofe.cli._commands import HELP
from cofe.cli._run import make_cache


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help=HELP["demo"], description=__doc__)
    p.add_argument(
        "--out", type=Path, default=Path("cofe-demo"), help="work folder (default ./cofe-demo)"
    )
    p.add_argument("--chunk-sizes", default="128,512", help="comma-separated (default 128,512)")
    p.add_argument("--retriever", choices=["bm25", "dense", "hybrid"], default="bm25")
    p.add_argument("--reranker", default="none", help="none | minilm (default none)")
    p.add_argument("--cache", type=Path, default=None, help="cache folder ('none' disables it)")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument(
        "--generator",
        choices=["extractive", "openai"],
        default="extractive",
        help="openai: a real model answers (and judges the answers)",
    )
    p.add_argument("--base-url", help="endpoint base URL (default: $OPENAI_BASE_URL)")
    p.add_argument("--model", help="model name (default: $OPENAI_MODEL)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cofe.demo import DemoConfig, run_demo

    try:
        sizes = tuple(int(s) for s in args.chunk_sizes.split(",") if s.strip())
    except ValueError:
        raise InputError(
            f"--chunk-sizes {args.chunk_sizes!r}: give integers like 128,512"
        ) from None
    config = DemoConfig(
        chunk_sizes=sizes,
        retriever=args.retriever,
        reranker=args.reranker,
        generator=args.generator,
    )
    endpoint = None
    if args.generator == "openai":
        from cofe.llm import Endpoint

        endpoint = Endpoint.from_env(base_url=args.base_url, model=args.model)
    run_demo(
        args.out,
        config,
        cache=make_cache(args.cache),
        concurrency=args.concurrency,
        endpoint=endpoint,
    )
    return 0
