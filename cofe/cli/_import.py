"""``cofe import FORMAT FILE -o evalset.jsonl``: convert a labelled set to cofe's format."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cofe._errors import InputError, InputProblem
from cofe.cli._commands import HELP

# cofe.importers.IMPORTERS' names, spelt here so that --help loads no importer
# (tests/cli/test_fast_start.py checks they agree)
FORMATS = ("cofe-rag", "jsonl", "squad")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("import", help=HELP["import"], description=__doc__)
    p.add_argument("format", choices=FORMATS)
    p.add_argument("file", type=Path)
    p.add_argument(
        "-o", "--output", type=Path, required=True, help="native eval set to write (JSONL)"
    )
    p.add_argument("--docs-out", type=Path, help="squad: write each article as a text file here")
    p.add_argument("--limit", type=int, help="keep only the first N samples")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.output.exists() and not args.force:  # an eval set is hours of labelling: never
        # replaced by accident
        raise InputError(
            InputProblem(str(args.output), None, None, "exists; pass --force to replace it")
        )
    from cofe.evalset import write_evalset
    from cofe.importers import IMPORTERS

    result = IMPORTERS[args.format](args.file)
    samples = result.samples[: args.limit] if args.limit else result.samples
    rejected = _rejected(result)
    if not result.samples and rejected:  # nothing to write: an error, not a file
        for problem in result.problems:
            print(f"problem: {problem}", file=sys.stderr)
        raise InputError(
            InputProblem(
                str(args.file),
                None,
                None,
                f"no record could be imported ({rejected} rejected); {args.output} was not written",
            )
        )
    written = write_evalset(args.output, samples)
    if args.docs_out and result.documents:
        args.docs_out.mkdir(parents=True, exist_ok=True)
        used = {s.source.doc for s in samples if s.source}
        for name, text in result.documents.items():
            if name in used:
                (args.docs_out / name).write_text(text, encoding="utf-8")
        print(f"wrote {len(used)} document(s) to {args.docs_out}")
    for problem in result.problems:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"wrote {written} sample(s) to {args.output}")
    print(json.dumps(result.stats, ensure_ascii=False))
    if rejected:  # a set missing records must not pass a script's check silently
        print(
            f"cofe: error: {rejected} record(s) rejected (above); the "
            f"{written} others were written",
            file=sys.stderr,
        )
        return 1
    return 0


def _rejected(result: Any) -> int:
    """Records the import left out (a flagged label on a kept sample is not one)."""
    stats = result.stats
    if "rejected_lines" in stats:
        return int(stats["rejected_lines"])
    if "examples" in stats:
        return int(stats["examples"]) - int(stats["imported"])
    return sum(1 for p in result.problems if "kept" not in p.message)
