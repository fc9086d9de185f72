"""The OTLP/HTTP collector on loopback, in a thread, fed by the OpenTelemetry SDK's own
exporter and encoder: what it stores, what it refuses (and that a refused body stores
nothing), the token, and that a batch stored while windows are computed is counted."""

from __future__ import annotations

import gzip
import http.client
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from cofe.monitor import Collector, MonitorStore, Span, refresh_windows
from cofe.monitor.analysis import _window_rows as windows_module
from tests.monitor.conftest import T0, _free_port, docs, rag_trace

HOUR = 3600 * 10**9
RECENT = (time.time_ns() - HOUR) // HOUR * HOUR  # within the retention; starts a window
POOL = [
    "The Eiffel Tower was finished in 1889.",
    "Paris is the capital of France.",
    "Gustave Eiffel's company built the tower.",
]
TOKEN = "s3cret-Tok3n-9f8e7d"


# --- spans as the OpenTelemetry SDK exports them ---------------------------------------------


def recent(spans: Sequence[Span], base_ns: int = RECENT) -> list[Span]:
    """conftest's spans (which start at a fixed day) moved to ``base_ns``."""
    shift = base_ns - T0
    return [replace(s, start_ns=s.start_ns + shift, end_ns=s.end_ns + shift) for s in spans]


def sdk_spans(spans: Sequence[Span]) -> list:
    """The spans as the SDK's finished spans (``ReadableSpan``), what its exporters encode."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

    resource = Resource.create({"service.name": "rag-service"})
    scope = InstrumentationScope("openinference.instrumentation.test")
    codes = {"ok": StatusCode.OK, "error": StatusCode.ERROR, "unset": StatusCode.UNSET}
    out = []
    for s in spans:
        trace_id = int(s.trace_id, 16)
        out.append(
            ReadableSpan(
                name=s.name,
                context=SpanContext(
                    trace_id,
                    int(s.span_id, 16),
                    is_remote=False,
                    trace_flags=TraceFlags(TraceFlags.SAMPLED),
                ),
                parent=SpanContext(trace_id, int(s.parent_id, 16), is_remote=False)
                if s.parent_id
                else None,
                resource=resource,
                attributes=s.attributes,
                events=[Event(e["name"], e.get("attributes"), e.get("time_ns")) for e in s.events],
                status=Status(codes[s.status], s.status_message if s.status == "error" else None),
                start_time=s.start_ns,
                end_time=s.end_ns,
                instrumentation_scope=scope,
            )
        )
    return out


def protobuf(spans: Sequence[Span]) -> bytes:
    """An ``ExportTraceServiceRequest`` as the SDK's OTLP encoder writes it."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(sdk_spans(spans)).SerializeToString()


def otlp_json(spans: Sequence[Span]) -> bytes:
    """The same request in the OTLP/JSON mapping, written by hand: hex ids, int64 as strings."""

    def value(v) -> dict:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        return {"stringValue": v}

    out = [
        {
            "traceId": s.trace_id,
            "spanId": s.span_id,
            "name": s.name,
            "kind": 1,
            **({"parentSpanId": s.parent_id} if s.parent_id else {}),
            "startTimeUnixNano": str(s.start_ns),
            "endTimeUnixNano": str(s.end_ns),
            "attributes": [{"key": k, "value": value(v)} for k, v in s.attributes.items()],
            "status": {"code": {"ok": 1, "error": 2, "unset": 0}[s.status]},
        }
        for s in spans
    ]
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {
                        "attributes": [
                            {"key": "service.name", "value": {"stringValue": "rag-service"}}
                        ]
                    },
                    "scopeSpans": [{"scope": {"name": "test"}, "spans": out}],
                }
            ]
        }
    ).encode()


def traces_batch(first: int, n: int = 3) -> list[Span]:
    """``n`` whole RAG traces (6 spans each), trace ids ``first + 1 ...``, a second apart."""
    spans: list[Span] = []
    for t in range(first, first + n):
        spans += recent(rag_trace(trace=f"{t + 1:032x}", query=f"question {t}?", start=t))
    return spans


# --- running the collector, talking to it ----------------------------------------------------


@contextmanager
def running(store: MonitorStore, **options) -> Iterator[Collector]:
    options.setdefault("refresh_seconds", 3600.0)
    options.setdefault("quiet", True)
    collector = Collector(store, port=0, **options)
    collector.start()
    try:
        yield collector
    finally:
        collector.shutdown()


def post(
    url: str,
    body: bytes,
    content_type: str | None = "application/x-protobuf",
    headers: dict[str, str] | None = None,
    conn: http.client.HTTPConnection | None = None,
) -> tuple[int, str | None, bytes]:
    """(status, Content-Type, body) of one POST; on ``conn`` if given (kept open)."""
    parts = urllib.parse.urlsplit(url)
    own = conn is None
    conn = conn or http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    sent = dict(headers or {})
    if content_type is not None:
        sent["Content-Type"] = content_type
    try:
        conn.request("POST", parts.path, body=body, headers=sent)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        if own:
            conn.close()


def get(collector: Collector, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", collector.port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def stored(store: MonitorStore) -> set[tuple[str, str]]:
    return set(store.db.execute("SELECT trace_id, span_id FROM spans"))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MonitorStore]:
    with MonitorStore(tmp_path / "monitor.db", window_seconds=60) as opened:
        yield opened


# --- what arrives ----------------------------------------------------------------------------


def test_spans_of_an_sdk_tracer_exported_one_by_one_are_assembled_into_the_query_s_stages(store):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    question, answer = "When was the Eiffel Tower finished?", "It was finished in 1889."
    with running(store) as collector:
        provider = TracerProvider(resource=Resource.create({"service.name": "rag-service"}))
        # one export (one POST) per span as it ends: the children arrive before their root
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=collector.url)))
        tracer = provider.get_tracer("openinference.instrumentation.test")
        with tracer.start_as_current_span("query") as root:
            root.set_attributes({"openinference.span.kind": "CHAIN", "input.value": question})
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attributes(
                    {
                        "openinference.span.kind": "RETRIEVER",
                        "input.value": question,
                        **docs("retrieval.documents", POOL, [0.9, 0.7, 0.4]),
                    }
                )
            with tracer.start_as_current_span("rerank") as span:
                span.set_attributes(
                    {
                        "openinference.span.kind": "RERANKER",
                        **docs("reranker.input_documents", POOL, [0.9, 0.7, 0.4]),
                        **docs("reranker.output_documents", [POOL[2], POOL[0]], [0.95, 0.6]),
                    }
                )
            with tracer.start_as_current_span("generate") as span:
                span.set_attributes(
                    {
                        "openinference.span.kind": "LLM",
                        "llm.output_messages.0.message.role": "assistant",
                        "llm.output_messages.0.message.content": answer,
                    }
                )
            root.set_attribute("output.value", answer)
        with tracer.start_as_current_span("query") as failed_root:
            failed_root.set_attributes({"openinference.span.kind": "CHAIN", "input.value": "Who?"})
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attributes(
                    {
                        "openinference.span.kind": "RETRIEVER",
                        **docs("retrieval.documents", POOL[:1], [0.5]),
                    }
                )
            with tracer.start_as_current_span("generate") as span:
                span.set_attribute("openinference.span.kind", "LLM")
                span.record_exception(RuntimeError("rate limited"))
                span.set_status(Status(StatusCode.ERROR, "rate limited"))
        provider.shutdown()
        batches = collector.stats.batches

    assert batches == 7  # every span was its own request, and every one was stored
    trace = store.traces.get(format(root.get_span_context().trace_id, "032x"))
    assert trace is not None and trace.problems == [], trace and trace.problems
    assert trace.query == question and trace.answer == answer and trace.spans == 4
    assert [d.text for d in trace.pool] == POOL and [d.score for d in trace.pool] == [0.9, 0.7, 0.4]
    assert [d.text for d in trace.context] == [POOL[2], POOL[0]]
    assert [s.value for s in trace.stages] == ["retrieval", "reranking", "generation"]
    failed = store.traces.get(format(failed_root.get_span_context().trace_id, "032x"))
    assert failed.error_stage.value == "generation" and failed.error == "RuntimeError: rate limited"
    assert store.counts()["traces"] == 2


@pytest.mark.parametrize("compression", ["none", "gzip", "deflate"])
def test_the_sdk_exporter_s_batches_arrive_compressed_or_not(store, compression):
    import requests
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    sent_encodings = []
    session = requests.Session()
    session.hooks["response"].append(
        lambda r, **_: sent_encodings.append(r.request.headers.get("Content-Encoding"))
    )
    spans = traces_batch(0, 3)
    with running(store) as collector:
        exporter = OTLPSpanExporter(
            endpoint=collector.url,
            compression=Compression(compression),
            session=session,
            timeout=10,
        )
        assert exporter.export(sdk_spans(spans)) is SpanExportResult.SUCCESS
        exporter.shutdown()
    # the body really travelled compressed (the exporter sends no header without compression)
    assert sent_encodings == [None if compression == "none" else compression]
    assert stored(store) == {(s.trace_id, s.span_id) for s in spans}
    record = store.traces.get(f"{2:032x}")
    assert record.query == "question 1?" and record.problems == []
    assert [d.text for d in record.context] == [
        "The tower was finished in 1889.",
        "Paris is a city.",
    ]


@pytest.mark.parametrize("gzipped", [False, True])
def test_otlp_json_with_hex_ids_is_stored_and_answered_in_json(store, gzipped):
    spans = traces_batch(0, 2)
    body = otlp_json(spans)
    headers = {"Content-Encoding": "gzip"} if gzipped else {}
    with running(store) as collector:
        status, content_type, reply = post(
            collector.url, gzip.compress(body) if gzipped else body, "application/json", headers
        )
    assert (status, content_type, json.loads(reply)) == (200, "application/json", {})
    assert stored(store) == {(s.trace_id, s.span_id) for s in spans}
    record = store.traces.get(f"{1:032x}")
    assert record.query == "question 0?" and record.answer == "In 1889." and record.problems == []
    assert record.started_ns == spans[0].start_ns  # the int64 strings read as nanoseconds
    assert [d.text for d in record.pool] == [
        "The tower was finished in 1889.",
        "Paris is a city.",
        "The Louvre is a museum.",
    ]


# --- what is refused -------------------------------------------------------------------------


def _truncated_gzip() -> bytes:
    """Two requests' bytes (one request: protobuf merges repeated fields), gzipped and cut
    right after the first: inflated, the part that came is a valid request on its own."""
    import zlib

    deflater = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    head = deflater.compress(protobuf(traces_batch(10, 1))) + deflater.flush(zlib.Z_FULL_FLUSH)
    whole = head + deflater.compress(protobuf(traces_batch(11, 1))) + deflater.flush()
    assert gzip.decompress(whole) == protobuf(traces_batch(10, 1)) + protobuf(traces_batch(11, 1))
    return head


NOT_SPANS = {
    "protobuf garbage": ("application/x-protobuf", {}, b"\xff\xff\xff\xff not a request"),
    "not JSON": ("application/json", {}, b"{resourceSpans: nope"),
    "JSON, not a request": ("application/json", {}, b'{"hello": "world"}'),
    "JSON of the wrong shape": ("application/json", {}, b'{"resourceSpans": ["x"]}'),
    "a 3-byte trace id among good spans": (
        "application/json",
        {},
        otlp_json([*traces_batch(10, 1), replace(traces_batch(11, 1)[0], trace_id="abcdef")]),
    ),
    "an all-zero span id": (
        "application/x-protobuf",
        {},
        protobuf([*traces_batch(10, 1), replace(traces_batch(11, 1)[0], span_id="0" * 16)]),
    ),
    "gzip cut short after a whole request": (
        "application/x-protobuf",
        {"Content-Encoding": "gzip"},
        _truncated_gzip(),
    ),
    "not gzip": (
        "application/x-protobuf",
        {"Content-Encoding": "gzip"},
        protobuf(traces_batch(10, 1)),
    ),
}


@pytest.mark.parametrize("case", list(NOT_SPANS))
def test_a_body_that_is_not_spans_is_refused_with_400_and_nothing_of_it_is_stored(store, case):
    from google.rpc.status_pb2 import Status

    content_type, headers, body = NOT_SPANS[case]
    store.traces.ingest(traces_batch(0, 1))
    refresh_windows(store)
    before = (store.counts(), stored(store))
    with running(store) as collector:
        status, reply_type, reply = post(collector.url, body, content_type, headers)
        assert status == 400, reply
        # the OTLP error body: a google.rpc.Status (code 3, INVALID_ARGUMENT) saying why
        if content_type == "application/json":
            message = json.loads(reply)
            assert message["code"] == 3 and message["message"]
        else:
            message = Status.FromString(reply)
            assert message.code == 3 and message.message
        assert reply_type == content_type
        assert (collector.stats.rejected, collector.stats.batches) == (1, 0)
    assert (store.counts(), stored(store)) == before


def test_a_wrong_content_type_or_encoding_is_415_and_the_connection_stays_usable(store):
    body = protobuf(traces_batch(0, 1))
    with running(store) as collector:
        conn = http.client.HTTPConnection("127.0.0.1", collector.port, timeout=10)
        try:
            for content_type, headers in (
                ("text/plain", {}),
                (None, {}),
                ("application/xml", {}),
                ("application/x-protobuf", {"Content-Encoding": "br"}),
            ):
                status, _, reply = post(collector.url, body, content_type, headers, conn=conn)
                assert status == 415, (content_type, headers, reply)
            assert store.counts()["spans"] == 0
            # the refused bodies were read off the connection: the next request on it works
            status, _, _ = post(
                collector.url, body, "application/x-protobuf; charset=binary", conn=conn
            )
        finally:
            conn.close()
        assert collector.stats.rejected == 4
    assert status == 200 and store.counts()["spans"] == 6


def test_a_body_over_max_body_is_413_and_one_just_under_is_stored(store):
    small, large = traces_batch(0, 1), traces_batch(1, 2)
    small_body = protobuf(small)
    with running(store, max_body=len(small_body)) as collector:
        assert post(collector.url, small_body)[0] == 200  # exactly the limit
        status, _, reply = post(collector.url, protobuf(large))
        assert status == 413, reply
        # nor may a small body inflate past the limit
        status, _, reply = post(
            collector.url, gzip.compress(protobuf(large)), headers={"Content-Encoding": "gzip"}
        )
        assert status == 400 and b"inflates past" in reply
    assert stored(store) == {(s.trace_id, s.span_id) for s in small}


def test_a_token_is_required_when_one_is_set(store):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    first, second = traces_batch(0, 1), traces_batch(1, 1)
    with running(store, token=TOKEN) as collector:
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": f"Bearer {TOKEN}x"},
            {"Authorization": "Bearer "},
        ):
            status, _, _ = post(collector.url, protobuf(first), headers=headers)
            assert status == 401, headers
        assert store.counts()["spans"] == 0
        status, _, _ = post(
            collector.url, protobuf(first), headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert status == 200
        # the SDK exporter with the header configured, as a deployment would set it
        without = OTLPSpanExporter(endpoint=collector.url, timeout=5)
        assert without.export(sdk_spans(second)) is SpanExportResult.FAILURE
        with_token = OTLPSpanExporter(
            endpoint=collector.url, timeout=5, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert with_token.export(sdk_spans(second)) is SpanExportResult.SUCCESS
        assert collector.stats.rejected == 5
    assert stored(store) == {(s.trace_id, s.span_id) for s in first + second}


def test_listening_beyond_loopback_needs_a_token(store, tmp_path):
    for host in ("0.0.0.0", "192.0.2.10", "::", "example.org"):
        with pytest.raises(ValueError, match="needs a token"):
            Collector(store, host=host, port=0)
    outside = Collector(store, host="0.0.0.0", port=0, token=TOKEN)  # with one it listens
    outside.server.server_close()
    from cofe.monitor.ingest._collector import check_binding

    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1"):
        check_binding(host, None)  # loopback needs none
    # the command line refuses before it creates the store
    db = tmp_path / "refused.db"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cofe",
            "monitor",
            "collect",
            "--store",
            str(db),
            "--host",
            "0.0.0.0",
            "--port",
            str(_free_port()),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "COFE_MONITOR_TOKEN"},
    )
    assert done.returncode != 0 and "needs a token" in done.stderr and not db.exists()


def test_the_token_never_appears_in_what_the_collector_prints(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1/traces"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cofe",
            "monitor",
            "collect",
            "--store",
            str(tmp_path / "m.db"),
            "--port",
            str(port),
            "--token-file",
            str(token_file),
            "--refresh",
            "0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/healthz")
                health = conn.getresponse().read()
                conn.close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        good = {"Authorization": f"Bearer {TOKEN}"}
        assert post(url, protobuf(traces_batch(0, 1)))[0] == 401
        assert (
            post(
                url,
                protobuf(traces_batch(0, 1)),
                headers={"Authorization": f"Bearer {TOKEN}-and-more"},
            )[0]
            == 401
        )
        assert post(url, b"\xff\xff", headers=good)[0] == 400
        assert post(url, protobuf(traces_batch(0, 1)), "text/plain", headers=good)[0] == 415
        assert post(url, protobuf(traces_batch(0, 1)), headers=good)[0] == 200
        time.sleep(0.5)  # a few rounds of the stats line
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "token required" in err and "6 spans in 1 batches" in err  # it did print its lines
    assert TOKEN not in out + err and TOKEN not in health.decode()


def test_the_token_is_not_printed_by_an_in_process_collector_either(
    store, capfd, caplog, monkeypatch
):
    caplog.set_level(logging.INFO, logger="cofe.monitor")  # in a process, it logs
    with running(store, token=TOKEN, refresh_seconds=0.05, quiet=False) as collector:
        good = {"Authorization": f"Bearer {TOKEN}"}
        assert post(collector.url, b"", headers={"Authorization": f"Bearer {TOKEN}!"})[0] == 401
        monkeypatch.setattr(
            store.traces,
            "ingest",
            lambda spans: (_ for _ in ()).throw(sqlite3.OperationalError("disk I/O error")),
        )
        assert post(collector.url, protobuf(traces_batch(0, 1)), headers=good)[0] == 503
        monkeypatch.undo()
        assert post(collector.url, protobuf(traces_batch(0, 1)), headers=good)[0] == 200
        status, health = get(collector, "/healthz")
        assert status == 200
        time.sleep(0.2)
    printed, logged = capfd.readouterr(), caplog.text
    assert "disk I/O error" in logged and "6 spans in 1 batches" in logged
    assert TOKEN not in printed.out + printed.err + logged and TOKEN not in health.decode()


def test_healthz_reports_the_counters_and_other_paths_are_404(store):
    with running(store) as collector:
        status, body = get(collector, "/healthz")
        assert status == 200 and json.loads(body)["batches"] == 0
        assert post(collector.url, protobuf(traces_batch(0, 2)))[0] == 200
        assert post(collector.url, b"\xff\xff")[0] == 400
        assert post(collector.url, protobuf(traces_batch(0, 1)))[0] == 200  # sent again
        status, body = get(collector, "/healthz")
        health = json.loads(body)
        assert status == 200
        assert {
            k: health[k] for k in ("batches", "spans", "new_spans", "traces", "rejected", "failed")
        } == {"batches": 2, "spans": 18, "new_spans": 12, "traces": 3, "rejected": 1, "failed": 0}
        assert "not an OTLP protobuf" in health["last_error"]
        assert get(collector, "/metrics")[0] == 404
        logs = collector.url.replace("/v1/traces", "/v1/logs")
        assert post(logs, protobuf(traces_batch(5, 1)))[0] == 404
    assert store.counts()["spans"] == 12


def test_a_store_that_cannot_write_answers_503_and_the_exporter_s_retry_lands_once(store):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    ingest, calls = store.traces.ingest, []

    def flaky(spans):
        calls.append(len(spans))
        if len(calls) == 1:
            raise sqlite3.OperationalError("database or disk is full")
        return ingest(spans)

    store.traces.ingest = flaky  # type: ignore[method-assign]
    spans = traces_batch(0, 2)
    with running(store) as collector:
        exporter = OTLPSpanExporter(endpoint=collector.url, timeout=15)
        assert exporter.export(sdk_spans(spans)) is SpanExportResult.SUCCESS  # it retried
        assert post(collector.url, protobuf(spans))[0] == 200  # and once more by hand
        failed, batches, new = (
            collector.stats.failed,
            collector.stats.batches,
            collector.stats.new_spans,
        )
    assert calls == [12, 12, 12] and (failed, batches, new) == (1, 2, 12)
    assert store.counts()["spans"] == 12 and store.counts()["traces"] == 2


# --- many senders, and the windows ------------------------------------------------------------


def test_concurrent_exporters_store_every_span_once(store_location):
    """On both engines: four SDK exporters at once, some batches sent twice, the windows
    recomputed all along."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    batches = [traces_batch(3 * i, 3) for i in range(24)]
    resent = batches[::5]
    results = []

    def sender(mine: list[list[Span]], url: str) -> None:
        exporter = OTLPSpanExporter(endpoint=url, timeout=30)
        results.extend(exporter.export(sdk_spans(batch)) for batch in mine)

    with MonitorStore(store_location, window_seconds=60) as store:
        with running(store, refresh_seconds=0.05) as collector:
            threads = [
                threading.Thread(target=sender, args=(batches[i::4] + resent[i::4], collector.url))
                for i in range(4)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            stats = collector.stats
        assert results == [SpanExportResult.SUCCESS] * (len(batches) + len(resent))
        assert (stats.batches, stats.spans) == (29, 29 * 18)
        assert stats.new_spans == 24 * 18  # the second sending of a batch added nothing
        counts = store.counts()
        assert (counts["spans"], counts["traces"], counts["traces_with_problems"]) == (432, 72, 0)
        # the collector's last refresh (at shutdown) left every window up to date
        assert sum(r["value"] for r in store.windows.series(stage="all", signal="Traces")) == 72
        assert refresh_windows(store) == 0


def test_a_batch_stored_while_a_window_is_computed_is_counted_in_its_series(store, monkeypatch):
    """``refresh`` computes a window, then clears its mark: a batch stored in between must
    not be left out of the series (the collector keeps batches out while it refreshes)."""
    store.traces.ingest(traces_batch(0, 1))
    compute, late = windows_module.window_rows, []

    with running(store, refresh_seconds=0.05) as collector:

        def window_rows_as_a_batch_arrives(*args):
            rows = compute(*args)
            if not late:
                sender = threading.Thread(
                    target=lambda: late.append(post(collector.url, protobuf(traces_batch(1, 1)))[0])
                )
                sender.start()
                sender.join(timeout=0.5)  # it lands now unless the collector holds it back
                late.append(sender)
            return rows

        monkeypatch.setattr(windows_module, "window_rows", window_rows_as_a_batch_arrives)
        deadline = time.monotonic() + 10
        while 200 not in late and time.monotonic() < deadline:
            time.sleep(0.05)
    assert 200 in late and store.counts()["traces"] == 2
    series = store.windows.series(stage="all", signal="Traces")
    assert [r["value"] for r in series] == [2.0], series


def test_with_a_token_healthz_says_only_alive_to_a_caller_without_it(store):
    with running(store, token=TOKEN) as collector:
        assert (
            post(
                collector.url,
                b"\xff secret span name",
                headers={"Authorization": f"Bearer {TOKEN}"},
            )[0]
            == 400
        )
        status, body = get(collector, "/healthz")
        assert status == 200 and json.loads(body) == {"alive": True}
