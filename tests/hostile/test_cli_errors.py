"""Issue 10, item 15: every CLI error is one line (exit 2 for usage, 1 for failures), never a
traceback, and nothing the user had is replaced by accident."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "squad-bm25"


def _cofe(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cofe", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _one_line(done: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("cofe: error: ") and done.stderr.count("\n") == 1, done.stderr
    for word in words:
        assert word in done.stderr


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "run"))


def test_a_file_where_a_folder_is_expected_and_the_reverse(tmp_path, run_dir) -> None:
    _one_line(_cofe("score", str(run_dir / "evalset.jsonl"), cwd=tmp_path), 2, "not a run folder")
    _one_line(_cofe("report", str(run_dir), "-o", str(tmp_path), cwd=tmp_path), 2, "is a folder")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # nothing left behind
    _one_line(
        _cofe("import", "jsonl", str(tmp_path), "-o", str(tmp_path / "e.jsonl"), cwd=tmp_path),
        2,
        str(tmp_path),
    )


def test_an_existing_output_file_is_not_replaced_without_force(tmp_path, run_dir) -> None:
    mine = tmp_path / "mine.jsonl"
    mine.write_text("my labels\n")
    done = _cofe("import", "jsonl", str(run_dir / "evalset.jsonl"), "-o", str(mine), cwd=tmp_path)
    _one_line(done, 2, "mine.jsonl: exists; pass --force")
    assert mine.read_text() == "my labels\n"
    forced = _cofe(
        "import", "jsonl", str(run_dir / "evalset.jsonl"), "-o", str(mine), "--force", cwd=tmp_path
    )
    assert forced.returncode == 0 and mine.read_text() != "my labels\n"


def test_a_full_disk_is_a_one_line_failure(tmp_path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    _one_line(_cofe("schema", "-o", "/dev/full", cwd=tmp_path), 1, "No space left on device")
    assert Path("/dev/full").is_char_device()  # written in place, never renamed over


def test_output_piped_to_a_reader_that_stops_is_not_a_traceback(tmp_path, run_dir) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "cofe", "score", str(run_dir), "--json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    process.stdout.close()  # as `| head` does once it has what it wants
    err = process.stderr.read()
    process.wait(timeout=120)
    assert process.returncode == 141, err
    # stderr is no terminal here: only cofe's progress line, no traceback (issue 29)
    assert all(line.startswith("indexing ") for line in err.splitlines()), err
