"""Sinks: a new one is one class registered in one place, and the alert loop (the
library's, which ``cofe monitor alerts`` runs) delivers to it with no change elsewhere."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar, Self

import pytest

from cofe.cli import main
from cofe.monitor import DEFAULT_RULES, SINKS, Alert, AlertLoop, MonitorStore, register_sink
from tests.monitor.test_alerts import H, add_round

HEALTHY = {f"s{i}": ("pass", None) for i in range(30)}
LOST = {s: ("not_in_answer", "generation") for s in HEALTHY}


class Memo:
    """A sink written in the test alone: what it was given, and whether it was closed."""

    name: ClassVar[str] = "memo"
    given: ClassVar[list[tuple[str, str]]] = []  # (setting, alert's stage)
    closed: ClassVar[int] = 0

    def __init__(self, setting: str) -> None:
        self.setting = setting

    @classmethod
    def from_setting(cls, setting: str, store: MonitorStore) -> Self:
        return cls(setting)

    def send(self, alert: Alert) -> None:
        Memo.given.append((self.setting, alert.stage))

    def close(self, timeout: float = 0.0) -> None:
        Memo.closed += 1


@pytest.fixture
def memo() -> Iterator[type[Memo]]:
    Memo.given, Memo.closed = [], 0
    register_sink(Memo)
    try:
        yield Memo
    finally:
        del SINKS["memo"]


def _store_with_a_lost_round(db: Path) -> None:
    with MonitorStore(db) as store:
        for n in range(3):
            add_round(store, n, time.time_ns() - (10 - n) * H, HEALTHY)
        add_round(store, 3, time.time_ns() - 2 * H, LOST)


def test_a_registered_sink_is_offered_by_the_cli_with_no_change_to_it(
    tmp_path: Path, memo: type[Memo], capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    _store_with_a_lost_round(db)
    assert main(["monitor", "alerts", "--store", str(db), "--sink", "memo=pager-7"]) == 3
    assert ("pager-7", "generation") in memo.given
    assert memo.closed == 1
    assert "cofe alert [critical] generation" in capsys.readouterr().out  # stdout still on


def test_an_unknown_sink_is_one_line_naming_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["monitor", "alerts", "--store", str(tmp_path / "m.db"), "--sink", "pager=x"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no alert sink named 'pager' (known: log, webhook)" in err
    assert "Traceback" not in err
    code = main(["monitor", "alerts", "--store", str(tmp_path / "m.db"), "--sink", "log"])
    assert code == 2 and "--sink takes NAME=SETTING" in capsys.readouterr().err


def test_two_sinks_may_not_share_a_name(memo: type[Memo]) -> None:
    class Other(Memo):
        pass

    with pytest.raises(ValueError, match="two sinks named 'memo'"):
        register_sink(Other)
    assert SINKS["memo"] is Memo
    register_sink(Memo)  # the same class again is not a second sink


class Full:
    """A sink whose disk is full."""

    def send(self, alert: Alert) -> None:
        raise OSError(28, "No space left on device")

    def close(self, timeout: float = 0.0) -> None:
        pass


def test_one_failing_sink_does_not_silence_the_others_and_the_loop_remembers_its_place(
    tmp_path: Path,
    memo: type[Memo],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    db = tmp_path / "m.db"
    _store_with_a_lost_round(db)
    with MonitorStore(db) as store:
        canary_rules = [r for r in DEFAULT_RULES if r.source == "canary"]
        loop = AlertLoop(store, canary_rules, [Full(), Memo("after")])
        first = loop.round()
        assert first.fired and loop.since_ns == first.through_ns
        assert [stage for _, stage in memo.given] == ["generation"] * len(first.fired)
        [said] = [r for r in caplog.records if getattr(r, "event", None) == "sink_failed"]
        assert said.sink == "Full" and "No space left" in said.getMessage()
        assert loop.run() == []  # the same round again: nothing new; the sinks closed
        assert "none fired" in capsys.readouterr().out
    assert memo.closed == 1


def test_the_cli_says_a_sink_that_failed_on_stderr_and_still_alerts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    _store_with_a_lost_round(db)
    folder = tmp_path / "a-folder"  # a log "file" that cannot be opened for appending
    folder.mkdir()
    assert main(["monitor", "alerts", "--store", str(db), "--log", str(folder)]) == 3
    captured = capsys.readouterr()
    assert "cofe alert [critical] generation" in captured.out
    assert "cofe monitor alerts: LogSink could not take an alert (" in captured.err
    assert "it is stored in the alerts table" in captured.err
