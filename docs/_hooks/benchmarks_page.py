"""MkDocs hook: the Benchmarks page is benchmarks/README.md itself, read at every build, so
the site shows the latest measured tables and never a copy that fell behind them."""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

PAGE = "benchmarks.md"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    source = Path(config.config_file_path).parent / "benchmarks" / "README.md"
    files.append(File.generated(config, PAGE, content=source.read_text(encoding="utf-8")))
    return files
