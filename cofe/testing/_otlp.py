"""Test helpers for monitoring: spans as an OTLP request, and a real collector process."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from cofe.monitor import Span


def otlp_request(
    spans: Sequence[Span], *, service: str = "rag-service"
) -> ExportTraceServiceRequest:
    """cofe ``Span`` objects as the ``ExportTraceServiceRequest`` an OpenTelemetry SDK's
    OTLP exporter would POST (resource, instrumentation scope, events, status)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Status
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

    codes = {
        "unset": Status.STATUS_CODE_UNSET,
        "ok": Status.STATUS_CODE_OK,
        "error": Status.STATUS_CODE_ERROR,
    }

    def value(v: Any) -> AnyValue:
        if isinstance(v, bool):
            return AnyValue(bool_value=v)
        if isinstance(v, int):
            return AnyValue(int_value=v)
        if isinstance(v, float):
            return AnyValue(double_value=v)
        return AnyValue(string_value=str(v))

    def pairs(attributes: dict[str, Any]) -> list[KeyValue]:
        return [KeyValue(key=k, value=value(v)) for k, v in attributes.items()]

    out = [
        PbSpan(
            trace_id=bytes.fromhex(s.trace_id),
            span_id=bytes.fromhex(s.span_id),
            parent_span_id=bytes.fromhex(s.parent_id) if s.parent_id else b"",
            name=s.name,
            kind=PbSpan.SPAN_KIND_INTERNAL,
            start_time_unix_nano=s.start_ns,
            end_time_unix_nano=s.end_ns,
            attributes=pairs(s.attributes),
            status=Status(code=codes[s.status], message=s.status_message),
            dropped_attributes_count=s.dropped_attributes,
            events=[
                PbSpan.Event(
                    name=e["name"],
                    time_unix_nano=e.get("time_ns", 0),
                    attributes=pairs(e["attributes"]),
                )
                for e in s.events
            ],
        )
        for s in spans
    ]
    resource = Resource(attributes=pairs({"service.name": service}))
    scope = InstrumentationScope(name="openinference.instrumentation.llama_index")
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(resource=resource, scope_spans=[ScopeSpans(scope=scope, spans=out)])
        ]
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_collector(
    store: str,
    port: int,
    *options: str,
    timeout: float = 60.0,
    stdout: Any = subprocess.DEVNULL,
    cwd: str | None = None,
) -> subprocess.Popen[str]:
    """A real ``cofe monitor collect`` process on ``port``, returned once it answers
    ``/healthz``; one that exits first raises, with what it printed."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cofe",
            "monitor",
            "collect",
            "--store",
            str(store),
            "--port",
            str(port),
            *options,
        ],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            ok = conn.getresponse().status == 200
            conn.close()
            if ok:
                return process
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            printed = process.stderr.read() if process.stderr else ""  # stderr is a pipe
            raise RuntimeError(f"cofe monitor collect did not start: {printed}")
        time.sleep(0.05)


def trickle(port: int, stop: threading.Event, closed: list[int]) -> None:
    """A slow sender with no token on ``port``: a request a byte every 2 s, never finished,
    until ``stop`` is set; ``closed[0]`` counts the connections the collector cut (its
    request deadline)."""
    sock = socket.create_connection(("127.0.0.1", port))
    head = b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n"
    try:
        for byte in head + b"x" * 1000:
            if stop.wait(2.0):
                return
            sock.sendall(bytes([byte]))
    except OSError:
        closed[0] += 1
    finally:
        sock.close()
