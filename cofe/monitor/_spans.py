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
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cofe.monitor._clean import (
    UNREADABLE,
    check_time,
    clean_mapping,
    clean_text,
    maybe_unstorable,
)

KIND = "openinference.span.kind"


class SpanFormatError(ValueError):
    """A body or record that is not spans in any format cofe reads; says where and why."""


class TooManySpans(SpanFormatError):
    """A request holding more spans than the receiver takes in one batch (counted before
    any span is built: a small gzip body can inflate to millions of tiny spans)."""


def _check_count(n: int, max_spans: int | None) -> None:
    if max_spans is not None and n > max_spans:
        raise TooManySpans(f"the request holds {n:,} spans, more than {max_spans:,} in one "
                           "batch: send smaller batches")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Span:
    trace_id: str  # 32 lower-case hex digits
    span_id: str  # 16 lower-case hex digits
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    status: str  # "ok", "error" or "unset"
    status_message: str
    attributes: dict[str, Any]
    events: tuple[dict[str, Any], ...] = ()  # {"name", "time_ns", "attributes"}
    dropped_attributes: int = 0  # attributes the SDK's limit dropped (128 by default)
    repaired: int = 0  # values changed or dropped to be storable (``_clean``)

    def __post_init__(self) -> None:
        for what, ns in (("start time", self.start_ns), ("end time", self.end_ns)):
            try:  # a time no real span has would overflow the windows' arithmetic
                check_time(ns, what)
            except ValueError as error:
                raise SpanFormatError(str(error)) from None

    def storable(self) -> Span:
        """This span with every value a store can keep (``_clean``: lone surrogates as
        U+FFFD, NUL removed, numbers out of range dropped), the repairs counted."""
        name, a = clean_text(self.name)
        message, b = clean_text(self.status_message)
        if not (a or b or maybe_unstorable(self.attributes, self.events)):
            return self  # the common case, found in one C-level scan
        attributes, c = clean_mapping(self.attributes)
        events, d = [], 0
        for event in self.events:
            cleaned, n = clean_mapping(event)
            events.append(cleaned)
            d += n
        repairs = a + b + c + d
        if not repairs:
            return self
        return Span(trace_id=self.trace_id, span_id=self.span_id, parent_id=self.parent_id,
                    name=name, start_ns=self.start_ns, end_ns=self.end_ns, status=self.status,
                    status_message=message, attributes=attributes, events=tuple(events),
                    dropped_attributes=self.dropped_attributes,
                    repaired=self.repaired + repairs)  # fmt: skip

    @property
    def kind(self) -> str | None:
        """The OpenInference span kind (``RETRIEVER``, ``LLM``, ...), upper case; None if absent."""
        kind = self.attributes.get(KIND)
        return kind.upper() if isinstance(kind, str) and kind.strip() else None

    @property
    def seconds(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e9

    def exception(self) -> tuple[str, str] | None:
        """(type, message) of the span's first recorded exception, if any."""
        for event in self.events:
            if event.get("name") == "exception":
                attrs = event.get("attributes") or {}
                return (str(attrs.get("exception.type") or "Exception"),
                        str(attrs.get("exception.message") or ""))  # fmt: skip
        return None


# --- attribute values ----------------------------------------------------------------------


def flatten(attributes: dict[str, Any]) -> dict[str, Any]:
    """Nested attribute values (a list of documents as objects, as some exports write them)
    become OpenInference's flat keys: ``{"a": [{"b": 1}]}`` -> ``{"a.0.b": 1}``. Lists of
    scalars stay lists (an OTLP array attribute)."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), item)
        elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            for i, item in enumerate(value):
                walk(f"{prefix}.{i}", item)
        else:
            out[prefix] = value

    for key, value in attributes.items():
        walk(str(key), value)
    return out


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


_INT64_TEXT = re.compile(r"[+-]?\d{1,19}")


def _json_int(item: Any) -> Any:
    """An OTLP/JSON ``intValue`` (int64 travels as a string); anything that is not a 64-bit
    integer (``"1e400"``, 5,000 digits, ``true``) is :data:`UNREADABLE`, not an error: one
    attribute never costs its span, nor the span its batch."""
    if isinstance(item, bool):
        return UNREADABLE
    if isinstance(item, int):
        return item
    if isinstance(item, float):
        item = int(item) if item.is_integer() else None  # inf and nan are not
    elif isinstance(item, str) and _INT64_TEXT.fullmatch(item.strip()):
        item = int(item)
    if isinstance(item, int) and -(2**63) <= item < 2**63:
        return item
    return UNREADABLE


def _any_value_json(value: Any) -> Any:
    if not isinstance(value, dict) or not value:
        return None
    (which, item), *_ = value.items()
    if which in ("stringValue", "string_value"):
        return str(item)
    if which in ("boolValue", "bool_value"):
        return bool(item)
    if which in ("intValue", "int_value"):
        return _json_int(item)
    if which in ("doubleValue", "double_value"):
        try:
            return float(item)  # "NaN" and "Infinity" too: dropped when stored (_clean)
        except (TypeError, ValueError):
            return UNREADABLE
    if which in ("arrayValue", "array_value"):
        return [_any_value_json(v) for v in (item or {}).get("values", [])]
    if which in ("kvlistValue", "kvlist_value"):
        return {kv["key"]: _any_value_json(kv.get("value")) for kv in (item or {}).get("values", [])}
    if which in ("bytesValue", "bytes_value"):
        return str(item)
    return None


# --- ids -----------------------------------------------------------------------------------


def _hex_id(value: Any, size: int, what: str) -> str | None:
    """An id as lower-case hex: OTLP/JSON writes hex; protobuf's own JSON mapping (and so
    ``MessageToJson``) writes base64; the SDK's JSON writes ``0x``-prefixed hex."""
    if value is None or len(value) == 0:
        return None
    if isinstance(value, bytes):
        raw = value
    else:
        text = str(value).removeprefix("0x")
        if len(text) == 2 * size and all(c in "0123456789abcdefABCDEF" for c in text):
            raw = bytes.fromhex(text)
        else:
            try:
                raw = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                raw = b""
    if len(raw) != size:
        raise SpanFormatError(f"{what} {value!r} is not {size} bytes (hex or base64)")
    if not any(raw):
        raise SpanFormatError(f"{what} is all zeros (an invalid id)")
    return raw.hex()


_STATUS = {0: "unset", 1: "ok", 2: "error", "STATUS_CODE_UNSET": "unset",
           "STATUS_CODE_OK": "ok", "STATUS_CODE_ERROR": "error", "UNSET": "unset",
           "OK": "ok", "ERROR": "error"}  # fmt: skip


def _status(code: Any) -> str:
    return _STATUS.get(code, "unset")


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
    _check_count(sum(len(scope.spans) for resource in request.resource_spans
                     for scope in resource.scope_spans), max_spans)  # fmt: skip
    out: list[Span] = []
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for s in scope.spans:
                where = f"span {len(out) + 1} ({s.name!r})"
                try:
                    out.append(Span(
                        trace_id=_required(_hex_id(s.trace_id, 16, "trace_id"), "trace_id"),
                        span_id=_required(_hex_id(s.span_id, 8, "span_id"), "span_id"),
                        parent_id=_hex_id(s.parent_span_id, 8, "parent_span_id"),
                        name=s.name,
                        start_ns=int(s.start_time_unix_nano),
                        end_ns=int(s.end_time_unix_nano),
                        status=_status(s.status.code),
                        status_message=s.status.message,
                        attributes=flatten({kv.key: _any_value_pb(kv.value) for kv in s.attributes}),
                        events=tuple({"name": e.name, "time_ns": int(e.time_unix_nano),
                                      "attributes": {kv.key: _any_value_pb(kv.value)
                                                     for kv in e.attributes}}
                                     for e in s.events),
                        dropped_attributes=int(s.dropped_attributes_count),
                    ))  # fmt: skip
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


def _required(value: str | None, what: str) -> str:
    if value is None:
        raise SpanFormatError(f"{what} is missing")
    return value


# --- OTLP JSON and the SDK's JSON ----------------------------------------------------------


def _get(obj: dict[str, Any], camel: str, snake: str, default: Any = None) -> Any:
    return obj.get(camel, obj.get(snake, default))


def _otlp_json_spans(request: dict[str, Any]) -> Iterator[Span]:
    resources = _get(request, "resourceSpans", "resource_spans", [])
    if not isinstance(resources, list):
        raise SpanFormatError("resourceSpans is not a list")
    n = 0
    for resource in resources:
        for scope in _get(resource, "scopeSpans", "scope_spans", []) or []:
            for s in scope.get("spans", []) or []:
                n += 1
                if not isinstance(s, dict):
                    raise SpanFormatError(f"span {n} is not an object")
                try:
                    yield _otlp_json_span(s)
                except (SpanFormatError, TypeError, ValueError, KeyError, AttributeError) as error:
                    raise SpanFormatError(f"span {n} ({s.get('name')!r}): {error}") from None


def _otlp_json_span(s: dict[str, Any]) -> Span:
    status = s.get("status") or {}
    attributes = {kv["key"]: _any_value_json(kv.get("value")) for kv in s.get("attributes") or []}
    return Span(
        trace_id=_required(_hex_id(_get(s, "traceId", "trace_id"), 16, "traceId"), "traceId"),
        span_id=_required(_hex_id(_get(s, "spanId", "span_id"), 8, "spanId"), "spanId"),
        parent_id=_hex_id(_get(s, "parentSpanId", "parent_span_id"), 8, "parentSpanId"),
        name=str(s.get("name", "")),
        start_ns=int(_get(s, "startTimeUnixNano", "start_time_unix_nano", 0)),
        end_ns=int(_get(s, "endTimeUnixNano", "end_time_unix_nano", 0)),
        status=_status(status.get("code", 0)),
        status_message=str(status.get("message", "")),
        attributes=flatten(attributes),
        events=tuple(
            {
                "name": e.get("name", ""),
                "time_ns": int(_get(e, "timeUnixNano", "time_unix_nano", 0)),
                "attributes": {kv["key"]: _any_value_json(kv.get("value"))
                               for kv in e.get("attributes") or []},
            }
            for e in s.get("events") or []
        ),
        dropped_attributes=int(_get(s, "droppedAttributesCount", "dropped_attributes_count", 0)),
    )  # fmt: skip


def _iso_ns(value: Any, what: str) -> int:
    if value in (None, ""):
        raise SpanFormatError(f"{what} is missing")
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    micro = int(moment.timestamp()) * 1_000_000 + moment.microsecond
    return micro * 1000


def _sdk_json_span(s: dict[str, Any]) -> Span:
    context = s.get("context") or {}
    status = s.get("status") or {}
    code = str(status.get("status_code", "UNSET")).removeprefix("StatusCode.")
    return Span(
        trace_id=_required(_hex_id(context.get("trace_id"), 16, "context.trace_id"), "trace_id"),
        span_id=_required(_hex_id(context.get("span_id"), 8, "context.span_id"), "span_id"),
        parent_id=_hex_id(s.get("parent_id"), 8, "parent_id"),
        name=str(s.get("name", "")),
        start_ns=_iso_ns(s.get("start_time"), "start_time"),
        end_ns=_iso_ns(s.get("end_time"), "end_time"),
        status=_status(code),
        status_message=str(status.get("description") or ""),
        attributes=flatten(dict(s.get("attributes") or {})),
        events=tuple(
            {"name": e.get("name", ""), "time_ns": _iso_ns(e.get("timestamp"), "timestamp"),
             "attributes": dict(e.get("attributes") or {})}
            for e in s.get("events") or []
        ),
    )  # fmt: skip


def spans_from_json_value(value: Any) -> list[Span]:
    """Spans of one JSON value: an OTLP/JSON request, an SDK span, or a list of either."""
    if isinstance(value, list):
        return [span for item in value for span in spans_from_json_value(item)]
    if not isinstance(value, dict):
        raise SpanFormatError(f"expected an OTLP request or a span object, not {type(value).__name__}")
    if "resourceSpans" in value or "resource_spans" in value:
        try:
            return list(_otlp_json_spans(value))
        except (AttributeError, TypeError, KeyError, ValueError) as error:
            if isinstance(error, SpanFormatError):
                raise
            raise SpanFormatError(f"not an OTLP/JSON request: {error}") from None
    if isinstance(value.get("context"), dict):
        try:
            return [_sdk_json_span(value)]
        except (TypeError, ValueError, AttributeError) as error:
            raise SpanFormatError(f"span {value.get('name')!r}: {error}") from None
    raise SpanFormatError(
        "neither an OTLP request (no resourceSpans) nor an SDK span (no context object)"
    )


def _json_span_count(value: Any) -> int:
    """Spans an OTLP/JSON request lists (0 for anything else), counted without reading them."""
    if isinstance(value, list):
        return sum(_json_span_count(item) for item in value)
    if not isinstance(value, dict):
        return 0
    n = 0
    resources = _get(value, "resourceSpans", "resource_spans", [])
    for resource in resources if isinstance(resources, list) else ():
        scopes = _get(resource, "scopeSpans", "scope_spans", []) if isinstance(resource, dict) else []
        for scope in scopes if isinstance(scopes, list) else ():
            spans = scope.get("spans") if isinstance(scope, dict) else None
            n += len(spans) if isinstance(spans, list) else 0
    return n


def spans_from_json(body: bytes | str, max_spans: int | None = None) -> list[Span]:
    """Spans of an OTLP/JSON body (what an exporter POSTs with Content-Type application/json);
    at most ``max_spans`` (:class:`TooManySpans` past it)."""
    try:
        value = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise SpanFormatError(f"not valid JSON: {error}") from None
    except ValueError as error:
        raise SpanFormatError(f"not valid JSON: {error}"[:300]) from None
    _check_count(_json_span_count(value), max_spans)
    return spans_from_json_value(value)


def json_values(text: str) -> Iterator[tuple[int, Any]]:
    """``(line, value)`` of every JSON value in a file: one per line (JSONL), one document,
    or pretty-printed objects one after another (the console exporter's output)."""
    decoder = json.JSONDecoder()
    at, line, size = 0, 1, len(text)
    while True:
        while at < size and text[at] in " \t\r\n":
            if text[at] == "\n":
                line += 1
            at += 1
        if at >= size:
            return
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as error:
            raise SpanFormatError(f"line {error.lineno}: not valid JSON: {error.msg}") from None
        except RecursionError:
            raise SpanFormatError(f"line {line}: not valid JSON: nested too deeply") from None
        yield line, value
        line += text.count("\n", at, end)
        at = end
