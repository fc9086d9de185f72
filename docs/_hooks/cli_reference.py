"""MkDocs hook: the CLI reference page (reference/cli.md), written from cofe's argparse
parsers at every build rather than kept in the repository, so it cannot drift from them."""

from __future__ import annotations

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from cofe.cli import build_parser, reference_markdown

PAGE = "reference/cli.md"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, PAGE, content=reference_markdown(build_parser())))
    return files
