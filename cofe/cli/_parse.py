"""``cofe parse FILE``: the text cofe's parser reads from a document, before you write keywords.

    cofe parse report.pdf            # the parsed text, as the parse step and the chunker see it
    cofe parse docs/ --json          # every document: doc_id, text, meta (pages, elements)

Fine keywords are matched verbatim (whole tokens, case and spacing normalised) in this text:
copy them from it, not from the PDF viewer (a table is one row a line, cells between
`` | ``; hyphenation, ligatures and headers come out as the parser reads them). A file that
cannot be parsed is named with the reason on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cofe.cli._commands import HELP


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "parse",
        help=HELP["parse"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", type=Path, metavar="FILE", help="a document, or a folder of them")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per document (doc_id, source, text, meta), as documents.jsonl",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cofe.pipeline import parse_documents

    parsed = parse_documents(args.path)
    for problem in parsed.problems:
        print(f"cofe: {problem}", file=sys.stderr)
    for position, doc in enumerate(parsed.documents):
        if args.json:
            print(json.dumps(doc.model_dump(mode="json"), ensure_ascii=False))
            continue
        if len(parsed.documents) > 1 or args.path.is_dir():
            print(("\n" if position else "") + f"==> {doc.doc_id} ({len(doc.text):,} characters)")
        print(doc.text)
    if not parsed.documents:
        print(f"cofe: error: {args.path}: no document could be parsed", file=sys.stderr)
        return 2
    return 0
