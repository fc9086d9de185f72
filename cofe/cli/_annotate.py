"""``cofe annotate DOCS -o evalset.jsonl``: documents in, a checked eval set out (LLM);
``cofe review export|import``: people's decisions out and back in."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cofe.cli._commands import HELP
from cofe.cli._run import make_cache


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "annotate",
        help=HELP["annotate"],
        description=__doc__,
    )
    p.add_argument("docs", type=Path, help="folder (or file) of documents")
    p.add_argument("-o", "--out", type=Path, required=True, help="eval set to write (JSONL)")
    from cofe.cli._judge import add_llm_options

    add_llm_options(p, limit="annotate at most N segments not yet annotated")
    p.add_argument("--retries", type=int, default=4, help="retries on 429/5xx/timeouts (default 4)")
    p.add_argument("--segment-tokens", type=int, default=400, help="segment size (default 400)")
    p.add_argument(
        "--max-segments",
        type=int,
        help="plan only the first N segments of the documents (the eval set's extent; "
        "--limit N annotates N more per run)",
    )
    p.add_argument("--language", choices=["auto", "en", "zh"], default="auto")
    p.add_argument("--types", default="factual,analytical,comparative,tutorial")
    p.add_argument(
        "--cache", type=Path, help="cache folder for replies and parsing ('none' disables)"
    )
    p.add_argument("--fresh", action="store_true", help="replace OUT instead of resuming")
    p.add_argument("--dry-run", action="store_true", help="estimate calls and tokens; call nothing")
    p.add_argument(
        "--no-probe",
        action="store_true",
        help="do not check that the endpoint answers before starting",
    )
    p.set_defaults(run=run_annotate)

    r = sub.add_parser("review", help=HELP["review"])
    rs = r.add_subparsers(dest="review_command", required=True)
    e = rs.add_parser("export", help="write a CSV to edit (and an HTML page to read)")
    e.add_argument("evalset", type=Path)
    e.add_argument("-o", "--out", type=Path, required=True, help="CSV file")
    e.add_argument("--html", type=Path, help="also write a read-only HTML page")
    e.set_defaults(run=run_export)
    i = rs.add_parser("import", help="apply a reviewed CSV and write the reviewed eval set")
    i.add_argument("evalset", type=Path)
    i.add_argument("csv", type=Path)
    i.add_argument("-o", "--out", type=Path, required=True)
    i.set_defaults(run=run_import)


def run_annotate(args: argparse.Namespace) -> int:
    from cofe.cli._judge import llm_defaults

    llm_defaults(args)
    from annotators import AnnotateConfig, annotate, dry_run, load_documents
    from cofe.llm import Endpoint, LLMClient

    types = tuple(t.strip() for t in args.types.split(",") if t.strip())
    config = AnnotateConfig(
        max_segment_tokens=args.segment_tokens,
        concurrency=args.concurrency,
        language=args.language,
        types=types,
        max_segments=args.max_segments,
    )
    if not args.dry_run and not args.no_probe:  # fail in seconds, before parsing the documents
        Endpoint.from_env(
            base_url=args.base_url, model=args.model, timeout=args.timeout, max_retries=args.retries
        ).probe()
    cache = make_cache(args.cache)
    documents, problems = load_documents(args.docs, cache)
    for problem in problems:
        print(f"cofe: skipped {problem}", file=sys.stderr)
    if args.dry_run:
        print(json.dumps(dry_run(documents, config), indent=2))
        return 0
    endpoint = Endpoint.from_env(
        base_url=args.base_url, model=args.model, timeout=args.timeout, max_retries=args.retries
    )
    client = LLMClient(endpoint, cache=cache, json_mode=args.json_mode)
    summary = annotate(
        None, args.out, client, config, documents=documents, fresh=args.fresh, limit=args.limit
    )
    print(summary.render())
    why = summary.why_none()
    if why is not None:  # a failure always says why, in one line
        print(f"cofe: error: {why}", file=sys.stderr)
        return 1
    return 0


def run_export(args: argparse.Namespace) -> int:
    from annotators import export_review

    n = export_review(args.evalset, args.out, args.html)
    print(f"wrote {n} samples to {args.out}" + (f" and {args.html}" if args.html else ""))
    return 0


def run_import(args: argparse.Namespace) -> int:
    from annotators import apply_review

    result = apply_review(args.evalset, args.csv, args.out)
    for problem in result.problems:
        print(f"cofe: {problem}", file=sys.stderr)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(result.counts.items()))
    print(
        f"wrote {len(result.kept)} samples to {args.out} ({counts}; {len(result.problems)} problem(s))"
    )
    return 0 if not result.problems else 1
