"""Progress bars as plain lines where stderr is not a terminal (cofe._progress)."""

from __future__ import annotations

import io
import subprocess
import sys

from tqdm import tqdm

from cofe import _progress
from cofe._progress import PlainProgress, progress_lines, progress_wanted
from tests.conftest import REPO


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_bar_becomes_a_line_every_few_seconds_and_messages_pass(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(_progress.time, "monotonic", clock)
    log = io.StringIO()
    plain = PlainProgress(log, every=10)
    bar = tqdm(total=100, desc="scoring", file=plain, mininterval=0, miniters=1)
    for step in range(100):
        clock.now = step * 0.5  # 50 seconds in all
        bar.update()
        if step == 3:
            bar.write("a message", file=plain)
    bar.close()
    lines = log.getvalue().splitlines()
    assert lines[0] == "a message"
    assert [line.split("[")[0].split()[-1] for line in lines[1:]] == [
        "21/100",
        "41/100",
        "61/100",
        "81/100",
        "100/100",
    ]
    assert "\r" not in log.getvalue() and "|" not in log.getvalue()  # no bar drawing


def test_a_bar_done_before_the_first_line_prints_nothing(monkeypatch):
    log = io.StringIO()
    plain = PlainProgress(log, every=10)
    for _ in tqdm(range(5), desc="quick", file=plain):
        pass
    print("done", file=plain)
    assert log.getvalue() == "done\n"


def test_lines_only_where_no_terminal_is_watching(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a log file, a CI pipe
    with progress_lines() as shown:
        assert shown and progress_wanted() and isinstance(sys.stderr, PlainProgress)
        with progress_lines() as again:  # cofe run, then its scoring: the same stand-in
            assert again and isinstance(sys.stderr, PlainProgress)
    assert isinstance(sys.stderr, io.StringIO) and not progress_wanted()
    monkeypatch.setenv("COFE_PROGRESS_SECONDS", "0")
    with progress_lines() as shown:
        assert not shown and isinstance(sys.stderr, io.StringIO)


def test_a_late_bar_loads_tqdm_only_once_its_first_line_is_due(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(_progress.time, "monotonic", clock)
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", PlainProgress(log, every=10))
    bar = _progress.progress_bar(total=100, desc="scoring", mininterval=0, miniters=1)
    for step in range(15):  # 7 seconds: no line due yet, so no tqdm bar either
        clock.now = step * 0.5
        bar.update()
    assert bar._bar is None and log.getvalue() == ""  # type: ignore[attr-defined]
    for step in range(15, 100):
        clock.now = step * 0.5
        bar.update()
    bar.close()
    lines = log.getvalue().splitlines()
    # the first line when the bar has run 10 s, as a bar drawn from the start prints it
    assert [line.split("[")[0].split()[-1] for line in lines] == [
        "21/100",
        "41/100",
        "61/100",
        "81/100",
        "100/100",
    ]


def test_a_short_bar_in_plain_lines_or_a_disabled_one_never_imports_tqdm():
    code = (
        "import io, sys\n"
        "from cofe._progress import PlainProgress, progress_bar\n"
        "sys.stderr = PlainProgress(io.StringIO(), every=10)\n"
        "for disable in (False, True):\n"
        "    with progress_bar(total=3, desc='quick', disable=disable) as bar:\n"
        "        bar.update(3)\n"
        "print('tqdm' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False", done.stderr
