"""Argument types shared by the commands: a path that must exist is checked by argparse, so
the error names the flag (``argument --evalset: no such file: e.jsonl``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path


def existing_path(text: str) -> Path:
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file or folder: {text}")
    return path


def option_strings(parser: argparse.ArgumentParser) -> Iterable[str]:
    """Every long option of the parser and of its sub-commands, at any depth."""
    for action in parser._actions:
        yield from (o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from option_strings(sub)


def suggestion(unknown: str, known: Iterable[str]) -> str | None:
    """The known option closest to ``unknown`` (``--topk`` -> ``--top-k``), or None."""
    bare = {o.replace("-", ""): o for o in known}
    flat = unknown.split("=", 1)[0].replace("-", "")
    if flat in bare:
        return bare[flat]
    import difflib  # only for a misspelt option: not at every start

    close = difflib.get_close_matches(flat, list(bare), n=1, cutoff=0.8)
    return bare[close[0]] if close else None
