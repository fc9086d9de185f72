"""Parsing shows how far it is (issue 44, friction 1): documents and pages, an ETA, the file
being parsed; on a terminal a bar, off one a line every few seconds -- cofe run --docs and
cofe sweep alike."""

from __future__ import annotations

import time

import pytest

from cofe._progress import PlainProgress
from cofe.cli import main
from cofe.pipeline import _parse, parse_documents


@pytest.fixture
def slow_parse(monkeypatch):
    """Each file takes 0.4 s to parse; the bar is redrawn every 0.05 s."""
    real = _parse.parse_file

    def slow(path, doc_id):
        time.sleep(0.4)
        return real(path, doc_id)

    monkeypatch.setattr(_parse, "parse_file", slow)
    monkeypatch.setattr(_parse, "HEARTBEAT_SECONDS", 0.05)


def test_a_long_parse_prints_documents_pages_eta_and_the_file_off_a_terminal(
    small_docs, slow_parse, capsys, monkeypatch
):
    import sys

    plain = PlainProgress(sys.stderr, every=0.2)
    monkeypatch.setattr(sys, "stderr", plain)
    parsed = parse_documents(small_docs, progress=True)
    monkeypatch.undo()
    assert len(parsed.documents) == 3
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3, lines  # one every 0.2 s over 1.2 s, none a redraw
    assert not any("\r" in line for line in lines)
    during = [line for line in lines if "now " in line]
    assert during and all(line.startswith("parsing 3 document(s):") for line in during)
    assert any("page" in line and "documents; now " in line for line in during)
    assert any("<" in line and "?" not in line.split("<", 1)[1][:6] for line in during)  # ETA
    assert lines[-1].split("[")[0].split() == ["parsing", "3", "document(s):", "100%", "3/3"]


def test_cofe_run_shows_the_parse_off_a_terminal(
    tmp_path, small_docs, small_evalset, slow_parse, capsys, monkeypatch
):
    monkeypatch.setenv("COFE_PROGRESS_SECONDS", "0.2")
    args = ["run", "--docs", str(small_docs), "--evalset", str(small_evalset)]
    assert main([*args, "--out", str(tmp_path / "run"), "--cache", "none"]) == 0
    err = capsys.readouterr().err
    assert "parsing 3 document(s):" in err and "documents; now " in err, err
