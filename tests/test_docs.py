"""The documentation site (mkdocs.yml, docs/) builds with --strict, and its CLI reference is
cofe's own parsers.

Strict mode fails the build on any warning; mkdocs.yml turns broken links, missing anchors,
absolute links and pages left out of the nav into warnings. mkdocs is in the test extra and
runs as a module of this interpreter: a missing one fails here instead of skipping.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cofe.cli import build_parser, reference_markdown
from cofe.cli._reference import commands
from tests.conftest import REPO


def _build(site: Path, config: Path = REPO / "mkdocs.yml") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = _build(out)
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stdout + done.stderr
    return out


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [
        option
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        for option in action.option_strings
    ]


def test_the_site_builds_strict_and_loads_nothing_from_the_network(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert len(pages) > 15
    for page in pages:
        html = page.read_text(encoding="utf-8")
        # a stylesheet, script or image from elsewhere would need a network to read the site
        remote = re.findall(r"<(?:script|link|img)\b[^>]*(?:src|href)=\"(?:https?:)?//", html)
        assert not remote, f"{page.relative_to(site)} loads {remote}"


def test_the_cli_reference_is_written_from_the_parsers_at_build_time(site: Path) -> None:
    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for parser, _ in commands(build_parser()):
        anchor = parser.prog.replace(" ", "-")
        assert f'<h2 id="{anchor}"' in html, parser.prog
    assert "--coarse-scope" in html and "--fail-on-error" in html


def test_the_reference_lists_every_command_and_every_option_under_it() -> None:
    page = reference_markdown(build_parser())
    sections = {section.split("\n", 1)[0]: section for section in re.split(r"\n## ", page)[1:]}
    parsers = list(commands(build_parser()))
    assert len(parsers) > 20 and len(sections) == len(parsers)
    for parser, help_line in parsers:
        section = sections[parser.prog]
        for option in _options(parser):
            assert f"`{option}" in section or f", {option}" in section, (parser.prog, option)
        # each with the help line its parent lists it under (``cofe monitor collect`` too)
        for word in re.findall(r"[a-z]{4,}", help_line or ""):
            assert word in section, (parser.prog, word)
    assert "cofe monitor collect" in sections


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[gone](missing.md), [here](#nowhere)\n")
    config = tmp_path / "mkdocs.yml"
    ours = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    # the same settings, without the hooks (they write pages of the real site) and its nav
    settings = re.sub(r"\nhooks:\n(  - .*\n)+", "\n", ours.split("\nnav:", 1)[0])
    assert "validation:" in settings and "hooks:" not in settings
    config.write_text(settings + "\nnav:\n  - Home: index.md\n")
    done = _build(tmp_path / "site", config)
    assert done.returncode != 0
    assert "missing.md" in done.stderr and "#nowhere" in done.stderr
