"""What the dashboard's pages share: limits, the stylesheet and icon, formatting, the
default range, the page frame (a template) and request parameters
(``cofe.monitor.web._dashboard``)."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlencode

from cofe._errors import InputError
from cofe.chain import STEP_SPECS
from cofe.charts import STYLESHEET
from cofe.monitor.store import (
    TRAFFIC,
    CanaryRoundRow,
    MonitorStore,
)
from cofe.monitor.store._clean import LATEST_NS
from cofe.monitor.web._templates import render, static

DEFAULT_PORT = 8765
RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400, "all": None}
DEFAULT_RANGE = "24h"
PAGE_SIZE = 50  # traces or cases per page of a drill-down
MAX_TRACES = 20_000  # traces of one window a drill-down reads (the first, by start time)
MAX_ALERTS = 200  # alert rows shown on the overview
MAX_ROUNDS = 50  # canary rounds listed on the overview
STAGE_TITLES = {
    "all": "Whole traces",
    "parse": "Parse",
    "chunking": "Chunking",
    "retrieval": "Retrieval",
    "reranking": "Reranking",
    "generation": "Generation",
}
# the steps a canary round reports, in chain order (cofe.chain; chunk-intact is a waterfall row)
STEP_ORDER = tuple(spec.step.value for spec in STEP_SPECS if spec.passes is not None)
VERDICTS = "verdicts"  # the canary step holding verdict shares (``cofe.monitor.analysis._canary``)
JUDGED = {
    "Faithfulness": "judged share: the answer's claims supported by the context",
    "AnswerRelevancy": "judged share: how well the answer addresses the query",
}

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
_SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}

STYLE = STYLESHEET  # one stylesheet with the report's (cofe.charts keeps it)
ICON = static("favicon.svg")  # templates/static/favicon.svg


class BadRequest(InputError):
    """A parameter that cannot be read (answered 400; the value is not repeated)."""


class NotFound(LookupError):
    pass


# --- the store, read-only -----------------------------------------------------------------------


def open_read_only(location: str) -> MonitorStore:
    """The store at ``location``, opened so that nothing can write through it (SQLite
    ``query_only``, PostgreSQL read-only sessions, on every connection). A store that does
    not exist, is not one, or is at another schema version is refused (opening it to
    write would create or migrate it)."""
    return MonitorStore(str(location), read_only=True)


# --- formatting ------------------------------------------------------------------------------------


def utc(ns: int, seconds: bool = False) -> str:
    moment = datetime.fromtimestamp(ns / 1e9, UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def _hm(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%H:%M")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


def _href(path: str, **params: Any) -> str:
    """A link relative to the dashboard's root (so it also works behind a path prefix)."""
    kept = {k: v for k, v in params.items() if v is not None and v != ""}
    return f"./{path}" + (f"?{urlencode(kept)}" if kept else "")


def _kind(stage: str, name: str) -> str:
    """How a series' values read: ``share`` (0-100 %), ``seconds``, ``unit`` (0-1), ``number``."""
    if stage == VERDICTS or name.endswith(("Rate", "Share", "Dropped")):
        return "share"
    if "@" in name and not re.search(r"@\d+$", name):  # a verdict share: VERDICT@STAGE
        return "share"
    if name.startswith("Latency"):
        return "seconds"
    if name in JUDGED:
        return "unit"
    return "number"


def fmt_value(kind: str, value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if kind == "share":
        return f"{value:.1%}"
    if kind == "seconds":
        return f"{value:.3f} s" if value < 100 else f"{value:.0f} s"
    if kind == "unit":
        return f"{value:.3f}"
    return f"{value:.4g}"


def _signal_group(name: str) -> str:
    """Signals drawn together: a base name and its percentiles (LatencyP50, LatencyP95)."""
    match = re.fullmatch(r"(.+?)(P\d+)", name)
    return match[1] if match else name


def _signals() -> dict[tuple[str, str], Any]:
    from cofe.monitor.analysis._signals import SIGNALS

    return {(s.stage, s.name): s for s in SIGNALS}


def _description(stage: str, name: str) -> str:
    signal = _signals().get((stage, name))
    if signal is not None:
        return str(getattr(signal, "description", ""))
    if name == "OtherTraces":
        return "traces with no retriever, reranker or LLM span (index building, ...)"
    return JUDGED.get(name, "")


# --- queries the store has no method for -------------------------------------------------------------


FUTURE_SLACK_NS = 86400 * 10**9  # clocks that run ahead of this machine's, by up to a day
RECENT_QUANTILE = 0.99  # a store stamped wholly in the future: its recent past, not its outliers
# a stretch of windows this far before the rest of the history (and farther than the rest
# spans) is a clock that was not set -- 1970 -- not history: range=all starts after it
EARLY_GAP_NS = 365 * 86400 * 10**9


@dataclass(frozen=True)
class Extent:
    """What the store's instants span (series, rounds, alerts): ``first`` and ``last`` (None
    when empty), and the instants left out as stamped by a wrong clock -- ``early``, a
    stretch isolated far before the rest; ``late``, ahead of now."""

    first: int | None
    last: int | None
    early: list[int] = field(default_factory=list)
    late: list[int] = field(default_factory=list)


def _extent(store: MonitorStore, now_ns: int | None = None) -> Extent:
    """The first instant of the store's history and its recent past: the last instant up to
    now (a day's slack for clock skew), never the latest stamp -- one trace stamped in 2200
    must not move the default view there. A store whose every stamp lies ahead of now (a
    simulation) gives the 99th percentile of its instants. The first instant is that of the
    history's main body: windows more than a year before the rest, and farther from it than
    the rest spans, are left out (one trace stamped 1970 stretched range=all to 1970)."""
    instants = sorted(set(store.windows.instants(TRAFFIC)))
    if not instants:
        return Extent(None, None)
    horizon = (now_ns if now_ns is not None else time.time_ns()) + FUTURE_SLACK_NS
    past = [t for t in instants if t <= horizon]
    if past:
        last, late = past[-1], instants[len(past) :]
    else:
        last, late = instants[int(RECENT_QUANTILE * (len(instants) - 1))], []
        past = [t for t in instants if t <= last]
    start = 0
    while start + 1 < len(past):
        gap, rest = past[start + 1] - past[start], last - past[start + 1]
        if gap <= max(rest, EARLY_GAP_NS):
            break
        start += 1
    return Extent(past[start], last, past[:start], late)


def left_out_line(extent: Extent) -> str | None:
    """What range=all leaves out of an extent, in words, or None."""
    parts = []
    if extent.early:
        parts.append(
            f"{len(extent.early):,} instant(s) stamped {_when(extent.early)}, over a year "
            "before the rest (a clock that was not set?)"
        )
    if extent.late:
        parts.append(
            f"{len(extent.late):,} instant(s) stamped {_when(extent.late)}, ahead of this "
            "machine's clock"
        )
    return "; ".join(parts) or None


def _when(instants: list[int]) -> str:
    first, last = utc(instants[0]), utc(instants[-1])
    return first if first == last else f"{first} to {last}"


def _alerts(store: MonitorStore, start: int, end: int) -> list[dict[str, Any]]:
    return store.alerts.between(start, end, limit=MAX_ALERTS)


def _rounds(store: MonitorStore, start: int, end: int) -> list[CanaryRoundRow]:
    return store.canaries.rounds(since_ns=start, until_ns=end, newest_first=True)


def _fitting_range(first: int | None, last: int | None) -> str:
    """The default range: everything, when all that was recorded spans a day or less (a
    short history fills the charts instead of the right edge of a day), else 24h."""
    if first is None or last is None or last - first > 86400 * 1_000_000_000:
        return DEFAULT_RANGE
    return "all"


def evidence_keywords(explanation: str) -> list[str]:
    """The keywords a verdict's explanation names (``point 0 [Denver Broncos]: 'Denver
    Broncos' not in ...``), to mark in the case's chunks and answer."""
    words = set(re.findall(r"'([^'\n]{1,80})' (?:not in|is not|missing|absent)", explanation))
    for label in re.findall(r"point \d+ \[([^\]\n]{1,200})\]", explanation):
        words.add(label)
        words.update(part.strip() for part in re.split(r" \+ |, | & | \| ", label))
    return sorted(w for w in words if len(w.strip()) >= 2)


def with_zero_shares(
    rows: list[dict[str, Any]], canary: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Verdict shares with a 0 for each round (of ``canary``) in which a verdict of ``rows``
    did not occur: the store keeps only the verdicts a round had."""
    rounds = {r["round_id"]: r for r in canary if r["step"] == VERDICTS}
    have = {(r["round_id"], r["measure"]) for r in rows}
    out = list(rows)
    for measure in sorted({r["measure"] for r in rows}):
        stage = measure.rpartition("@")[2]
        for round_id, any_row in rounds.items():
            if (round_id, measure) not in have:
                out.append(
                    {
                        **any_row,
                        "measure": measure,
                        "series": measure,
                        "stage": stage,
                        "value": 0.0,
                        "unscored": 0,
                    }
                )
    return sorted(out, key=lambda r: (r["start_ns"], r["measure"]))


# --- pages ---------------------------------------------------------------------------------------


def _page(template: str, title: str, subtitle: str, **context: Any) -> str:
    """A page: ``template`` (which extends ``base.html``, the frame) written with ``context``."""
    return str(render(template, title=title, subtitle=subtitle, **context))


class _Params:
    def __init__(self, query: str) -> None:
        self.values = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.values.get(name)
        if value is not None and "\x00" in value:  # no stored text holds one (PostgreSQL
            # refuses it in a query: it was a 500)
            raise BadRequest(f"{name}: a NUL character is in no id or name")
        return value if value not in (None, "") else default

    def integer(self, name: str, default: int | None = None, minimum: int = 0) -> int | None:
        value = self.values.get(name)
        if value in (None, ""):
            return default
        try:
            number = int(value)
        except ValueError:
            raise BadRequest(f"the parameter {name} must be an integer") from None
        if number < minimum or number >= 2**63:
            raise BadRequest(f"the parameter {name} is out of range")
        return number

    def time(self, name: str) -> int | None:
        """An instant in ns, within the times a span may have (``_clean``: 1970 to 2100), so
        no window computed from it overflows the store's 64-bit integers."""
        number = self.integer(name)
        if number is not None and number >= LATEST_NS:
            raise BadRequest(f"the parameter {name} is past 2100 (a time in ns since 1970)")
        return number


TEXT_CHARS = 4_000  # a query, answer or error as a window's or a round's page shows it
LISTED_DOCS = 50  # a pool's or context's documents listed there
WHOLE_CHARS, WHOLE_DOCS = 10 * TEXT_CHARS, 20 * LISTED_DOCS  # on the trace's own page


def shortened(t: Any, whole: bool) -> tuple[Any, ...]:
    """A trace's query, answer, error, context and pool as a page shows them -- cut at
    ``TEXT_CHARS`` and ``LISTED_DOCS`` (``whole``: the trace's own page, at ``WHOLE_*``) --
    and what was cut, said (None: nothing)."""
    chars, listed = (WHOLE_CHARS, WHOLE_DOCS) if whole else (TEXT_CHARS, LISTED_DOCS)
    cut: list[str] = []

    def text(value: str | None, what: str) -> str | None:
        if value is None or len(value) <= chars:
            return value
        cut.append(f"the {what} ({len(value):,} characters)")
        return value[:chars] + "…"

    def docs(which: Any, what: str) -> list[Any] | None:
        if which is None or len(which) <= listed:
            return None if which is None else list(which)
        cut.append(f"the {what} ({len(which):,} documents, {listed:,} listed)")
        return list(which[:listed])

    return (
        text(t.query, "query"),
        text(t.answer, "answer"),
        text(t.error, "error"),
        docs(t.context, "context"),
        docs(t.pool, "pool"),
        "; ".join(cut) if cut else None,
    )
