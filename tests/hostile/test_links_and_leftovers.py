"""Run folders from someone else, and what a killed scorer leaves (issue 45, items 9, 15):
a `judgements.jsonl` or `judge_controls.jsonl` linking to a user's file had its last line
cut and JSON appended; a `scores/` linking to a user's folder got 9 files and its
`summary.json` replaced; `.NAME.PID.tmp` files of killed scorers were never removed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cofe._errors import InputError
from cofe._jsonl import append_jsonl
from cofe.cli import main
from cofe.evalset import EvalSample
from tests.conftest import EXAMPLE_RUN


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE_RUN, run, ignore=shutil.ignore_patterns("scores*"))
    return run


@pytest.mark.parametrize("name", ["judgements.jsonl", "judge_controls.jsonl", "samples.jsonl"])
def test_a_run_file_linking_to_a_user_s_file_is_refused_and_the_file_untouched(tmp_path, name):
    user = tmp_path / "diary.txt"
    user.write_text("line one\nline two without its end", encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    (run / name).symlink_to(user)
    record = EvalSample(id="s", query="q?", coarse_keywords=["k"])
    with pytest.raises(InputError, match="symbolic link"):
        append_jsonl(run / name, [record])
    assert user.read_text(encoding="utf-8") == "line one\nline two without its end"


def test_a_run_file_that_is_a_fifo_is_refused_not_blocked_on(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "judgements.jsonl")
    record = EvalSample(id="s", query="q?", coarse_keywords=["k"])
    with pytest.raises(InputError, match="not a regular file"):
        append_jsonl(run / "judgements.jsonl", [record])


def test_a_scores_folder_linking_to_a_user_s_folder_is_refused(run_dir, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.json").write_text("my own", encoding="utf-8")
    (run_dir / "scores").symlink_to(mine)
    assert main(["score", str(run_dir), "--json"]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["summary.json"]
    assert (mine / "summary.json").read_text(encoding="utf-8") == "my own"


def test_a_summary_linking_to_a_user_s_file_is_refused(run_dir, tmp_path, capsys):
    (run_dir / "scores").mkdir()
    user = tmp_path / "notes.json"
    user.write_text("mine", encoding="utf-8")
    (run_dir / "scores" / "summary.json").symlink_to(user)
    assert main(["score", str(run_dir), "--json", "--force"]) == 2
    assert user.read_text(encoding="utf-8") == "mine"


def test_temporaries_of_killed_scorers_are_removed_by_the_next(run_dir):
    """kill -9 during cofe score, three times, left 24 .NAME.PID.tmp files for good."""
    scores = run_dir / "scores"
    scores.mkdir()
    dead = []
    for _ in range(3):  # three processes that are gone
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        child.wait()
        dead.append(child.pid)
    for pid in dead:
        for name in ("scores.csv", "points.csv", "summary.json", "verdicts.jsonl"):
            (scores / f".{name}.{pid}.tmp").write_text("half", encoding="utf-8")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        alive = scores / f".scores.csv.{sleeper.pid}.tmp"  # a scorer still writing: kept
        alive.write_text("busy", encoding="utf-8")
        assert main(["score", str(run_dir), "--json", "--force"]) == 0
        left = sorted(p.name for p in scores.iterdir() if p.name.endswith(".tmp"))
        assert left == [alive.name]
    finally:
        sleeper.send_signal(signal.SIGKILL)
        sleeper.wait()
