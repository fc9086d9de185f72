"""``cofe schema``: the JSON Schema of eval sets and run-log files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cofe._atomic import write_text_atomically
from cofe.cli._commands import HELP


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("schema", help=HELP["schema"], description=__doc__)
    p.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cofe.runlog import runlog_json_schema

    text = json.dumps(runlog_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        write_text_atomically(args.output, text)
    else:
        print(text, end="")
    return 0
