"""What a hostile or careless sender does to ingest (issue 25, defects 1, 2, 3 and 6): a
database restart, values no store can keep, times past the store's integers, a parent
chain of 20,000 spans. One span never costs its batch; the store outlives a restart."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cofe.cli import main
from cofe.monitor import Dashboard, MonitorStore, assemble, import_spans, refresh_windows
from cofe.monitor.analysis._alerts import evaluate
from cofe.monitor.ingest._span import SpanFormatError, checked
from tests.monitor.conftest import T0, PostgresServer, rag_trace, span
from tests.monitor.test_collector import otlp_json, post, protobuf, recent, running, traces_batch

SURROGATE = "\ud83d"  # half an emoji: what an SDK writes when it cuts a string mid-character


def poisoned_json(trace: str) -> bytes:
    """One OTLP/JSON request of a whole RAG trace whose every text holds a lone surrogate or
    a NUL, whose first document's score is ``intValue: "1e400"`` and which lists a document
    at a 5,000-digit index."""
    spans = recent(
        rag_trace(
            trace=trace,
            query=f"why {SURROGATE} fails?",
            pool=[f"chunk with NUL\x00 and {SURROGATE}", "second chunk"],
            answer=f"answer\x00 {SURROGATE}",
        )
    )
    body = json.loads(otlp_json(spans))
    out = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
    out[0]["name"] = f"chain {SURROGATE}"
    for retriever in out[1:3]:  # the outer retriever and the inner one, whose list is the pool
        for attribute in retriever["attributes"]:
            if attribute["key"] == "retrieval.documents.0.document.score":
                attribute["value"] = {"intValue": "1e400"}
        retriever["attributes"].append(
            {
                "key": f"retrieval.documents.{'9' * 5000}.document.content",
                "value": {"stringValue": "far away"},
            }
        )
    return json.dumps(body).encode()


def test_one_poisoned_trace_never_costs_its_batch_on_either_engine(store_location: str):
    """Defect 2: surrogates (SQLite refused them), NUL (PostgreSQL refused it), a score of
    1e400 and a 5,000-digit index each failed the whole batch with 503 for ever."""
    good = [*traces_batch(0, 2)]
    body = json.loads(otlp_json(good))
    poison = json.loads(poisoned_json(f"{99:032x}"))
    body["resourceSpans"] += poison["resourceSpans"]
    with MonitorStore(store_location, window_seconds=60) as store, running(store) as collector:
        status, _, reply = post(collector.url, json.dumps(body).encode(), "application/json")
        assert status == 200, reply
        assert store.counts()["traces"] == 3
        bad = store.traces.get(f"{99:032x}")
        assert bad is not None and bad.query == "why \ufffd fails?"
        assert bad.answer == "answer \ufffd"
        assert bad.pool is not None and bad.pool[0].text == "chunk with NUL and \ufffd"
        assert bad.pool[0].score is None  # 1e400 is no score: dropped, not the batch
        assert len(bad.pool) == 2  # the 5,000-digit index is no document of the list
        assert any("repaired" in problem for problem in bad.problems)
        assert store.traces.get(f"{1:032x}").problems == []  # type: ignore[union-attr]


def test_an_absurd_time_is_refused_with_400_naming_the_span(tmp_path: Path):
    """Defect 3: a span stamped near 2**63 ns was stored (200) and then broke every
    refresh, `alerts` and `series` with an OverflowError."""
    spans = traces_batch(0, 1)
    body = json.loads(otlp_json(spans))
    body["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["startTimeUnixNano"] = str(2**63 - 2000)
    body["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["endTimeUnixNano"] = str(2**63 - 1000)
    with MonitorStore(tmp_path / "m.db", window_seconds=60) as store, running(store) as collector:
        status, _, reply = post(collector.url, json.dumps(body).encode(), "application/json")
        assert status == 400
        message = json.loads(reply)["message"]
        assert "span 2 ('RETRIEVER-2')" in message and "2100" in message
        assert store.counts()["spans"] == 0


def test_a_store_already_holding_an_absurd_time_still_refreshes_and_alerts(tmp_path: Path, capsys):
    """A store written before times were checked: its windows, series and alerts work."""
    with MonitorStore(tmp_path / "m.db", window_seconds=60) as store:
        store.traces.ingest(traces_batch(0, 1))
        late = 2**63 - 1000
        store.db.execute("UPDATE traces SET started_ns = ?, ended_ns = ?", [late - 10, late])
        store.windows.mark_dirty([("traffic", store.window_of(late - 10))])
        refresh_windows(store)
        evaluate(store)
    assert main(["monitor", "series", "--store", str(tmp_path / "m.db")]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_import_stores_every_good_line_and_names_each_bad_one(tmp_path: Path):
    """Defect 2: `cofe monitor import` of 101 lines with one poisoned line stored none of
    the 100 good ones and named no line."""
    lines = [
        otlp_json(recent(rag_trace(trace=f"{i + 1:032x}", query=f"q{i}?", start=i)))
        for i in range(99)
    ]
    lines.insert(40, poisoned_json(f"{500:032x}"))  # repaired: stored
    late = json.loads(lines[7])
    late["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["endTimeUnixNano"] = str(2**63 - 1)
    lines.insert(70, json.dumps(late).encode())  # refused: named
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert len(lines) == 101
    with MonitorStore(tmp_path / "m.db") as store:
        report = import_spans(store, path, batch_size=50)
        assert store.counts()["traces"] == 100
        assert [(p.file, p.line) for p in report.problems] == [(str(path), 71)]
        assert "2100" in report.problems[0].message


def test_a_line_the_store_refuses_is_named_and_the_rest_of_its_batch_stored(
    tmp_path: Path, monkeypatch
):
    """Whatever the store refuses that decoding did not foresee: the batch is stored line
    by line, the refused line named (file:line)."""
    lines = [
        otlp_json(recent(rag_trace(trace=f"{i + 1:032x}", query=f"q{i}?", start=i)))
        for i in range(10)
    ]
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with MonitorStore(tmp_path / "m.db") as store:
        ingest = store.traces.ingest

        def refusing(spans, **kw):
            if any(s.trace_id == f"{4:032x}" for s in spans):
                raise ValueError("refused by the store")
            return ingest(spans, **kw)

        monkeypatch.setattr(store.traces, "ingest", refusing)
        report = import_spans(store, path)
        assert store.counts()["traces"] == 9
        assert [(p.line, "refused by the store" in p.message) for p in report.problems] == [
            (4, True)
        ]


def test_a_parent_chain_of_20000_spans_is_assembled_in_linear_time():
    """Defect 6: each span's ancestors were walked anew (57 s for a 120 kB gzip body, the
    store's write lock held all along)."""
    chain = [span("1", "CHAIN", **{"input.value": "q"})]
    for i in range(2, 20_001):
        kind = "RETRIEVER" if i == 10_000 else None
        chain.append(
            span(
                f"{i:x}",
                kind,
                parent=f"{i - 1:x}" if i > 2 else "1",
                start=i * 1e-6,
                status="error" if i > 19_990 else "ok",
            )
        )
    started = time.perf_counter()
    record = assemble(chain[0].trace_id, chain)
    assert time.perf_counter() - started < 3.0
    assert record.stages and record.spans == 20_000


def test_a_cycle_of_parents_is_cut_not_followed():
    a = span("a", "RETRIEVER", parent="b")
    b = span("b", "LLM", parent="a")
    record = assemble(a.trace_id, [span("1", "CHAIN", **{"input.value": "q"}), a, b])
    assert record.spans == 3


# --- a database restart -------------------------------------------------------------------


@pytest.fixture
def own_postgres() -> object:
    """A PostgreSQL server of this test's own, to stop and start again."""
    server = PostgresServer()
    server.start()
    try:
        import psycopg

        with psycopg.connect(f"{server.url}/postgres", autocommit=True) as conn:
            conn.execute("CREATE DATABASE monitor")
        yield server
    finally:
        server.remove()


@pytest.mark.slow
def test_the_collector_and_the_alerts_survive_a_postgresql_restart(own_postgres, tmp_path):
    """Defect 1: after PostgreSQL restarted, the collector answered 503 to every batch
    until it was itself restarted, and `cofe monitor alerts --every` died."""
    server = own_postgres
    url = f"{server.url}/monitor"
    MonitorStore(url, window_seconds=60).close()  # made before the evaluator opens it
    alerts = subprocess.Popen(
        [sys.executable, "-m", "cofe", "monitor", "alerts", "--store", url, "--every", "1s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert alerts.stdout is not None
        assert "cofe alerts:" in alerts.stdout.readline()  # it runs (and is connected)
        with MonitorStore(url, window_seconds=60) as store, running(store) as collector:
            assert post(collector.url, protobuf(traces_batch(0)))[0] == 200
            server.stop()
            server.start()  # a restart between batches: the next batch lands
            assert [post(collector.url, protobuf(traces_batch(3 * i)))[0] for i in range(1, 4)] == [
                200,
                200,
                200,
            ]
            server.stop()  # down while a batch arrives: it waits for the server, then lands
            threading.Timer(1.5, server.start).start()
            assert post(collector.url, protobuf(traces_batch(12)))[0] == 200
            refresh_windows(store)
            assert store.counts()["traces"] == 15
            evaluate(store)
            dashboard = Dashboard(url, port=0)  # a reader across a restart too
            dashboard.start()
            try:
                server.stop()
                server.start()
                conn = http.client.HTTPConnection("127.0.0.1", dashboard.port, timeout=30)
                conn.request("GET", "/")
                assert conn.getresponse().status == 200
                conn.close()
            finally:
                dashboard.shutdown()
        time.sleep(2.5)  # the evaluator's rounds after the restarts
        assert alerts.poll() is None, alerts.stderr.read() if alerts.stderr else ""
    finally:
        alerts.terminate()
        out, err = alerts.communicate(timeout=30)
    assert "Traceback" not in err
    assert out.count("cofe alerts:") >= 2  # rounds after the first, through the restarts


def test_spans_with_times_past_2100_are_no_spans():
    late = span("1", "CHAIN", start=(4_102_444_800 * 10**9 - T0) / 1e9)
    with pytest.raises(SpanFormatError, match="between 1970 and 2100"):
        checked(late)  # what every reader of an export does with a span it built


# --- one trace fed a batch at a time ------------------------------------------------------


FULL = f"{7:032x}"  # the trace fed a batch at a time


def _chain_batch(first: int, count: int, trace: str = FULL) -> list:
    """``count`` child spans of one trace's root, span ids from ``first``."""
    return [span(f"{i:x}", None, trace=trace, parent="1") for i in range(first, first + count)]


def test_a_trace_past_its_bound_is_not_read_back_nor_reassembled(store_location, monkeypatch):
    """Defect 6: every batch bringing a trace new spans re-read and re-assembled it whole in
    the write transaction, so feeding one trace a batch at a time made each batch dearer
    than the last (a 30,000-span trace: 1.3 s a batch). Past MAX_TRACE_SPANS its new spans
    are refused, counted and the trace named; the other traces of the batch are stored."""
    from cofe.monitor.store import _ingest, _traces

    monkeypatch.setattr(_ingest, "MAX_TRACE_SPANS", 50)
    assembled: list[tuple[str, int]] = []
    real = _traces.assemble

    def counting(trace_id, spans):
        assembled.append((trace_id, len(spans)))
        return real(trace_id, spans)

    monkeypatch.setattr(_traces, "assemble", counting)
    with MonitorStore(store_location, window_seconds=60) as store:
        store.traces.ingest([span("1", "CHAIN", trace=FULL, **{"input.value": "q"})])
        assert store.traces.ingest(_chain_batch(2, 30)).refused == 0
        report = store.traces.ingest([*_chain_batch(100, 30), *traces_batch(5, 1)])
        assert report.refused == 11 and report.full_traces == (FULL,)
        assert "11 spans refused" in report.refusal() and "at most 50 spans" in report.refusal()
        assembled.clear()
        full = store.traces.ingest(_chain_batch(200, 30))
        assert full.refused == 30 and full.new_spans == 0
        assert assembled == []  # a full trace costs its batch no read-back, no assembly
        assert store.counts()["spans"] == 50 + len(traces_batch(5, 1))
        again = store.traces.ingest(_chain_batch(2, 30))  # spans it holds, sent again: not refused
        assert again.refused == 0


def test_the_collector_answers_partial_success_naming_the_full_trace(tmp_path, monkeypatch):
    from cofe.monitor.store import _ingest

    monkeypatch.setattr(_ingest, "MAX_TRACE_SPANS", 10)
    spans = recent([span("1", "CHAIN", trace=FULL, **{"input.value": "q"}), *_chain_batch(2, 20)])
    with MonitorStore(tmp_path / "m.db", window_seconds=60) as store, running(store) as collector:
        status, _, reply = post(collector.url, otlp_json(spans), "application/json")
        assert status == 200, reply
        partial = json.loads(reply)["partialSuccess"]
        assert partial["rejectedSpans"] == "11"
        assert spans[0].trace_id in partial["errorMessage"]
        status, _, reply = post(collector.url, protobuf(spans))
        assert status == 200
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        decoded = ExportTraceServiceResponse.FromString(reply)
        assert decoded.partial_success.rejected_spans == 11
        assert "at most 10 spans" in decoded.partial_success.error_message
        assert "11 spans past a trace's bound" not in collector.stats.line()
        assert "22 spans past a trace's bound" in collector.stats.line()
        assert store.counts()["spans"] == 10
