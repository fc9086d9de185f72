"""One poison span costs only itself (issue 45, item 8): a string cut mid-character (not
UTF-8) made a whole JSON or protobuf batch 400, and protobuf attributes nested past ~30
kvlist levels cost the batch while JSON accepted 240."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cofe.monitor import MonitorStore
from tests.monitor.test_collector import otlp_json, post, protobuf, running, traces_batch

MARK = "@@@@"
CUT = b"ab\xe2\x82"  # "ab" and the first two bytes of a euro sign: not UTF-8


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MonitorStore]:
    with MonitorStore(tmp_path / "monitor.db", window_seconds=60) as opened:
        yield opened


def _poison_protobuf() -> bytes:
    """A request of two poison spans: one whose name and attribute hold bytes that are not
    UTF-8, one with an attribute nested 40 kvlist levels deep."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for n, deep in ((1, False), (2, True)):
        span = scope.spans.add()
        span.trace_id = bytes.fromhex(f"{99:032x}")
        span.span_id = bytes.fromhex(f"{n:016x}")
        span.name = MARK if not deep else "deep"
        span.start_time_unix_nano = 1_790_000_000_000_000_000
        span.end_time_unix_nano = 1_790_000_001_000_000_000
        attribute = span.attributes.add()
        attribute.key = "input.value"
        value = attribute.value
        if deep:
            for _ in range(40):
                kv = value.kvlist_value.values.add()
                kv.key = "k"
                value = kv.value
            value.string_value = "bottom"
        else:
            value.string_value = MARK
    return request.SerializeToString().replace(MARK.encode(), CUT)


def test_protobuf_poison_spans_cost_only_themselves(store):
    good = protobuf(traces_batch(0, 3))
    with running(store) as collector:
        status, _, reply = post(collector.url, good + _poison_protobuf())
        assert status == 200, reply
        assert store.counts()["traces"] == 3  # every good trace stored
        assert b"not readable" in reply  # partial_success names the dropped spans
        assert collector.stats.refused_spans == 2


def test_a_json_string_cut_mid_character_is_repaired_on_its_span_only(store):
    body = json.loads(otlp_json(traces_batch(0, 3)))
    spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["name"] = MARK
    raw = json.dumps(body).encode().replace(MARK.encode(), CUT)
    with running(store) as collector:
        status, _, reply = post(collector.url, raw, "application/json")
        assert status == 200, reply
        assert store.counts()["traces"] == 3
        repaired = [
            t
            for t in (store.traces.get(f"{i:032x}") for i in range(3))
            if t is not None and any("repaired" in p for p in t.problems)
        ]
        assert len(repaired) == 1
