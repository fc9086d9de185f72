"""The simulated fortnight, shortened to a week: the built-in pipeline over the shipped
corpus answers daily canaries and a replay of traffic in compressed time; the reranker,
the chunk size and the generator break on days 4, 5 and 6. The default alert rules must
name each stage on the day it breaks, and stay quiet on the clean days before."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.monitor_fortnight import (
    EVENTS,
    Event,
    detection,
    false_alarms,
    replay,
    simulate,
)
from cofe.monitor import MonitorStore

pytestmark = pytest.mark.slow
WEEK = tuple(Event(day, e.what, e.stage) for day, e in zip((4, 5, 6), EVENTS, strict=True))


def test_each_break_is_alerted_for_its_stage_with_no_false_alarm(tmp_path: Path):
    sim = simulate(tmp_path, days=7, canaries=200, traffic=40, seed=0, events=WEEK)
    assert (sim.windows, sim.rounds) == (28, 7)
    assert false_alarms(sim, WEEK) == []
    rows = {r["stage"]: r for r in detection(sim, WEEK)}
    assert {stage: (r["detected"], r["delay_windows"]) for stage, r in rows.items()} == {
        "reranking": (True, 0),
        "chunking": (True, 0),
        "generation": (True, 0),
    }
    assert all(r["other_alerts"] == [] for r in rows.values())  # no alert names a wrong stage
    with MonitorStore(tmp_path / "monitor.db") as store:
        reranking = store.db.execute(
            "SELECT message, examples FROM alerts WHERE stage = 'reranking' AND origin = 'canary'"
        )
    assert "CI" in reranking[0][0] and "cut_by_rerank" in reranking[0][1]
    # the rules evaluated again over the kept store, each window once, fire the same alerts
    seen = [(a["window"], a["rule"], a["message"]) for a in sim.alerts]
    assert [(a["window"], a["rule"], a["message"]) for a in replay(tmp_path, days=7).alerts] == seen
