"""One replay pass per replay folder: a second is refused in one line naming the holder, and
a pass killed part-way is resumed by the next (the run folder's flock, as ``cofe run`` holds)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cofe.replay import REPLAY_FILE, replay_run
from cofe.runlog import run_folder_lock
from cofe.runlog._lock import RunFolderBusy
from tests.conftest import REPO

SPEC = "tests.replay._tiny:build"


def test_a_second_pass_on_a_held_replay_folder_is_refused_naming_the_holder(
    scored: Path,
) -> None:
    with (
        run_folder_lock(scored / "replay", purpose="cofe replay"),
        pytest.raises(RunFolderBusy, match=rf"process {os.getpid()} is writing"),
    ):
        replay_run(scored, pipeline=SPEC)
    assert not (scored / "replay" / REPLAY_FILE).exists()  # refused before anything ran
    replay_run(scored, pipeline=SPEC)  # released: the folder is free again


def test_a_run_being_written_is_not_replayed(scored: Path) -> None:
    with (
        run_folder_lock(scored, purpose="cofe run"),
        pytest.raises(RunFolderBusy, match="is writing to this run folder"),
    ):
        replay_run(scored, pipeline=SPEC)


def _cofe_replay(run: Path, *extra: str, hold: bool = False) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "cofe", "replay", str(run), "--pipeline", SPEC, *extra]
    return subprocess.Popen(
        command,
        cwd=REPO,
        # hold: answer 3 replays, then hang in the 4th until killed
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            **({"COFE_TEST_HOLD_AFTER": "3"} if hold else {}),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _lines(run: Path) -> list[dict[str, object]]:
    path = run / "replay" / REPLAY_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_two_replays_on_one_run_one_refuses_and_a_killed_holder_is_resumed(
    scored: Path,
) -> None:
    holder = _cofe_replay(scored, "--cache", "none", hold=True)
    deadline = time.monotonic() + 60
    while len(_lines(scored)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _lines(scored), "the holder replayed nothing in a minute"
    second = _cofe_replay(scored, "--cache", "none")
    _, err = second.communicate(timeout=60)
    assert second.returncode == 2
    assert f"process {holder.pid} is writing to this run folder" in err
    assert err.count("\n") == 1  # one line, no traceback
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    kept = _lines(scored)
    # 4 failed samples: context, pool and no-noise each (chunking: not for callables)
    assert len(kept) == 3
    third = _cofe_replay(scored, "--cache", "none", "--json", "-")
    out, err = third.communicate(timeout=120)
    assert third.returncode == 0, err
    data = json.loads(out)
    # what the killed pass finished is taken from replay.jsonl, not asked again
    assert data["cost"]["from_cache"] == len(kept)
    assert data["cost"]["made"] == 12 - len(kept)
    assert len(data["replays"]) == 12
