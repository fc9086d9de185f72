"""Stores that cannot be written here (issue 45, t12 and t22): a store on a read-only mount,
or a stopped collector's store in a folder of another user's, was "not a cofe monitoring
store (unable to open database file)" to `cofe monitor status` and the dashboard. Readers
now open it read-only in SQLite itself.

Root can write any file whatever its mode, so a read-only store is made here with the
immutable attribute (chattr +i), which binds root too; where chattr is not permitted (no
CAP_LINUX_IMMUTABLE, a file system without it) these tests are skipped, not faked."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cofe.cli import main
from cofe.monitor import MonitorStore, refresh_windows
from cofe.monitor.web._dashboard_kit import open_read_only
from tests.monitor.conftest import rag_trace


def _chattr(flag: str, *paths: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    done = subprocess.run(["chattr", flag, *map(str, paths)], capture_output=True)
    return done.returncode == 0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "mount"
    folder.mkdir()
    location = folder / "monitor.db"
    with MonitorStore(location, window_seconds=60) as opened:
        opened.traces.ingest(rag_trace(trace=f"{1:032x}", query="When?"))
        refresh_windows(opened)
    assert sorted(p.name for p in folder.iterdir()) == ["monitor.db"]  # closed: no log left
    yield location
    _chattr("-i", location, folder)


def _immutable(*paths: Path) -> None:
    if not _chattr("+i", *paths):
        pytest.skip("chattr +i is not permitted here: a read-only store cannot be made as root")
    with pytest.raises(PermissionError):  # really read-only, for this user too
        paths[0].open("ab").close()


def _killed_writer(store: Path) -> None:
    """The store as a collector killed with -9 leaves it: its write-ahead log and the log's
    shared memory beside it, the log not yet folded in."""
    with MonitorStore(store) as writer:
        writer.traces.ingest(rag_trace(trace=f"{2:032x}", query="Later?"))
        for suffix in ("", "-wal", "-shm"):  # copied while open: what a kill leaves
            shutil.copy(f"{store}{suffix}", f"{store}.copy{suffix}")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}.copy{suffix}").replace(f"{store}{suffix}")


@pytest.mark.parametrize(
    "what",
    [
        "the file and its folder (a read-only mount)",
        "the file",
        "a killed collector's files and their folder",
    ],
)
def test_status_and_the_dashboard_read_a_store_they_cannot_write(store: Path, capsys, what):
    if "killed" in what:
        _killed_writer(store)
        paths = (store, Path(f"{store}-wal"), Path(f"{store}-shm"), store.parent)
    else:
        paths = (store, store.parent) if "folder" in what else (store,)
    _immutable(*paths)
    assert main(["monitor", "status", "--store", str(store)]) == 0
    status = json.loads(capsys.readouterr().out)
    traces = 2 if "killed" in what else 1  # the log's trace is read too
    assert status["traces"] == traces
    reader = open_read_only(str(store))
    try:
        assert reader.counts()["traces"] == traces
        assert reader.traces.get(f"{1:032x}") is not None
    finally:
        reader.close()
