"""The run folder's lock: never a planted file's victim; readers share it; read-only folders.

Issue 29, items 10 and 12.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from cofe import InputError
from cofe.cli import main
from cofe.runlog._lock import LOCK, RunFolderBusy, run_folder_lock
from tests.conftest import EXAMPLE_RUN


@pytest.fixture
def run(tmp_path) -> Path:
    return Path(shutil.copytree(EXAMPLE_RUN, tmp_path / "run"))


# item 10 ---------------------------------------------------------------------


def test_a_planted_symlink_lock_is_refused_and_its_target_left_alone(run, tmp_path, capsys):
    victim = tmp_path / "precious.txt"
    victim.write_text("do not truncate me\n")
    (run / LOCK).symlink_to(victim)
    assert main(["score", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err  # one line
    assert f"{run / LOCK}: is a symbolic link, not cofe's lock file" in err
    assert victim.read_text() == "do not truncate me\n"
    for reading in (False, True):  # a reader refuses it too: it is not cofe's
        with (
            pytest.raises(InputError, match="symbolic link"),
            run_folder_lock(run, purpose="cofe score", reading=reading),
        ):
            pass
    assert victim.read_text() == "do not truncate me\n"


def test_a_dangling_symlink_lock_creates_nothing(run, tmp_path):
    target = tmp_path / "created-by-the-lock"
    (run / LOCK).symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"), run_folder_lock(run, purpose="cofe run"):
        pass
    assert not target.exists()


@pytest.mark.parametrize("kind", ["fifo", "directory", "hard link"])
def test_a_lock_that_is_no_plain_file_is_refused(run, tmp_path, kind):
    path = run / LOCK
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        other = tmp_path / "other.txt"
        other.write_text("mine\n")
        os.link(other, path)
    what = "has another name" if kind == "hard link" else "is not a regular file"
    with pytest.raises(InputError, match=what), run_folder_lock(run, purpose="cofe run"):
        pass
    if kind == "hard link":
        assert (tmp_path / "other.txt").read_text() == "mine\n"


# item 12 ---------------------------------------------------------------------


def test_readers_share_the_lock_and_a_writer_waits_for_them(run):
    with run_folder_lock(run, purpose="cofe run"):  # a writer has worked here: the file exists
        pass
    with (
        run_folder_lock(run, purpose="cofe score", reading=True),
        run_folder_lock(run, purpose="cofe score", reading=True),  # a second reader: fine
        pytest.raises(RunFolderBusy, match="another process is reading this run folder"),
        run_folder_lock(run, purpose="cofe run"),
    ):
        pass
    with (
        run_folder_lock(run, purpose="cofe run"),
        pytest.raises(RunFolderBusy, match=rf"process {os.getpid()} is writing"),
        run_folder_lock(run, purpose="cofe score", reading=True),
    ):
        pass


def test_two_scorings_written_elsewhere_do_not_refuse_each_other(run, tmp_path):
    with run_folder_lock(run, purpose="cofe run"):
        pass
    # one scoring elsewhere is under way (holding the lock as a reader) ...
    with run_folder_lock(run, purpose="cofe score", reading=True):
        # ... and a second one, elsewhere too, goes on beside it
        assert main(["score", str(run), "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "b" / "summary.json").exists()


def _read_only(monkeypatch, folder: Path) -> None:
    """``folder`` as on a read-only mount: creating anything in it fails with EROFS (tests run
    as root in CI, where permission bits stop nothing)."""
    inside = str(folder.resolve())
    real_open, real_mkdir = os.open, os.mkdir
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT

    def refused(path) -> bool:
        return os.path.abspath(os.fspath(path)).startswith(inside)

    def fake_open(path, flags, *args, **kwargs):
        if flags & writes and refused(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    def fake_mkdir(path, *args, **kwargs):
        if refused(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)


def test_scoring_a_read_only_run_folder_says_to_write_elsewhere(run, tmp_path, monkeypatch, capsys):
    _read_only(monkeypatch, run)
    assert main(["score", str(run)]) == 2
    err = capsys.readouterr().err
    assert "cannot write here" in err and "pass --out DIR" in err and err.count("\n") == 1
    assert main(["score", str(run), "--out", str(tmp_path / "scores")]) == 0


def test_a_report_of_a_read_only_run_folder_is_written(run, tmp_path, monkeypatch, capsys):
    _read_only(monkeypatch, run)
    out = tmp_path / "report.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "cannot be written" in err and f"cofe score {run} --out DIR" in err
    assert "Traceback" not in err and out.exists()
    assert not (run / "scores").exists()
    # the scoring kept elsewhere, then given instead of the run
    assert main(["score", str(run), "--out", str(tmp_path / "kept")]) == 0
    assert main(["report", str(tmp_path / "kept"), "-o", str(tmp_path / "again.html")]) == 0
    assert "squad" in (tmp_path / "again.html").read_text(encoding="utf-8")
