"""Spans as cofe reads them, from the three ways they are exported.

- OTLP protobuf (``ExportTraceServiceRequest``: what an OTLP/HTTP exporter POSTs);
- OTLP JSON (the same request in the OTLP/JSON mapping: hex ids, int64 as strings;
  also one request per line, as the OpenTelemetry Collector's file exporter writes);
- the OpenTelemetry SDK's own JSON of a span (``ReadableSpan.to_json()``, what the
  ``ConsoleSpanExporter`` prints).

Whatever the format, a span becomes one :class:`Span` with flat attribute keys
(``retrieval.documents.0.document.content``), the key form OpenInference defines.
"""

from __future__ import annotations

import base64
from typing import Any

from cofe.monitor._span import (
    KIND,
    Span,
    SpanFormatError,
    TooManySpans,
    _check_count,
    _hex_id,
    _required,
    _status,
    flatten,
)
from cofe.monitor._spans_json import json_values, spans_from_json, spans_from_json_value

__all__ = [
    "KIND",
    "Span",
    "SpanFormatError",
    "TooManySpans",
    "flatten",
    "json_values",
    "parse_protobuf",
    "protobuf_spans",
    "spans_from_json",
    "spans_from_json_value",
    "spans_from_protobuf",
    "spans_from_protobuf_frames",
]

# --- attribute values ----------------------------------------------------------------------


def _any_value_pb(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_any_value_pb(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _any_value_pb(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, which)


# --- OTLP protobuf -------------------------------------------------------------------------


def spans_from_protobuf(body: bytes, max_spans: int | None = None) -> list[Span]:
    """Spans of an OTLP ``ExportTraceServiceRequest`` in protobuf (at most ``max_spans``:
    :class:`TooManySpans` past it)."""
    return protobuf_spans(parse_protobuf(body), max_spans)


def parse_protobuf(body: bytes) -> Any:
    """The ``ExportTraceServiceRequest`` a protobuf body holds. It keeps no reference to
    the body: a caller short of memory drops the body before :func:`protobuf_spans` makes
    the spans (the collector: a 64 MB body, its message and its spans are never all held)."""
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as error:
        raise SpanFormatError(f"not an OTLP protobuf ExportTraceServiceRequest: {error}") from None
    return request


def protobuf_spans(request: Any, max_spans: int | None = None) -> list[Span]:
    """The spans of a parsed ``ExportTraceServiceRequest`` (:func:`parse_protobuf`)."""
    _check_count(
        sum(
            len(scope.spans)
            for resource in request.resource_spans
            for scope in resource.scope_spans
        ),
        max_spans,
    )
    out: list[Span] = []
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for s in scope.spans:
                where = f"span {len(out) + 1} ({s.name!r})"
                try:
                    out.append(
                        Span(
                            trace_id=_required(_hex_id(s.trace_id, 16, "trace_id"), "trace_id"),
                            span_id=_required(_hex_id(s.span_id, 8, "span_id"), "span_id"),
                            parent_id=_hex_id(s.parent_span_id, 8, "parent_span_id"),
                            name=s.name,
                            start_ns=int(s.start_time_unix_nano),
                            end_ns=int(s.end_time_unix_nano),
                            status=_status(s.status.code),
                            status_message=s.status.message,
                            attributes=flatten(
                                {kv.key: _any_value_pb(kv.value) for kv in s.attributes}
                            ),
                            events=tuple(
                                {
                                    "name": e.name,
                                    "time_ns": int(e.time_unix_nano),
                                    "attributes": {
                                        kv.key: _any_value_pb(kv.value) for kv in e.attributes
                                    },
                                }
                                for e in s.events
                            ),
                            dropped_attributes=int(s.dropped_attributes_count),
                        )
                    )
                except SpanFormatError as error:
                    raise SpanFormatError(f"{where}: {error}") from None
    return out


def spans_from_protobuf_frames(body: bytes) -> list[Span]:
    """Spans of one request, or of requests each prefixed by its 4-byte big-endian length
    (the OpenTelemetry Collector's file exporter with ``format: proto``)."""
    try:
        return spans_from_protobuf(body)
    except SpanFormatError as whole:
        out: list[Span] = []
        at = 0
        while at < len(body):
            size = int.from_bytes(body[at : at + 4], "big")
            if at + 4 + size > len(body) or size == 0:
                raise whole from None
            out += spans_from_protobuf(body[at + 4 : at + 4 + size])
            at += 4 + size
        return out
