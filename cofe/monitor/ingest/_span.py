"""What the monitor adds to a span (:class:`cofe.adapters.Span`, the one span type): its
times checked when read from an export (its values are made storable by the store,
``cofe.monitor.store._clean``); the errors of reading
spans, and what every export format shares: nested attributes flattened, ids as hex,
status codes.
:mod:`cofe.monitor.ingest._spans` reads the formats (the OTLP/JSON ones in
:mod:`cofe.monitor.ingest._spans_json`) and exports these names too."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cofe._errors import InputError
from cofe.adapters import Span  # the one span type, shared with the adapters
from cofe.monitor.store._clean import check_time


class SpanFormatError(InputError):
    """A body or record that is not spans in any format cofe reads; says where and why."""


class TooManySpans(SpanFormatError):
    """A request holding more spans than the receiver takes in one batch (counted before
    any span is built: a small gzip body can inflate to millions of tiny spans)."""


def _check_count(n: int, max_spans: int | None) -> None:
    if max_spans is not None and n > max_spans:
        raise TooManySpans(
            f"the request holds {n:,} spans, more than {max_spans:,} in one "
            "batch: send smaller batches"
        )


def checked(span: Span) -> Span:
    """A span read from an export, its times checked: a time no real span has would
    overflow the windows' arithmetic (``SpanFormatError`` naming it)."""
    for what, ns in (("start time", span.start_ns), ("end time", span.end_ns)):
        try:
            check_time(ns, what)
        except ValueError as error:
            raise SpanFormatError(str(error)) from None
    return span


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


_STATUS = {
    0: "unset",
    1: "ok",
    2: "error",
    "STATUS_CODE_UNSET": "unset",
    "STATUS_CODE_OK": "ok",
    "STATUS_CODE_ERROR": "error",
    "UNSET": "unset",
    "OK": "ok",
    "ERROR": "error",
}


def _status(code: Any) -> str:
    return _STATUS.get(code, "unset")


def _required(value: str | None, what: str) -> str:
    if value is None:
        raise SpanFormatError(f"{what} is missing")
    return value
