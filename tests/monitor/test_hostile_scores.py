"""Scores that are not finite numbers (issue 45, items 2 and 7, old probe t02): a document
score given as the string "inf", "nan", "-inf" or "1e999" was stored as inf/NaN, made the
window's TopScore non-finite (or "–", so no alert on it could fire) and every overview
answer 500 from then on. Such a score is dropped like doubleValue NaN; a value already
stored that is not finite is no value on the page."""

from __future__ import annotations

import http.client
import json
import math
from dataclasses import replace

import pytest

from cofe.monitor import Dashboard, MonitorStore, refresh_windows
from tests.monitor.conftest import rag_trace
from tests.monitor.test_collector import otlp_json, post, protobuf, recent, running

NON_FINITE = ("inf", "nan", "-inf", "1e999", " Infinity ", "-NaN")
SCORE = "retrieval.documents.0.document.score"


def _scored(trace: int, score: object) -> list:
    spans = recent(rag_trace(trace=f"{trace:032x}"))
    return [
        replace(s, attributes={**s.attributes, SCORE: score}) if SCORE in s.attributes else s
        for s in spans
    ]


def _get(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _pages_answer(location: str) -> list[int]:
    dashboard = Dashboard(location, port=0)
    dashboard.start()
    try:
        return [_get(dashboard.port, p) for p in ("/", "/?range=all", "/?range=7d", "/?range=24h")]
    finally:
        dashboard.shutdown()


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_a_score_string_that_is_not_finite_is_dropped_and_the_window_keeps_its_top_score(
    store_location: str, encoding: str
):
    with MonitorStore(store_location, window_seconds=60) as store, running(store) as collector:
        spans = [s for i, text in enumerate(NON_FINITE) for s in _scored(i + 1, text)]
        spans += _scored(99, "0.5")  # a string that is a number stays a score
        body = otlp_json(spans) if encoding == "json" else protobuf(spans)
        kind = "application/json" if encoding == "json" else "application/x-protobuf"
        assert post(collector.url, body, kind)[0] == 200
        for i, text in enumerate(NON_FINITE):
            trace = store.traces.get(f"{i + 1:032x}")
            assert trace is not None and trace.pool is not None
            assert trace.pool[0].score is None, text
            assert any("repaired" in p for p in trace.problems), text
        assert store.traces.get(f"{99:032x}").pool[0].score == 0.5  # type: ignore[union-attr]
        refresh_windows(store)
        top = [r for r in store.windows.series() if r["signal"] in ("TopScore", "TopScoreP90")]
        assert top and all(r["value"] is not None and math.isfinite(r["value"]) for r in top)
    assert _pages_answer(store_location) == [200] * 4


def test_values_stored_before_are_no_value_and_never_a_500(store_location: str):
    """A store written by an older cofe holds inf/NaN in traces and series: pages answer."""
    with MonitorStore(store_location, window_seconds=60) as store:
        store.traces.ingest(_scored(1, 0.9))
        refresh_windows(store)
        inf = "'Infinity'::float8" if store.engine == "postgresql" else "9e999"
        store.db.execute(f"UPDATE series SET value = {inf} WHERE signal = 'TopScore'")
        pool = json.dumps([["c", math.inf, None, 3], ["d", math.nan, None, 3]])
        store.db.execute("UPDATE traces SET pool = ?", [pool])
        rows = [r for r in store.windows.series() if r["signal"] == "TopScore"]
        assert rows and rows[0]["value"] is None and "finite" in rows[0]["note"]
        trace = store.traces.get(f"{1:032x}")
        assert trace is not None and [d.score for d in trace.pool or ()] == [None, None]
    assert _pages_answer(store_location) == [200] * 4  # the stored inf still in the series
