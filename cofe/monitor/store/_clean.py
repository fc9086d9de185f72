"""What a sender may put in a span that no store can keep, repaired before it is stored.

One hostile or careless value must never cost a batch (the exporter would resend it, then
drop the good spans with it), so every value is made storable here, once, and what was
changed is counted on the span (and then said on its trace):

- text: a lone surrogate (an SDK cutting a string mid-emoji writes ``"\\ud83d"``) cannot
  be encoded as UTF-8 (SQLite refuses it) -> U+FFFD; U+0000 cannot be stored in a
  PostgreSQL ``TEXT`` (PDF text often holds it) -> removed;
- numbers: an integer outside the signed 64-bit range OTLP defines, or a float that is not
  finite, is dropped (the attribute is left out) -- a score of ``1e400`` means nothing; so
  is a document score given as a string that reads as a number that is not finite
  (``"inf"``, ``"nan"``, ``"1e999"``): cofe reads a score string as a number;
- times: a span's start and end must lie between 1970 and 2100 (:data:`LATEST_NS`), or the
  arithmetic of windows overflows the store's 64-bit integers; such a span is refused
  (:class:`~cofe.monitor.ingest._spans.SpanFormatError` naming it), never repaired: its time is
  what places it.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from cofe.adapters import Span

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
LATEST_NS = 4_102_444_800 * 10**9  # 2100-01-01T00:00:00Z: later than any real span
REPAIRED = "cofe.repaired_values"  # a stored span's count of values changed to be storable

_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")


class Unreadable:
    """A value a decoder could not take as its type (``intValue: "1e400"``): dropped, counted."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unreadable>"


UNREADABLE = Unreadable()


_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str, only a lone half is one
SCORE_KEY = "document.score"  # OpenInference: retrieval.documents.N.document.score


def non_finite_text(text: str) -> bool:
    """Whether ``text`` reads as a float that is not finite (``"inf"``, ``" NaN"``,
    ``"1e999"``): what ``float()`` would make of a score given as a string."""
    if len(text) > 64:
        return False  # no number a score is written as; float() of it is not tried
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


def maybe_unstorable(attributes: dict[str, Any], events: tuple[dict[str, Any], ...] = ()) -> bool:
    """Whether a span's attributes or events may hold something :func:`clean_value` would
    change, found with a few C-level scans of its texts joined (the common case: nothing to
    repair) instead of a Python walk over every value. Lists, nested values and events go
    to the exact walk. Integers out of 64 bits are not looked for: the decoders never make
    them (``_spans``)."""
    if events:
        return True
    texts = list(attributes)
    for value in attributes.values():
        kind = type(value)
        if kind is str:
            texts.append(value)
        elif kind is float:
            if not math.isfinite(value):
                return True
        elif value is not None and kind is not int and kind is not bool:
            return True
    if any(
        type(value) is str and key.endswith(SCORE_KEY) and non_finite_text(value)
        for key, value in attributes.items()
    ):
        return True
    joined = "".join(texts)
    return "\x00" in joined or (not joined.isascii() and _SURROGATE.search(joined) is not None)


def clean_text(text: str) -> tuple[str, int]:
    """``text`` with lone surrogates as U+FFFD and NUL characters removed; and how many."""
    if _UNSTORABLE.search(text) is None:  # the common case: one scan, nothing copied
        return text, 0
    found = len(_UNSTORABLE.findall(text))
    return _UNSTORABLE.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text), found


def clean_value(value: Any) -> tuple[Any, int]:
    """A decoded attribute value made storable (see the module); ``(value, repairs)``.
    A dropped value comes back as :data:`UNREADABLE` for the caller to leave out."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bool) or value is None:
        return value, 0
    if isinstance(value, int):
        return (value, 0) if INT64_MIN <= value <= INT64_MAX else (UNREADABLE, 1)
    if isinstance(value, float):
        return (value, 0) if math.isfinite(value) else (UNREADABLE, 1)
    if isinstance(value, Unreadable):
        return UNREADABLE, 1
    if isinstance(value, list | tuple):
        items, repairs = [], 0
        for item in value:
            cleaned, n = clean_value(item)
            repairs += n
            if cleaned is not UNREADABLE:
                items.append(cleaned)
        return items, repairs
    if isinstance(value, dict):
        return clean_mapping(value)
    return clean_text(str(value))


def clean_mapping(mapping: dict[Any, Any]) -> tuple[dict[str, Any], int]:
    """Keys and values of an attribute mapping made storable; dropped values left out."""
    out: dict[str, Any] = {}
    repairs = 0
    for key, value in mapping.items():
        name, n = clean_text(str(key))
        if isinstance(value, str) and name.endswith(SCORE_KEY) and non_finite_text(value):
            repairs += n + 1  # a score of "inf" is no score: dropped like 1e400
            continue
        cleaned, m = clean_value(value)
        repairs += n + m
        if cleaned is not UNREADABLE:
            out[name] = cleaned
    return out, repairs


def check_time(ns: int, what: str) -> None:
    """Refuse a time no real span has (see the module): ``ValueError`` naming it."""
    if not 0 <= ns < LATEST_NS:
        raise ValueError(f"{what} {ns} ns is not between 1970 and 2100")


def storable(span: Span) -> Span:
    """The span with every value a store can keep (``_clean``: lone surrogates as U+FFFD,
    NUL removed, numbers out of range dropped), the repairs counted."""
    name, a = clean_text(span.name)
    message, b = clean_text(span.status_message)
    if not (a or b or maybe_unstorable(span.attributes, span.events)):
        return span  # the common case, found in one C-level scan
    attributes, c = clean_mapping(span.attributes)
    events, d = [], 0
    for event in span.events:
        cleaned, n = clean_mapping(event)
        events.append(cleaned)
        d += n
    repairs = a + b + c + d
    if not repairs:
        return span
    return replace(
        span,
        name=name,
        status_message=message,
        attributes=attributes,
        events=tuple(events),
        repaired=span.repaired + repairs,
    )
