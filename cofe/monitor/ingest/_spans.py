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

from cofe.adapters import KIND, Span
from cofe.monitor.ingest._span import (
    SpanFormatError,
    TooManySpans,
    _check_count,
    _hex_id,
    _required,
    _status,
    checked,
    flatten,
)
from cofe.monitor.ingest._spans_json import json_values, spans_from_json, spans_from_json_value

__all__ = [
    "KIND",
    "Span",
    "SpanFormatError",
    "TooManySpans",
    "flatten",
    "json_values",
    "parse_protobuf",
    "parse_protobuf_salvaging",
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


def parse_protobuf_salvaging(body: bytes) -> tuple[Any, int]:
    """:func:`parse_protobuf`, but one span the protobuf library refuses -- a string cut
    mid-character (invalid UTF-8), attributes nested past its recursion limit (about 30
    kvlist levels) -- costs only itself: the request is taken apart on the wire format and
    each span parsed alone. ``(request, spans dropped)``; a body that is not a request at
    all is still :class:`SpanFormatError`."""
    from google.protobuf.message import DecodeError

    try:
        return parse_protobuf(body), 0
    except SpanFormatError as whole:
        try:
            return _salvaged(body)
        except (ValueError, DecodeError):
            raise whole from None


def _salvaged(body: bytes) -> tuple[Any, int]:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage

    request = ExportTraceServiceRequest()
    dropped = 0
    for field, resource_bytes in _wire(body):
        if field != 1:  # resource_spans
            continue
        resource = request.resource_spans.add()
        for field2, value2 in _wire(resource_bytes):
            if field2 == 1:  # resource: its attributes are not read; a bad one is left out
                try:
                    resource.resource.ParseFromString(value2)
                except DecodeError:
                    resource.resource.Clear()
            elif field2 == 2:  # scope_spans
                scope = resource.scope_spans.add()
                for field3, value3 in _wire(value2):
                    if field3 == 2:  # spans
                        span = SpanMessage()
                        try:
                            span.ParseFromString(value3)
                        except DecodeError:
                            dropped += 1
                            continue
                        scope.spans.append(span)
    return request, dropped


def _wire(buffer: bytes) -> Any:
    """``(field number, bytes)`` of each length-delimited field of a protobuf message (the
    other wire types are skipped); ValueError if it is not a message."""
    at, size = 0, len(buffer)
    while at < size:
        key, at = _varint(buffer, at)
        field, kind = key >> 3, key & 7
        if kind == 0:
            _, at = _varint(buffer, at)
        elif kind == 1:
            at += 8
        elif kind == 5:
            at += 4
        elif kind == 2:
            length, at = _varint(buffer, at)
            if at + length > size:
                raise ValueError("truncated")
            yield field, bytes(buffer[at : at + length])
            at += length
        else:
            raise ValueError(f"wire type {kind}")
        if field == 0 or at > size:
            raise ValueError("not a message")


def _varint(buffer: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(buffer) or shift > 63:
            raise ValueError("bad varint")
        byte = buffer[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


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
                        checked(
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
