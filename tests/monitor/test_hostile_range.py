"""A trace stamped by a clock that was never set (1970) or far ahead (issue 45, item 19):
it was answered 200 and pruned, but its window stayed in the series and stretched the
dashboard's ``range=all`` back to 1970 for good."""

from __future__ import annotations

import http.client
from pathlib import Path

import pytest

from cofe.monitor import Dashboard, MonitorStore, refresh_windows
from tests.monitor.conftest import T0, rag_trace

EPOCH_PLUS_1S = 10**9  # 1970-01-01T00:00:01Z
YEAR_2089 = 3_786_000_000 * 10**9


def _page(location: Path, path: str) -> str:
    dashboard = Dashboard(str(location), port=0)
    dashboard.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", dashboard.port, timeout=30)
        conn.request("GET", path)
        response = conn.getresponse()
        page = response.read().decode()
        conn.close()
    finally:
        dashboard.shutdown()
    assert response.status == 200, page[:500]
    return page


def _store(location: Path, *outliers: int) -> None:
    with MonitorStore(location, window_seconds=60) as store:
        for i in range(30):
            store.traces.ingest(rag_trace(trace=f"{i + 1:032x}", query=f"q{i}?", start=i * 30.0))
        for n, at in enumerate(outliers):
            store.traces.ingest(
                rag_trace(trace=f"{900 + n:032x}", query=f"odd clock {n}?", start=(at - T0) / 1e9)
            )
        refresh_windows(store)
        store.prune(now_ns=T0 + 3600 * 10**9)  # the 1970 trace is long past any retention
        assert store.counts()["traces"] == 30 + sum(at > T0 for at in outliers)


@pytest.mark.parametrize(
    ("outliers", "left_out"),
    [((EPOCH_PLUS_1S,), "1970-01-01"), ((YEAR_2089,), "2089"), ((EPOCH_PLUS_1S, YEAR_2089), "")],
)
def test_range_all_spans_the_data_not_a_clock_never_set(
    tmp_path: Path, outliers: tuple[int, ...], left_out: str
):
    location = tmp_path / "monitor.db"
    _store(location, *outliers)
    page = _page(location, "/?range=all")
    title = page.split("<title>")[1].split("</title>")[0]
    assert "2026-09-21" in title and "1970" not in title and "2089" not in title, title
    # the windows left out are said, with when they were stamped
    assert "left out of this range" in page
    for when in ("1970-01-01", "2089") if not left_out else (left_out,):
        assert when in page.split("left out of this range")[1].split("</tr>")[0]


def test_a_history_with_a_pause_is_all_shown(tmp_path: Path):
    """Data a month back and data now are one history: range=all starts at the first."""
    location = tmp_path / "monitor.db"
    month_back = T0 - 30 * 86400 * 10**9
    _store(location, month_back)
    page = _page(location, "/?range=all")
    title = page.split("<title>")[1].split("</title>")[0]
    assert "2026-08-22" in title, title
    assert "left out of this range" not in page
