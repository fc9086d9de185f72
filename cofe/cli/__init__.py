"""The ``cofe`` command: one module per sub-command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from cofe._errors import InputError
from cofe._version import __version__
from cofe.cli import (
    _annotate,
    _compare,
    _demo,
    _import,
    _judge,
    _report,
    _run,
    _schema,
    _score,
    _sweep,
)
from cofe.llm import EndpointUnreachable

COMMANDS = (_demo, _run, _judge, _score, _compare, _sweep, _report, _import, _annotate, _schema)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cofe", description="Find which stage of a RAG pipeline loses the information."
    )
    parser.add_argument("--version", action="version", version=f"cofe {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except InputError as error:
        print(f"cofe: error: {error}", file=sys.stderr)
        return 2
    except EndpointUnreachable as error:  # a failure of the endpoint, not of the command line
        print(f"cofe: error: {error}", file=sys.stderr)
        return 1
    except (ValueError, FileNotFoundError) as error:  # bad options or paths: one line, no traceback
        print(f"cofe: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cofe: interrupted", file=sys.stderr)
        return 130
