"""Spans of OTLP/JSON (the request in the OTLP/JSON mapping: hex ids, int64 as strings;
also one request per line, as the OpenTelemetry Collector's file exporter writes) and of
the OpenTelemetry SDK's own JSON of a span (``ReadableSpan.to_json()``, what the
``ConsoleSpanExporter`` prints). :mod:`cofe.monitor.ingest._spans` exports these names too."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from cofe.adapters import Span
from cofe.monitor.ingest._span import (
    SpanFormatError,
    _check_count,
    _hex_id,
    _required,
    _status,
    checked,
    flatten,
)
from cofe.monitor.store._clean import UNREADABLE

# --- attribute values ----------------------------------------------------------------------


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
        return {
            kv["key"]: _any_value_json(kv.get("value")) for kv in (item or {}).get("values", [])
        }
    if which in ("bytesValue", "bytes_value"):
        return str(item)
    return None


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
    return checked(
        Span(
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
                    "attributes": {
                        kv["key"]: _any_value_json(kv.get("value"))
                        for kv in e.get("attributes") or []
                    },
                }
                for e in s.get("events") or []
            ),
            dropped_attributes=int(
                _get(s, "droppedAttributesCount", "dropped_attributes_count", 0)
            ),
        )
    )


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
    return checked(
        Span(
            trace_id=_required(
                _hex_id(context.get("trace_id"), 16, "context.trace_id"), "trace_id"
            ),
            span_id=_required(_hex_id(context.get("span_id"), 8, "context.span_id"), "span_id"),
            parent_id=_hex_id(s.get("parent_id"), 8, "parent_id"),
            name=str(s.get("name", "")),
            start_ns=_iso_ns(s.get("start_time"), "start_time"),
            end_ns=_iso_ns(s.get("end_time"), "end_time"),
            status=_status(code),
            status_message=str(status.get("description") or ""),
            attributes=flatten(dict(s.get("attributes") or {})),
            events=tuple(
                {
                    "name": e.get("name", ""),
                    "time_ns": _iso_ns(e.get("timestamp"), "timestamp"),
                    "attributes": dict(e.get("attributes") or {}),
                }
                for e in s.get("events") or []
            ),
        )
    )


def spans_from_json_value(value: Any) -> list[Span]:
    """Spans of one JSON value: an OTLP/JSON request, an SDK span, or a list of either."""
    if isinstance(value, list):
        return [span for item in value for span in spans_from_json_value(item)]
    if not isinstance(value, dict):
        raise SpanFormatError(
            f"expected an OTLP request or a span object, not {type(value).__name__}"
        )
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
        scopes = (
            _get(resource, "scopeSpans", "scope_spans", []) if isinstance(resource, dict) else []
        )
        for scope in scopes if isinstance(scopes, list) else ():
            spans = scope.get("spans") if isinstance(scope, dict) else None
            n += len(spans) if isinstance(spans, list) else 0
    return n


def spans_from_json(body: bytes | str, max_spans: int | None = None) -> list[Span]:
    """Spans of an OTLP/JSON body (what an exporter POSTs with Content-Type application/json);
    at most ``max_spans`` (:class:`TooManySpans` past it)."""
    try:
        try:
            value = json.loads(body)
        except UnicodeDecodeError:  # a string cut mid-character: its bytes become lone
            # surrogates, which _clean repairs to U+FFFD and counts on their span only
            assert isinstance(body, bytes | bytearray)
            value = json.loads(bytes(body).decode("utf-8", "surrogateescape"))
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
