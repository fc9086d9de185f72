"""The CLI reference page, written from the argparse parsers themselves.

The documentation site builds this page each time it is built (``docs/_hooks/cli_reference.py``),
so the reference lists exactly the commands and options ``cofe COMMAND --help`` does and
cannot drift from them. Each command gets a heading (``cofe monitor collect``: its anchor is
``cofe-monitor-collect``), the help line it has in its parent's list, its description as
written, its usage line and one table row per argument.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Iterator

# the usage lines' width: fixed, so the page does not depend on the terminal it is built in
WIDTH = 88
# characters Markdown would read as markup in a table cell
_MARKUP = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|"})

INTRO = """\
# CLI reference

Every command and option of `cofe`, written from its own argument parsers each time this
site is built, so it says exactly what `cofe COMMAND --help` prints. The guides explain
what the commands do and why; this page is the list.
"""


def commands(
    parser: argparse.ArgumentParser, help_line: str | None = None
) -> Iterator[tuple[argparse.ArgumentParser, str | None]]:
    """The parser and every sub-command's parser below it, depth first, each with the help
    line its parent lists it under."""
    yield parser, help_line
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            seen: set[int] = set()
            for name, child in action.choices.items():
                if id(child) not in seen:  # an alias names a parser already listed
                    seen.add(id(child))
                    yield from commands(child, helps.get(name))


def _cell(text: str) -> str:
    return " ".join(text.split()).translate(_MARKUP)


def _section(parser: argparse.ArgumentParser, help_line: str | None) -> str:
    formatter = argparse.HelpFormatter(prog=parser.prog, width=WIDTH)
    formatter.add_usage(
        parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="usage: "
    )
    lines = [f"## {parser.prog}", ""]
    if help_line:
        lines += [f"In `{parser.prog.rsplit(' ', 1)[0]}`'s list: {_cell(help_line)}.", ""]
    lines += ["```text", formatter.format_help().rstrip(), "```", ""]
    if parser.description:
        lines += ["```text", inspect.cleandoc(parser.description), "```", ""]
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        invocation = formatter._format_action_invocation(action)
        help_text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| `{invocation}` | {_cell(help_text)} |")
    if rows:
        lines += ["| argument | what it does |", "| --- | --- |", *rows, ""]
    if parser.epilog:
        lines += ["```text", inspect.cleandoc(parser.epilog), "```", ""]
    return "\n".join(lines)


def reference_markdown(parser: argparse.ArgumentParser) -> str:
    """The page: the top-level command, then each sub-command in the order ``--help`` lists
    them."""
    return "\n".join([INTRO, *(_section(p, h) for p, h in commands(parser))])
