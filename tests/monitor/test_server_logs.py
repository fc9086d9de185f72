"""The servers log (``cofe.monitor`` loggers, fields in ``extra``) rather than print; the CLI
shows those records on stderr as the ``cofe monitor VERB: ...`` lines users know."""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

import pytest

from cofe.cli._monitor import _saying
from cofe.monitor import Dashboard, MonitorStore
from cofe.monitor.web import _dashboard as dashboard_module
from tests.monitor.test_collector import post, protobuf, running, traces_batch


def test_the_cli_shows_the_monitors_records_on_stderr_while_a_command_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    logger = logging.getLogger("cofe.monitor")
    handlers = list(logger.handlers)
    with _saying("collect"):
        logging.getLogger("cofe.monitor.collector").info("3 spans in 1 batches")
        logging.getLogger("cofe.monitor.collector").debug("not shown")
    logging.getLogger("cofe.monitor.collector").warning("after the command")
    err = capsys.readouterr().err
    assert "cofe monitor collect: 3 spans in 1 batches\n" in err
    assert "not shown" not in err
    assert "cofe monitor collect: after the command" not in err
    assert logger.handlers == handlers  # main() run again in this process adds no second one


def test_the_collector_logs_its_counters_and_failures_as_fields(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO, logger="cofe.monitor")
    store = MonitorStore(tmp_path / "m.db")
    with store, running(store, refresh_seconds=0.05, quiet=False) as collector:
        monkeypatch.setattr(
            store.traces,
            "ingest",
            lambda spans: (_ for _ in ()).throw(sqlite3.OperationalError("disk I/O error")),
        )
        assert post(collector.url, protobuf(traces_batch(0, 1)))[0] == 503
        monkeypatch.undo()
        assert post(collector.url, protobuf(traces_batch(0, 1)))[0] == 200
        ends = time.monotonic() + 10
        while time.monotonic() < ends and not any(
            getattr(r, "batches", 0) == 1 for r in caplog.records
        ):
            time.sleep(0.05)
    [failed] = [r for r in caplog.records if getattr(r, "event", None) == "store_failed"]
    assert failed.levelno == logging.ERROR and failed.name == "cofe.monitor.collector"
    assert "disk I/O error" in failed.error and "answered 503" in failed.getMessage()
    stats = [r for r in caplog.records if getattr(r, "event", None) == "stats"]
    assert stats and stats[-1].batches == 1 and stats[-1].spans == 6 and stats[-1].failed == 1
    assert "6 spans in 1 batches" in stats[-1].getMessage()


def test_a_page_that_fails_is_logged_with_its_traceback_not_shown_to_the_browser(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import http.client

    location = tmp_path / "m.db"
    MonitorStore(location).close()

    def broken(pages: object, params: object) -> str:
        raise RuntimeError("a bug in a page")

    monkeypatch.setitem(dashboard_module.PAGES, "/", broken)
    dashboard = Dashboard(str(location), port=0)
    dashboard.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", dashboard.port, timeout=10)
        conn.request("GET", "/")
        response = conn.getresponse()
        status, body = response.status, response.read()
        conn.close()
    finally:
        dashboard.shutdown()
    assert status == 500 and b"a bug" not in body
    [record] = [r for r in caplog.records if getattr(r, "event", None) == "page_failed"]
    assert record.name == "cofe.monitor.dashboard" and record.path == "/"
    assert record.exc_info and "a bug in a page" in caplog.text
