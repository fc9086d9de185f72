"""``cofe monitor serve``: a read-only web dashboard over the monitoring store.

Pages, all rendered on the server from the store (no script at all: charts are inline
SVG whose markers are links, filters are links, and collapsed text is ``<details>``):

- ``/``: per-stage time series -- the label-free traffic signals per window and the
  canary measures per round (KeywordRecall at each step, verdict shares per stage) --
  and the alert history, over a time range (``?range=24h``, ``&until=<ns>``);
- ``/window?origin=traffic&start=<ns>``: the traces of one window (what a click on a
  traffic point opens): query, stages, latency, problems, the context's chunk texts, the
  pool and the answer; with ``&signal=<stage>/<Signal>`` sorted by that signal's
  per-trace value, worst first;
- ``/round?id=<round>``: one canary round (what a click on a canary point opens): its
  measures, verdict counts and cases -- verdict, the stage blamed, the evidence and what
  each stage of the case's trace produced;
- ``/trace?id=<trace>``: one trace (alert examples link here).

Security: loopback by default; any other address needs a token (``check_binding``,
shared with the collector). With a token every request needs it -- ``Authorization:
Bearer``, or once in a browser ``/?token=...``, which sets an HttpOnly SameSite=Strict
cookie (a keyed hash of the token, never the token) and redirects to the same page
without it. Without a token, the Host header must name this machine (a page elsewhere
cannot reach the dashboard through DNS rebinding). Only GET and HEAD (anything else is
405). Nothing about a request is logged, and no page or header repeats the token. Every
text from the store is escaped; the Content-Security-Policy allows no script at all and
only this server's stylesheet and icon. The store is opened read-only (SQLite
``query_only``, PostgreSQL read-only transactions): the dashboard never creates,
migrates, refreshes or prunes it; a collector may write meanwhile (SQLite's WAL lets
readers and the writer proceed together; every request reads what is committed).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from html import escape
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from cofe.monitor._assemble import TraceRecord
from cofe.monitor._canary import series_of
from cofe.monitor._charts import Line, Marker, Point, line_chart
from cofe.monitor._collector import check_binding, is_loopback, token_ok
from cofe.monitor._sql import (
    POSTGRES_SCHEMES,
    StoreError,
    connect,
    in_slices,
    placeholders,
    shown_location,
)
from cofe.monitor._store import CANARY, STORE_SCHEMA_VERSION, TRAFFIC, MonitorStore
from cofe.report._html import _GOOD, _STYLE, CHUNK_CHARS, _highlight

DEFAULT_PORT = 8765
RANGES = {"1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400,
          "all": None}  # fmt: skip
DEFAULT_RANGE = "24h"
PAGE_SIZE = 50  # traces or cases per page of a drill-down
MAX_TRACES = 20_000  # traces of one window a drill-down reads (the first, by start time)
MAX_ALERTS = 200  # alert rows shown on the overview
MAX_ROUNDS = 50  # canary rounds listed on the overview
STAGE_TITLES = {"all": "Whole traces", "parse": "Parse", "chunking": "Chunking",
                "retrieval": "Retrieval", "reranking": "Reranking", "generation": "Generation"}  # fmt: skip
STEP_ORDER = ("parse", "corpus", "pool", "context", "answer")
VERDICTS = "verdicts"  # the canary step holding verdict shares (``cofe.monitor._canary``)
JUDGED = {"Faithfulness": "judged share: the answer's claims supported by the context",
          "AnswerRelevancy": "judged share: how well the answer addresses the query"}  # fmt: skip

CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")  # fmt: skip
_SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}

_EXTRA_STYLE = """
header .sub{color:#cbd5e0;font-size:12px}nav{margin:10px 0;font-size:13px}
nav a,.filters a{margin-right:10px}nav .on,.filters .on{font-weight:bold;color:#1a202c;
text-decoration:none}a{color:#2b6cb0}.fig{margin:0;width:360px}.fig.wide{width:540px}.fig figcaption{padding:0 6px}
h3{font-size:15px;margin:14px 0 6px}.case .verdict.good{background:#c6f6d5}
.badge{display:inline-block;padding:0 5px;margin-right:4px;border-radius:4px;
background:#edf2f7;font-size:11.5px}.badge.bad{background:#fed7d7}
.badge.value{background:#bee3f8}.err{color:#9b2c2c}.sev-critical{color:#9b2c2c;
font-weight:bold}.sev-warning{color:#b7791f;font-weight:bold}
table.rows td,table.rows th{text-align:left;vertical-align:top}
table.rows td.num{text-align:right;white-space:nowrap}.nowrap{white-space:nowrap}
.examples li{margin:2px 0}tr.hl td{background:#fefcbf}.empty{color:#718096;font-style:italic}
svg.chart a circle.pt:hover{r:6}svg.chart a{cursor:pointer}.chunk .muted{font-size:11.5px}
"""
STYLE = _STYLE + _EXTRA_STYLE
ICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" '
        'height="16" rx="3" fill="#1a365d"/><polyline points="2,12 6,7 9,9 14,3" fill="none" '
        'stroke="#fff" stroke-width="2"/></svg>')  # fmt: skip


class BadRequest(ValueError):
    """A parameter that cannot be read (answered 400; the value is not repeated)."""


class NotFound(LookupError):
    pass


# --- the store, read-only -----------------------------------------------------------------------


def _table_names(db: Any) -> set[str]:
    if db.engine == "sqlite":
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    else:
        rows = db.execute("SELECT table_name FROM information_schema.tables "
                          "WHERE table_schema = current_schema()")  # fmt: skip
    return {r[0] for r in rows}


def open_read_only(location: str) -> MonitorStore:
    """The store at ``location``, opened so that nothing can write through it. A store
    that does not exist, is not one, or is at another schema version is refused (opening
    it as a ``MonitorStore`` would create or migrate it: a write)."""
    location = str(location)
    shown = shown_location(location)
    if not location.startswith(POSTGRES_SCHEMES) and not Path(location).is_file():
        raise StoreError(f"{shown}: no monitoring store there (the dashboard only reads one; "
                         "`cofe monitor collect` or `import` makes it)")  # fmt: skip
    db = connect(location)
    try:
        if "cofe_meta" not in _table_names(db):
            raise StoreError(f"{shown}: not a cofe monitoring store (no cofe_meta table)")
        rows = db.execute("SELECT value FROM cofe_meta WHERE key = 'schema_version'")
        version = int(rows[0][0]) if rows else 0
    finally:
        db.close()
    if version > STORE_SCHEMA_VERSION:
        raise StoreError(f"{shown}: store schema version {version} was written by a newer cofe "
                         f"(this one reads up to {STORE_SCHEMA_VERSION}); upgrade cofe")  # fmt: skip
    if version < STORE_SCHEMA_VERSION:
        raise StoreError(f"{shown}: store schema version {version} is older than this cofe's "
                         f"({STORE_SCHEMA_VERSION}); the dashboard does not migrate it -- run "
                         "`cofe monitor status` once to migrate it")  # fmt: skip
    store = MonitorStore(location)
    try:
        if store.db.engine == "sqlite":
            store.db.execute("PRAGMA query_only = ON")
        else:
            store.db.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    except BaseException:
        store.close()
        raise
    return store


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


def _a(href: str, text: str, cls: str = "") -> str:
    attr = f" class='{cls}'" if cls else ""
    return f"<a href='{escape(href)}'{attr}>{escape(text)}</a>"


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
    from cofe.monitor._signals import SIGNALS

    return {(s.stage, s.name): s for s in SIGNALS}


def _description(stage: str, name: str) -> str:
    signal = _signals().get((stage, name))
    if signal is not None:
        return str(getattr(signal, "description", ""))
    if name == "OtherTraces":
        return "traces with no retriever, reranker or LLM span (index building, ...)"
    return JUDGED.get(name, "")


# --- queries the store has no method for -------------------------------------------------------------


def _extent(store: MonitorStore) -> tuple[int | None, int | None]:
    """The first and last instants anything was recorded at (series, rounds, alerts)."""
    rows = [
        store.db.execute("SELECT MIN(start_ns), MAX(start_ns) FROM series WHERE origin = ? "
                         "AND window_ns = ?", [TRAFFIC, store.window_ns])[0],
        store.db.execute("SELECT MIN(started_ns), MAX(started_ns) FROM canary_rounds")[0],
        store.db.execute("SELECT MIN(window_start_ns), MAX(window_start_ns) FROM alerts")[0],
    ]  # fmt: skip
    firsts = [int(r[0]) for r in rows if r[0] is not None]
    lasts = [int(r[1]) for r in rows if r[1] is not None]
    return (min(firsts) if firsts else None, max(lasts) if lasts else None)


def _alerts(store: MonitorStore, start: int, end: int) -> list[dict[str, Any]]:
    keys = ("alert_id", "rule", "fired_ns", "origin", "stage", "measure", "severity",
            "window_start_ns", "window_end_ns", "baseline", "current", "ci_low", "ci_high",
            "p_value", "message", "examples")  # fmt: skip
    rows = store.db.execute(
        f"SELECT {', '.join(keys)} FROM alerts WHERE (fired_ns >= ? AND fired_ns < ?) OR "
        "(window_start_ns >= ? AND window_start_ns < ?) ORDER BY fired_ns DESC, alert_id "
        f"LIMIT {MAX_ALERTS}", [start, end, start, end])  # fmt: skip
    return [dict(zip(keys, r, strict=True)) for r in rows]


def _rounds(store: MonitorStore, start: int, end: int) -> list[tuple]:
    return store.db.execute(
        "SELECT round_id, started_ns, finished_ns, samples, answered FROM canary_rounds "
        "WHERE started_ns >= ? AND started_ns < ? ORDER BY started_ns DESC", [start, end])  # fmt: skip


def _verdict_counts(store: MonitorStore, round_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for part in in_slices(list(round_ids)):
        for round_id, verdict, n in store.db.execute(
                "SELECT round_id, verdict, COUNT(*) FROM canary_cases WHERE round_id IN "
                f"({placeholders(len(part))}) GROUP BY round_id, verdict", part):  # fmt: skip
            out.setdefault(round_id, {})[verdict] = int(n)
    return out


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


def with_zero_shares(rows: list[dict], canary: list[dict]) -> list[dict]:
    """Verdict shares with a 0 for each round (of ``canary``) in which a verdict of ``rows``
    did not occur: the store keeps only the verdicts a round had."""
    rounds = {r["round_id"]: r for r in canary if r["step"] == VERDICTS}
    have = {(r["round_id"], r["measure"]) for r in rows}
    out = list(rows)
    for measure in sorted({r["measure"] for r in rows}):
        stage = measure.rpartition("@")[2]
        for round_id, any_row in rounds.items():
            if (round_id, measure) not in have:
                out.append({**any_row, "measure": measure, "series": measure, "stage": stage,
                            "value": 0.0, "unscored": 0})  # fmt: skip
    return sorted(out, key=lambda r: (r["start_ns"], r["measure"]))


# --- pages ---------------------------------------------------------------------------------------


def _page(title: str, subtitle: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title>"
        "<link rel='stylesheet' href='./static/dashboard.css'>"
        "<link rel='icon' href='./favicon.svg' type='image/svg+xml'></head><body>"
        f"<header><h1>{escape(title)}</h1><div class='sub'>{subtitle}</div></header>"
        f"<main>{body}</main></body></html>\n"
    )


class _Params:
    def __init__(self, query: str) -> None:
        self.values = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.values.get(name)
        return value if value not in (None, "") else default

    def integer(self, name: str, default: int | None = None, minimum: int = 0) -> int | None:
        value = self.values.get(name)
        if value in (None, ""):
            return default
        try:
            number = int(value)  # type: ignore[arg-type]
        except ValueError:
            raise BadRequest(f"the parameter {name} must be an integer") from None
        if number < minimum or number >= 2**63:
            raise BadRequest(f"the parameter {name} is out of range")
        return number


class Pages:
    """The HTML of every page, from one open store."""

    def __init__(self, store: MonitorStore) -> None:
        self.store = store

    @property
    def window_ns(self) -> int:
        return self.store.window_ns

    def _subtitle(self) -> str:
        minutes = self.store.window_seconds / 60
        window = f"{minutes:g} min" if minutes >= 1 else f"{self.store.window_seconds} s"
        return (
            f"store {escape(shown_location(self.store.location))} · {window} windows · "
            f"read-only · times in UTC · rendered {escape(utc(time.time_ns()))}"
        )

    # --- overview ---------------------------------------------------------------------------

    def overview(self, params: _Params) -> str:
        store = self.store
        first, last = _extent(store)
        name = params.text("range") or _fitting_range(first, last)
        if name not in RANGES:
            raise BadRequest(f"range must be one of {', '.join(RANGES)}")
        latest = last if last is not None else store.window_of(time.time_ns())
        until = params.integer("until") or (store.window_of(latest) + self.window_ns)
        span = RANGES[name]
        if span is None:
            start = store.window_of(min(first if first is not None else until,
                                        until - self.window_ns))  # fmt: skip
        else:
            start = until - span * 1_000_000_000
        traffic = store.series(origin=TRAFFIC, since_ns=start, until_ns=until)
        # one series per stage, step and measure, whatever its cutoff in each round
        canary = series_of([r for r in store.canary_series(since_ns=start)
                            if r["start_ns"] < until])  # fmt: skip
        alerts = _alerts(store, start, until)
        alert_count = int(store.db.execute(
            "SELECT COUNT(*) FROM alerts WHERE (fired_ns >= ? AND fired_ns < ?) OR "
            "(window_start_ns >= ? AND window_start_ns < ?)", [start, until, start, until])[0][0])  # fmt: skip
        nav = self._range_nav(name, start, until, params.integer("until") is not None)
        stages = self._stage_sections(traffic, canary, alerts, (start, until))
        body = [nav, self._summary(start, until, traffic, canary, alert_count),
                self._alerts_section(alerts, alert_count), self._canary_overview(canary, alerts, (start, until)),
                *stages]  # fmt: skip
        if not traffic and not canary:
            body.insert(2, "<section><p class='empty'>Nothing recorded in this range. Traces "
                           "arrive through <code>cofe monitor collect</code> (or "
                           "<code>import</code>); their windows are computed by the collector; "
                           "canary rounds come from <code>cofe monitor canary</code>.</p>"
                           "</section>")  # fmt: skip
        title = f"cofe monitor · {utc(start)} – {utc(until)} UTC"
        return _page(title, self._subtitle(), "".join(body))

    def _range_nav(self, name: str, start: int, until: int, pinned: bool) -> str:
        links = []
        for key in RANGES:
            cls = "on" if key == name else ""  # (the fitted default is marked too)
            links.append(_a(_href("", range=key, until=until if pinned else None), key, cls))
        span = until - start
        older = _a(_href("", range=name, until=until - span), "← earlier")
        newer = _a(_href("", range=name, until=until + span), "later →")
        latest = _a(_href("", range=name), "latest")
        sections = " ".join(_a(f"#{anchor}", text) for anchor, text in (
            ("alerts", "alerts"), ("canary", "canaries"), *((f"stage-{s}", t.lower())
                                                          for s, t in STAGE_TITLES.items())))  # fmt: skip
        return (
            f"<nav>range: {' '.join(links)} · {older} {newer} {latest}<br>jump to: {sections}</nav>"
        )

    def _summary(self, start: int, until: int, traffic: list[dict], canary: list[dict],
                 alert_count: int) -> str:  # fmt: skip
        store = self.store
        counts = store.counts()
        pending = int(store.db.execute("SELECT COUNT(*) FROM dirty_windows")[0][0])
        windows = len({r["start_ns"] for r in traffic})
        in_range = sum(int(r["value"] or 0) for r in traffic
                       if r["stage"] == "all" and r["signal"] == "Traces")  # fmt: skip
        rounds = len({r["round_id"] for r in canary})
        rows = [
            ["query traces in range", f"{in_range:,} in {windows:,} windows"],
            ["canary rounds in range", f"{rounds:,}"],
            ["alerts in range", f"{alert_count:,}"],
            ["store", f"{counts['traces']:,} traces ({counts['traces_with_problems']:,} with "
                      f"problems), {counts['spans']:,} spans, {counts['chunks']:,} chunks, "
                      f"{counts['canary_rounds']:,} canary rounds"],
        ]  # fmt: skip
        if pending:
            rows.append(["windows awaiting computation",
                         f"{pending:,} (the collector computes them every few seconds; "
                         "this page shows them once it has)"])  # fmt: skip
        problems = sorted(
            store.problem_counts(origin=TRAFFIC, since_ns=start, until_ns=until).items(),
            key=lambda kv: -kv[1],
        )
        table = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
        out = f"<section id='summary'><h2>Summary</h2><table class='rows'>{table}</table>"
        if problems:
            items = "".join(f"<tr><td>{escape(k)}</td><td class='num'>{n:,}</td></tr>"
                            for k, n in problems[:8])  # fmt: skip
            out += ("<h3>Why traces in range are incomplete</h3><table class='rows'><tr>"
                    f"<th>problem</th><th>traces</th></tr>{items}</table>")  # fmt: skip
        return out + "</section>"

    # --- alerts -----------------------------------------------------------------------------

    def _alerts_section(self, alerts: list[dict], count: int) -> str:
        if not alerts:
            return ("<section id='alerts'><h2>Alert history</h2><p class='empty'>No alert in "
                    "this range.</p></section>")  # fmt: skip
        rows = []
        for a in alerts:
            kind = _kind(a["stage"], a["measure"])
            change = f"{fmt_value(kind, a['baseline'])} → {fmt_value(kind, a['current'])}"
            if a["baseline"] is None:
                change = fmt_value(kind, a["current"])
            if a["ci_low"] is not None and a["ci_high"] is not None:
                change += (f"<br><span class='muted'>95 % CI [{a['ci_low']:+.3g}, "
                           f"{a['ci_high']:+.3g}]</span>")  # fmt: skip
            if a["p_value"] is not None:
                change += f"<br><span class='muted'>p = {a['p_value']:.2g}</span>"
            severity = str(a["severity"])
            rows.append(
                f"<tr id='alert-{escape(_slug(str(a['alert_id'])))}'>"
                f"<td class='nowrap'>{escape(utc(a['fired_ns']))}</td>"
                f"<td class='sev-{escape(_slug(severity))}'>{escape(severity)}</td>"
                f"<td>{escape(str(a['rule']))}<br><span class='muted'>{escape(str(a['origin']))}"
                f"</span></td><td>{escape(str(a['stage']))}<br><b>{escape(str(a['measure']))}"
                f"</b></td><td class='nowrap'>{change}</td>"
                f"<td class='nowrap'>{self._alert_window(a)}</td>"
                f"<td>{escape(str(a['message']))}</td><td>{self._examples(a['examples'])}</td></tr>"
            )  # fmt: skip
        head = "".join(f"<th>{h}</th>" for h in ("fired", "severity", "rule", "stage · measure",
                                                   "baseline → current", "window", "message",
                                                   "examples"))  # fmt: skip
        more = (f"<p class='muted'>the latest {len(alerts)} of {count:,} alerts in this range"
                "</p>" if count > len(alerts) else "")  # fmt: skip
        return (f"<section id='alerts'><h2>Alert history</h2><table class='rows alerts'>"
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"
                "</section>")  # fmt: skip

    def _alert_window(self, a: dict) -> str:
        start, end = int(a["window_start_ns"]), int(a["window_end_ns"])
        label = f"{utc(start)}–{_hm(end)}"
        if a["origin"] == CANARY:
            rounds = self.store.db.execute(
                "SELECT round_id FROM canary_rounds WHERE started_ns >= ? AND started_ns <= ? "
                "ORDER BY started_ns", [start, end])  # fmt: skip
            if rounds:
                return "<br>".join(_a(_href("round", id=r[0]), f"round {r[0]}") for r in rounds[:3])
            return escape(label)
        signal = f"{a['stage']}/{a['measure']}"
        return _a(_href("window", origin=a["origin"], start=start,
                        end=end if end != start + self.window_ns else None, signal=signal), label)  # fmt: skip

    def _examples(self, raw: Any) -> str:
        try:
            examples = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            return f"<span class='muted'>{escape(str(raw)[:300])}</span>"
        if not isinstance(examples, list) or not examples:
            return "<span class='muted'>–</span>"
        items = []
        for ex in examples[:10]:
            if not isinstance(ex, dict):
                items.append(f"<li>{escape(str(ex)[:300])}</li>")
                continue
            if ex.get("round_id") and ex.get("sample_id"):
                link = _a(_href("round", id=ex["round_id"]) + f"#case-{_slug(str(ex['sample_id']))}",
                          f"case {ex['sample_id']}")  # fmt: skip
            elif ex.get("trace_id"):
                link = _a(_href("trace", id=ex["trace_id"]), f"trace {str(ex['trace_id'])[:12]}")
            else:
                link = ""
            shown = {k: v for k, v in ex.items() if k not in ("round_id", "sample_id", "trace_id")
                     and v not in (None, "", [], {})}  # fmt: skip
            query = shown.pop("query", None)
            rest = "; ".join(f"{k}: {v if isinstance(v, str) else json.dumps(v)}"
                             for k, v in shown.items())  # fmt: skip
            text = (f" <i>{escape(str(query)[:200])}</i>" if query else "") + (
                f" <span class='muted'>{escape(rest[:400])}</span>" if rest else "")  # fmt: skip
            items.append(f"<li>{link}{text}</li>")
        more = f"<li class='muted'>and {len(examples) - 10} more</li>" if len(examples) > 10 else ""
        return (
            f"<details><summary>{len(examples)} example(s)</summary><ul class='examples'>"
            f"{''.join(items)}{more}</ul></details>"
        )

    # --- charts -----------------------------------------------------------------------------

    def _figure(self, chart_id: str, svg: str, caption: str = "", wide: bool = False) -> str:
        cap = f"<figcaption class='muted'>{escape(caption)}</figcaption>" if caption else ""
        cls = "fig wide" if wide else "fig"
        return f"<figure class='{cls}' id='{escape(chart_id)}'>{svg}{cap}</figure>"

    def _traffic_charts(self, stage: str, rows: list[dict], alerts: list[dict],
                        x_range: tuple[int, int]) -> tuple[list[str], list[str]]:  # fmt: skip
        """A chart per signal (percentiles of one value together) of the stage; and the
        signals with no value in any window of the range, with why."""
        groups: dict[str, dict[str, list[dict]]] = {}
        for r in rows:
            groups.setdefault(_signal_group(r["signal"]), {}).setdefault(r["signal"], []).append(r)
        order = {name: i for i, (s, name) in enumerate(_signals()) if s == stage}
        charts, empty = [], []
        for group, by_signal in sorted(groups.items(), key=lambda kv: min(
                order.get(s, 999) for s in kv[1])):  # fmt: skip
            names = sorted(by_signal, key=lambda s: (order.get(s, 999), s))
            if all(r["value"] is None for rows_ in by_signal.values() for r in rows_):
                notes = sorted({r["note"] for rows_ in by_signal.values() for r in rows_
                                if r["note"]})  # fmt: skip
                empty.append(f"{', '.join(names)} ({'; '.join(notes) or 'no value'})")
                continue
            kind = _kind(stage, names[0])
            lines = []
            for signal in names:
                points = []
                for r in by_signal[signal]:
                    when = f"{utc(r['start_ns'])}–{_hm(r['start_ns'] + self.window_ns)}"
                    tip = (f"{signal} · {when}: {fmt_value(kind, r['value'])} (n={r['n']})"
                           if r["value"] is not None else f"{signal} · {when}: {r['note'] or 'no value'}")  # fmt: skip
                    href = _href("window", origin=TRAFFIC, start=r["start_ns"],
                                 signal=f"{stage}/{signal}")  # fmt: skip
                    points.append(Point(r["start_ns"], r["value"], href, tip))
                lines.append(Line(signal, points))
            markers = [Marker(a["window_start_ns"], f"#alert-{_slug(str(a['alert_id']))}",
                              f"{a['severity']}: {a['message']}")
                       for a in alerts if a["origin"] == TRAFFIC and a["stage"] == stage
                       and a["measure"] in by_signal]  # fmt: skip
            title = (
                group
                if len(names) == 1
                else f"{group} ({', '.join(n[len(group) :] or 'mean' for n in names)})"
            )
            title += {"seconds": ", s", "share": ", %"}.get(kind, "")
            svg = line_chart(lines, title=title, x_range=x_range, gap_ns=self.window_ns,
                             share=kind == "share", unit_range=kind == "unit",
                             fmt=lambda v, k=kind: fmt_value(k, v), markers=markers)  # fmt: skip
            caption = "; ".join(dict.fromkeys(_description(stage, n) for n in names if
                                              _description(stage, n)))  # fmt: skip
            charts.append(
                self._figure(f"chart-traffic-{_slug(stage)}-{_slug(group)}", svg, caption)
            )
        return charts, empty

    def _canary_lines(self, rows: list[dict], label: Callable[[dict], str],
                      href: Callable[[dict], str], kind: str) -> list[Line]:  # fmt: skip
        lines: dict[str, Line] = {}
        for r in rows:
            name = label(r)
            if r["value"] is not None:
                tip = (f"{r['measure']} at {r['step']} · round {r['round_id']} "
                       f"({utc(r['start_ns'])}): {fmt_value(kind, r['value'])} (n={r['n']})")  # fmt: skip
            else:
                tip = (f"{r['measure']} at {r['step']} · round {r['round_id']}: not scored "
                       f"({r['unscored']} sample(s) unscored)")  # fmt: skip
            lines.setdefault(name, Line(name)).points.append(Point(r["start_ns"], r["value"],
                                                                   href(r), tip))  # fmt: skip
        return list(lines.values())

    def _round_href(self, r: dict) -> str:
        if r["step"] == VERDICTS:
            verdict, _, stage = r["measure"].rpartition("@")
            return _href("round", id=r["round_id"], verdict=verdict, stage=stage)
        return _href("round", id=r["round_id"])

    def _canary_charts(self, stage: str, rows: list[dict], alerts: list[dict],
                       x_range: tuple[int, int]) -> tuple[list[str], list[str]]:  # fmt: skip
        """A chart per step and measure family of the stage, and its verdict shares; the
        names of measures with no value in any round."""
        charts, unscored = [], []
        steps: dict[str, dict[str, list[dict]]] = {}
        for r in rows:
            family = r["measure"].split("@")[0] if r["step"] != VERDICTS else VERDICTS
            steps.setdefault(r["step"], {}).setdefault(family, []).append(r)
        rank = {s: i for i, s in enumerate(STEP_ORDER)}
        stage_alerts = [a for a in alerts if a["origin"] == CANARY and a["stage"] == stage]
        for step in sorted(steps, key=lambda s: (s == VERDICTS, rank.get(s, 99), s)):
            for family, family_rows in sorted(steps[step].items()):
                if all(r["value"] is None for r in family_rows):
                    unscored += sorted({f"{r['measure']} at {step}" for r in family_rows})
                    continue
                if step == VERDICTS:
                    lines = self._canary_lines(family_rows, lambda r: r["measure"].rpartition("@")[0],
                                               self._round_href, "share")  # fmt: skip
                    title = f"verdicts blamed on {stage}, share of samples"
                    kind, chart_id = "share", f"chart-canary-verdicts-{_slug(stage)}"
                    measures = {r["measure"] for r in family_rows}
                    wanted = [a for a in stage_alerts if "@" in a["measure"]]
                else:  # a line per series: a new cutoff continues its line (on the point)
                    kind = "unit"
                    lines = self._canary_lines(family_rows, lambda r: r["series"],
                                               self._round_href, kind)  # fmt: skip
                    title = f"{family} at {step}"
                    chart_id = f"chart-canary-{_slug(stage)}-{_slug(step)}-{_slug(family)}"
                    measures = {r["measure"] for r in family_rows}
                    wanted = [a for a in stage_alerts if a["measure"] in measures]
                markers = [Marker(a["window_start_ns"], f"#alert-{_slug(str(a['alert_id']))}",
                                  f"{a['severity']}: {a['message']}") for a in wanted]  # fmt: skip
                svg = line_chart(lines, title=title, x_range=x_range, share=kind == "share",
                                 unit_range=kind == "unit", fmt=lambda v, k=kind: fmt_value(k, v),
                                 markers=markers, legend=True)  # fmt: skip
                caption = (
                    "click a point: the round's cases with that verdict"
                    if step == VERDICTS
                    else "per canary round; click a point: its cases"
                )
                charts.append(self._figure(chart_id, svg, caption))
        return charts, unscored

    def _canary_overview(self, canary: list[dict], alerts: list[dict],
                         x_range: tuple[int, int]) -> str:  # fmt: skip
        if not canary:
            return ("<section id='canary'><h2>Canaries</h2><p class='empty'>No canary round in "
                    "this range (<code>cofe monitor canary</code> runs them).</p></section>")  # fmt: skip
        # KeywordRecall through the pipeline: one line per step, each round's widest cutoff
        # of the step (a new top-k continues the line; each point names its cutoff)
        rank = {s: i for i, s in enumerate(STEP_ORDER)}
        recall_rows = sorted((r for r in canary if r["series"] == "KeywordRecall"
                              and r["step"] != VERDICTS),
                             key=lambda r: rank.get(r["step"], 99))  # fmt: skip
        charts = []
        if recall_rows:
            lines = self._canary_lines(recall_rows, lambda r: r["step"], self._round_href,
                                       "unit")  # fmt: skip
            svg = line_chart(lines, title="KeywordRecall at each step", x_range=x_range,
                             unit_range=True, fmt=lambda v: fmt_value("unit", v), width=540)  # fmt: skip
            charts.append(self._figure("chart-canary-recall", svg, "share of information points "
                                       "still present after each step, per round", wide=True))  # fmt: skip
        verdict_rows = with_zero_shares([r for r in canary if r["step"] == VERDICTS], canary)
        if verdict_rows:
            lines = self._canary_lines(verdict_rows, lambda r: r["measure"], self._round_href,
                                       "share")  # fmt: skip
            markers = [Marker(a["window_start_ns"], f"#alert-{_slug(str(a['alert_id']))}",
                              f"{a['severity']}: {a['message']}")
                       for a in alerts if a["origin"] == CANARY and "@" in a["measure"]]  # fmt: skip
            svg = line_chart(lines, title="Verdicts per round (verdict@stage), share of samples",
                             x_range=x_range, share=True, fmt=lambda v: fmt_value("share", v),
                             markers=markers, width=540)  # fmt: skip
            charts.append(self._figure("chart-canary-verdicts", svg,
                                       "click a point: that round's cases with that verdict",
                                       wide=True))  # fmt: skip
        rounds = _rounds(self.store, *x_range)
        counts = _verdict_counts(self.store, [r[0] for r in rounds[:MAX_ROUNDS]])
        rows = []
        for round_id, started, finished, samples, answered in rounds[:MAX_ROUNDS]:
            verdicts = counts.get(round_id, {})
            total = sum(verdicts.values())
            good = sum(n for v, n in verdicts.items() if v in _GOOD)
            bad = ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items(), key=lambda kv: -kv[1])
                            if v not in _GOOD)  # fmt: skip
            rows.append(f"<tr><td>{_a(_href('round', id=round_id), round_id)}</td>"
                        f"<td class='nowrap'>{escape(utc(started, True))}</td>"
                        f"<td class='num'>{(finished - started) / 1e9:.1f} s</td>"
                        f"<td class='num'>{answered}/{samples}</td>"
                        f"<td class='num'>{fmt_value('share', good / total if total else None)}</td>"
                        f"<td>{escape(bad) or '–'}</td></tr>")  # fmt: skip
        table = ("<table class='rows'><thead><tr><th>round</th><th>started</th><th>took</th>"
                 "<th>answered</th><th>passed</th><th>lost (verdict: samples)</th></tr></thead>"
                 f"<tbody>{''.join(rows)}</tbody></table>")  # fmt: skip
        more = (f"<p class='muted'>the latest {MAX_ROUNDS} of {len(rounds)} rounds</p>"
                if len(rounds) > MAX_ROUNDS else "")  # fmt: skip
        return (
            f"<section id='canary'><h2>Canaries</h2><div class='charts'>{''.join(charts)}"
            f"</div><h3>Rounds</h3>{table}{more}</section>"
        )

    def _stage_sections(self, traffic: list[dict], canary: list[dict], alerts: list[dict],
                        x_range: tuple[int, int]) -> list[str]:  # fmt: skip
        stages = list(STAGE_TITLES)
        for r in traffic + canary:
            if r["stage"] not in stages and r["stage"] != "none":
                stages.append(r["stage"])
        minutes = self.store.window_seconds / 60
        window = f"{minutes:g}-min" if minutes >= 1 else f"{self.store.window_seconds}-s"
        out = []
        for stage in stages:
            rows_t = [r for r in traffic if r["stage"] == stage]
            rows_c = [r for r in canary if r["stage"] == stage]
            if any(r["step"] == VERDICTS for r in rows_c):
                rows_c = [r for r in rows_c if r["step"] != VERDICTS] + with_zero_shares(
                    [r for r in rows_c if r["step"] == VERDICTS], canary)  # fmt: skip
            if not rows_t and not rows_c:
                continue
            parts = [
                f"<section id='stage-{_slug(stage)}'><h2>{escape(STAGE_TITLES.get(stage, stage))}</h2>"
            ]
            if rows_t:
                charts, empty = self._traffic_charts(stage, rows_t, alerts, x_range)
                parts.append(f"<h3>Traffic · label-free signals per {window} window</h3>"
                             f"<div class='charts'>{''.join(charts)}</div>")  # fmt: skip
                if empty:
                    parts.append(f"<p class='muted'>No value in any window of this range: "
                                 f"{escape('; '.join(empty))}.</p>")  # fmt: skip
            if rows_c:
                charts, unscored = self._canary_charts(stage, rows_c, alerts, x_range)
                parts.append(f"<h3>Canaries · measures per round</h3><div class='charts'>"
                             f"{''.join(charts)}</div>")  # fmt: skip
                if unscored:
                    parts.append(f"<p class='muted'>Not scored in any round of this range: "
                                 f"{escape(', '.join(unscored))}.</p>")  # fmt: skip
            parts.append("</section>")
            out.append("".join(parts))
        return out

    # --- one traffic window ------------------------------------------------------------------

    FLAGS = ("error", "problems", "empty-pool", "empty-context", "top1-dropped", "refusal",
             "empty-answer", "not-a-query")  # fmt: skip

    @staticmethod
    def flags(t: TraceRecord) -> list[str]:
        from cofe.diagnose import is_refusal

        out = []
        if not t.is_query:
            return ["not-a-query"]
        if t.error_stage is not None:
            out.append("error")
        if t.problems:
            out.append("problems")
        if t.pool is not None and not t.pool and t.error_stage is None:
            out.append("empty-pool")
        if t.context is not None and not t.context and t.error_stage is None:
            out.append("empty-context")
        if t.pool and t.context is not None and t.context and len(t.stages) > 0 and \
                any(s.value == "reranking" for s in t.stages) and \
                t.pool[0].chunk_id not in {d.chunk_id for d in t.context}:  # fmt: skip
            out.append("top1-dropped")
        if t.answer is not None:
            if not t.answer.strip():
                out.append("empty-answer")
            elif is_refusal(t.answer):
                out.append("refusal")
        return out

    def window(self, params: _Params) -> str:
        store = self.store
        origin = params.text("origin", TRAFFIC)
        if origin not in (TRAFFIC, CANARY):
            raise BadRequest("origin must be traffic or canary")
        start = params.integer("start")
        if start is None:
            raise BadRequest("the parameter start (a window's start, in ns) is required")
        end = params.integer("end") or start + self.window_ns
        if end <= start:
            raise BadRequest("end must be after start")
        only = params.text("only")
        if only is not None and only not in self.FLAGS:
            raise BadRequest(f"only must be one of {', '.join(self.FLAGS)}")
        page = params.integer("page", 1, minimum=1) or 1
        signal_name = params.text("signal")
        signal = self._signal(signal_name)

        records = store.traces(start, end, origin=origin, limit=MAX_TRACES + 1)
        cut = len(records) > MAX_TRACES  # a busy service's window: its first MAX_TRACES
        records = records[:MAX_TRACES]
        flagged = [(t, self.flags(t)) for t in records]
        counts: dict[str, int] = {}
        for _, fl in flagged:
            for f in fl:
                counts[f] = counts.get(f, 0) + 1
        chosen = [(t, fl) for t, fl in flagged if only is None or only in fl]
        value_of: dict[str, float | None] = {}
        sort_note = ""
        if signal is not None:
            for t, _ in chosen:
                try:
                    value_of[t.trace_id] = signal.of(t) if t.is_query else None
                except Exception:  # a signal that cannot read this trace: no value
                    value_of[t.trace_id] = None
            worst_high = getattr(signal, "higher_is_better", None) is not True
            chosen.sort(key=lambda tf: (value_of[tf[0].trace_id] is None,
                                        -(value_of[tf[0].trace_id] or 0) if worst_high
                                        else (value_of[tf[0].trace_id] or 0)))  # fmt: skip
            sort_note = (
                f"sorted by each trace's {signal_name} value, "
                f"{'highest' if worst_high else 'lowest'} first"
            )
        pages = max(1, math.ceil(len(chosen) / PAGE_SIZE))
        page = min(page, pages)
        shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        texts = {t.trace_id: t for t in store.traces_by_id([t.trace_id for t, _ in shown],
                                                           with_text=True)}  # fmt: skip

        label = f"{utc(start)}–{_hm(end) if end - start < 86400e9 else utc(end)}"
        what = "Traffic" if origin == TRAFFIC else "Canary traffic"
        parts = [self._window_nav(origin, start, end, signal_name)]
        parts.append(self._window_signals(origin, start, end, signal_name))
        base = {"origin": origin, "start": start, "end": end if end != start + self.window_ns
                else None, "signal": signal_name}  # fmt: skip
        filters = [
            _a(
                _href("window", **base),
                f"{'the first ' if cut else 'all '}{len(records)}",
                "" if only else "on",
            )
        ]
        for f in self.FLAGS:
            if counts.get(f):
                filters.append(_a(_href("window", **base, only=f), f"{f} {counts[f]}",
                                  "on" if only == f else ""))  # fmt: skip
        parts.append(f"<section id='traces'><h2>Traces</h2><div class='filters'>"
                     f"{' '.join(filters)}</div>")  # fmt: skip
        if sort_note:
            parts.append(f"<p class='muted'>{escape(sort_note)}</p>")
        if not chosen:
            parts.append("<p class='empty'>No trace here.</p>")
        for t, fl in shown:
            full = texts.get(t.trace_id, t)
            value = None
            if signal is not None and value_of.get(t.trace_id) is not None:
                kind = _kind(signal.stage, signal.name)
                value = f"{signal.name} {fmt_value(kind if kind != 'share' else 'number', value_of[t.trace_id])}"
            parts.append(self._trace_card(full, fl, value))
        parts.append(self._pager("window", {**base, "only": only}, page, pages, len(chosen)))
        parts.append("</section>")
        return _page(f"{what} window {label} UTC", self._subtitle(), "".join(parts))

    def _signal(self, name: str | None) -> Any:
        if not name:
            return None
        stage, _, signal = name.partition("/")
        found = _signals().get((stage, signal))
        return found if found is not None and callable(getattr(found, "of", None)) else None

    def _window_nav(self, origin: str, start: int, end: int, signal: str | None) -> str:
        span = end - start
        prev = _a(_href("window", origin=origin, start=start - span,
                        end=start if span != self.window_ns else None, signal=signal), "← previous")  # fmt: skip
        nxt = _a(_href("window", origin=origin, start=end,
                       end=end + span if span != self.window_ns else None, signal=signal), "next →")  # fmt: skip
        around = _a(_href("", range="24h", until=self.store.window_of(end) + 12 * 3600 * 10**9),
                    "overview around this time")  # fmt: skip
        return f"<nav>{_a(_href(''), 'overview')} · {around} · {prev} {nxt}</nav>"

    def _window_signals(self, origin: str, start: int, end: int, highlight: str | None) -> str:
        rows = self.store.series(origin=origin, since_ns=start, until_ns=end)
        stage_rank = {name: i for i, name in enumerate(STAGE_TITLES)}
        rows.sort(key=lambda r: (r["start_ns"], stage_rank.get(r["stage"], 99), r["stage"]))
        if not rows:
            return ("<section><h2>Signals</h2><p class='empty'>No series for this window (not "
                    "computed yet, or no trace).</p></section>")  # fmt: skip
        several = len({r["start_ns"] for r in rows}) > 1
        body = []
        for r in rows:
            key = f"{r['stage']}/{r['signal']}"
            cls = " class='hl'" if key == highlight else ""
            kind = _kind(r["stage"], r["signal"])
            when = f"<td class='nowrap'>{escape(utc(r['start_ns']))}</td>" if several else ""
            body.append(f"<tr{cls}>{when}<td>{escape(r['stage'])}</td><td>{escape(r['signal'])}</td>"
                        f"<td class='num'>{escape(fmt_value(kind, r['value']))}</td>"
                        f"<td class='num'>{r['n']}</td><td>{escape(r['note'] or '')}</td></tr>")  # fmt: skip
        head = ("<th>window</th>" if several else "") + (
            "<th>stage</th><th>signal</th><th>value</th><th>n</th><th>note</th>"
        )
        picked = [r for r in rows if f"{r['stage']}/{r['signal']}" == highlight]
        lead = "".join(
            f"<p><b>{escape(r['stage'])} · {escape(r['signal'])}</b>"
            f"{' (' + escape(utc(r['start_ns'])) + ')' if several else ''}: "
            f"{escape(fmt_value(_kind(r['stage'], r['signal']), r['value']))} over {r['n']} "
            f"trace(s){' -- ' + escape(r['note']) if r['note'] else ''}"
            f"<br><span class='muted'>{escape(_description(r['stage'], r['signal']))}</span></p>"
            for r in picked)  # fmt: skip
        return (
            f"<section id='signals'><h2>Signals</h2>{lead}<details>"
            f"<summary>every signal of the window ({len(rows)} values)</summary>"
            f"<table class='rows'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}"
            "</tbody></table></details></section>"
        )

    def _pager(self, path: str, params: dict, page: int, pages: int, total: int) -> str:
        if pages <= 1:
            return ""
        links = []
        for p in range(1, pages + 1):
            if p == page:
                links.append(f"<b>{p}</b>")
            elif p in (1, pages) or abs(p - page) <= 3:
                links.append(_a(_href(path, **params, page=p), str(p)))
            elif links[-1] != "…":
                links.append("…")
        return f"<nav class='pager'>{total} in all, {PAGE_SIZE} a page: {' '.join(links)}</nav>"

    # --- one trace ----------------------------------------------------------------------------

    def _docs(self, docs: Sequence[Any], other: Sequence[Any] | None, other_name: str,
              keywords: Sequence[str] = ()) -> str:  # fmt: skip
        rank_in_other = {d.chunk_id: i for i, d in enumerate(other or (), start=1)}
        out = []
        for i, d in enumerate(docs, start=1):
            bits = [f"#{i}"]
            if d.ref:
                bits.append(str(d.ref))
            if d.score is not None:
                bits.append(f"score {d.score:.4g}")
            if other is not None:
                where = rank_in_other.get(d.chunk_id)
                bits.append(f"{other_name} #{where}" if where else f"not in the {other_name}")
            if d.text is None:
                text = "<span class='empty'>(the trace gave no content for this chunk)</span>"
            else:
                cut = d.text[:CHUNK_CHARS] + ("…" if len(d.text) > CHUNK_CHARS else "")
                text = _highlight(cut, keywords)  # escaped, the keywords in <mark>
            out.append(f"<div class='chunk'><span class='muted'>{escape(' · '.join(bits))}"
                       f"</span>\n{text}</div>")  # fmt: skip
        return "".join(out)

    def _trace_body(self, t: TraceRecord, *, with_query: bool = True,
                    keywords: Sequence[str] = ()) -> str:  # fmt: skip
        parts = []
        if with_query:
            query = (escape(t.query) if t.query is not None
                     else "<span class='empty'>(no query recorded)</span>")  # fmt: skip
            parts.append(f"<div><b>Query:</b> {query}</div>")
        latency = " · ".join(f"{s.value} {t.latency[s]:.3f} s" for s in t.latency)
        total = (t.ended_ns - t.started_ns) / 1e9
        stages = " → ".join(s.value for s in t.stages) or "none"
        parts.append(f"<div class='muted'>trace {escape(t.trace_id)} · {escape(utc(t.started_ns, True))} "
                     f"· stages: {escape(stages)} · {escape(latency + ' · ' if latency else '')}"
                     f"total {total:.3f} s</div>")  # fmt: skip
        if t.error_stage is not None:
            parts.append(f"<div class='err'><b>Error at {escape(t.error_stage.value)}:</b> "
                         f"{escape(t.error or '')}</div>")  # fmt: skip
        if t.problems:
            items = "".join(f"<li>{escape(p)}</li>" for p in t.problems)
            parts.append(f"<div><b>Problems:</b><ul>{items}</ul></div>")
        if t.context is not None:
            parts.append(f"<details open><summary>Context: {len(t.context)} chunk(s), what the "
                         f"generator saw</summary>{self._docs(t.context, t.pool, 'pool', keywords)}"
                         "</details>")  # fmt: skip
        if t.pool is not None:
            parts.append(f"<details><summary>Pool: {len(t.pool)} chunk(s) retrieved</summary>"
                         f"{self._docs(t.pool, t.context, 'context', keywords)}</details>")  # fmt: skip
        if t.answer is not None:
            answer = _highlight(t.answer, keywords) or "<span class='empty'>(empty)</span>"
            parts.append(f"<div><b>Answer:</b> {answer}</div>")
        else:
            parts.append("<div class='empty'>(no answer)</div>")
        return "".join(parts)

    def _trace_card(self, t: TraceRecord, flags: Sequence[str], value: str | None = None) -> str:
        badges = "".join(f"<span class='badge bad'>{escape(f)}</span>" for f in flags)
        if value is not None:
            badges = f"<span class='badge value'>{escape(value)}</span>" + badges
        title = escape((t.query or "(no query)")[:160])
        return (
            f"<div class='case trace' id='trace-{escape(_slug(t.trace_id))}'><h3>{title} "
            f"{badges}</h3>{self._trace_body(t, with_query=len(t.query or '') > 160)}</div>"
        )

    def trace(self, params: _Params) -> str:
        trace_id = params.text("id")
        if trace_id is None:
            raise BadRequest("the parameter id (a trace id) is required")
        t = self.store.trace(trace_id)
        if t is None:
            raise NotFound("no such trace in the store (pruned, or never stored)")
        parts = [f"<nav>{_a(_href(''), 'overview')} · "
                 f"{_a(_href('window', origin=TRAFFIC, start=self.store.window_of(t.started_ns)), 'its window')}</nav>"]  # fmt: skip
        cases = self.store.db.execute("SELECT round_id, sample_id FROM canary_cases WHERE trace_id = ?",
                                      [trace_id])  # fmt: skip
        if cases:
            links = ", ".join(_a(_href("round", id=r) + f"#case-{_slug(s)}", f"round {r}, case {s}")
                              for r, s in cases)  # fmt: skip
            parts.append(f"<p>A canary case: {links}</p>")
        parts.append(self._trace_card(t, self.flags(t)))
        return _page(f"Trace {trace_id}", self._subtitle(), "".join(parts))

    # --- one canary round ---------------------------------------------------------------------

    def round(self, params: _Params) -> str:
        store = self.store
        round_id = params.text("id")
        if round_id is None:
            raise BadRequest("the parameter id (a canary round) is required")
        rows = store.db.execute(
            "SELECT round_id, started_ns, finished_ns, evalset_sha256, pipeline, samples, "
            "answered, run_dir FROM canary_rounds WHERE round_id = ?", [round_id])  # fmt: skip
        if not rows:
            raise NotFound("no such canary round in the store")
        _, started, finished, sha, pipeline, samples, answered, run_dir = rows[0]
        verdict, stage = params.text("verdict"), params.text("stage")
        page = params.integer("page", 1, minimum=1) or 1
        before = store.db.execute("SELECT round_id FROM canary_rounds WHERE started_ns < ? "
                                  "ORDER BY started_ns DESC LIMIT 1", [started])  # fmt: skip
        after = store.db.execute("SELECT round_id FROM canary_rounds WHERE started_ns > ? "
                                 "ORDER BY started_ns LIMIT 1", [started])  # fmt: skip
        nav = [_a(_href(""), "overview"),
               _a(_href("", range="24h", until=store.window_of(started) + 12 * 3600 * 10**9),
                  "overview around this time")]  # fmt: skip
        if before:
            nav.append(_a(_href("round", id=before[0][0], verdict=verdict, stage=stage),
                          "← previous round"))  # fmt: skip
        if after:
            nav.append(_a(_href("round", id=after[0][0], verdict=verdict, stage=stage),
                          "next round →"))  # fmt: skip
        meta = [["started", utc(started, True)], ["took", f"{(finished - started) / 1e9:.1f} s"],
                ["answered", f"{answered} of {samples} samples"], ["pipeline", str(pipeline)],
                ["eval set sha256", str(sha or "–")], ["run folder", str(run_dir or "–")]]  # fmt: skip
        meta_html = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in meta)
        parts = [f"<nav>{' · '.join(nav)}</nav>",
                 f"<section id='round'><h2>Round</h2><table class='rows'>{meta_html}</table>"]  # fmt: skip
        measures = store.db.execute(
            "SELECT step, stage, measure, value, n, unscored FROM canary_measures WHERE "
            "round_id = ? AND step <> ?", [round_id, VERDICTS])  # fmt: skip
        rank = {s: i for i, s in enumerate(STEP_ORDER)}
        measures.sort(key=lambda r: (rank.get(r[0], 99), r[2]))
        body = "".join(
            f"<tr><td>{escape(str(m[0]))}</td><td>{escape(str(m[1]))}</td>"
            f"<td>{escape(str(m[2]))}</td><td class='num'>{escape(fmt_value('unit', m[3]))}</td>"
            f"<td class='num'>{m[4]}</td><td class='num'>{m[5]}</td></tr>" for m in measures)  # fmt: skip
        table = ("<table class='rows'><thead><tr><th>step</th><th>stage</th><th>measure</th>"
                 "<th>mean</th><th>samples</th><th>unscored</th></tr></thead>"
                 f"<tbody>{body}</tbody></table>")  # fmt: skip
        parts.append(f"<details><summary>{len(measures)} measures</summary>{table}</details>"
                     "</section>")  # fmt: skip

        cases = store.db.execute(
            "SELECT sample_id, trace_id, query, verdict, stage, evidence FROM canary_cases "
            "WHERE round_id = ? ORDER BY sample_id", [round_id])  # fmt: skip
        tally: dict[tuple[str, str], int] = {}
        for c in cases:
            key = (c[3], c[4] or "none")
            tally[key] = tally.get(key, 0) + 1
        filters = [_a(_href("round", id=round_id), f"all {len(cases)}",
                      "" if verdict or stage else "on")]  # fmt: skip
        for (v, s), n in sorted(tally.items(), key=lambda kv: (kv[0][0] in _GOOD, -kv[1], kv[0])):
            on = "on" if (v, s) == (verdict, stage) else ""
            filters.append(_a(_href("round", id=round_id, verdict=v, stage=s), f"{v}@{s} {n}", on))
        chosen = [c for c in cases if (verdict is None or c[3] == verdict)
                  and (stage is None or (c[4] or "none") == stage)]  # fmt: skip
        chosen.sort(key=lambda c: (c[3] in _GOOD, c[3], c[0]))
        pages = max(1, math.ceil(len(chosen) / PAGE_SIZE))
        page = min(page, pages)
        shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        traces = {t.trace_id: t for t in store.traces_by_id([c[1] for c in shown if c[1]],
                                                            with_text=True)}  # fmt: skip
        parts.append(f"<section id='cases'><h2>Cases</h2><div class='filters'>"
                     f"{' '.join(filters)}</div>")  # fmt: skip
        if not chosen:
            parts.append("<p class='empty'>No case here.</p>")
        for c in shown:
            parts.append(self._case_card(round_id, c, traces.get(c[1]) if c[1] else None))
        parts.append(self._pager("round", {"id": round_id, "verdict": verdict, "stage": stage},
                                 page, pages, len(chosen)))  # fmt: skip
        parts.append("</section>")
        return _page(f"Canary round {round_id}", self._subtitle(), "".join(parts))

    def _case_card(self, round_id: str, case: tuple, trace: TraceRecord | None) -> str:
        sample_id, _, query, verdict, stage, evidence = case
        try:
            ev = json.loads(evidence)
        except (TypeError, json.JSONDecodeError):
            ev = {"explanation": str(evidence)}
        ev = ev if isinstance(ev, dict) else {"explanation": str(ev)}
        at = f" at {stage}" if stage else ""
        good = " good" if verdict in _GOOD else ""
        points = ev.get("points")
        extra = f" · {points} information point(s)" if points is not None else ""
        parts = [f"<div class='case' id='case-{escape(_slug(str(sample_id)))}'><h3>"
                 f"{escape(str(sample_id))} <span class='verdict{good}'>{escape(str(verdict))}"
                 f"{escape(at)}</span></h3>",
                 f"<div><b>Query:</b> {escape(str(query))}</div>",
                 f"<div><b>Evidence:</b> {escape(str(ev.get('explanation') or ''))}"
                 f"<span class='muted'>{escape(extra)}</span></div>"]  # fmt: skip
        if trace is not None:
            keywords = evidence_keywords(str(ev.get("explanation") or ""))
            parts.append(self._trace_body(trace, with_query=False, keywords=keywords))
        else:
            parts.append("<div class='empty'>(no trace of this case in the store: the sample was "
                         "not answered, or its trace was pruned)</div>")  # fmt: skip
        parts.append("</div>")
        return "".join(parts)


# --- the server ---------------------------------------------------------------------------------


COOKIE_CONTEXT = b"cofe monitor dashboard session"


class Dashboard:
    """The dashboard's HTTP server; ``serve_forever`` blocks, ``start`` runs it in a thread.

    One connection to the store serves every request, one request at a time (pages are
    small reads); a connection that fails is reopened on the next request."""

    def __init__(self, store_location: str, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 token: str | None = None) -> None:  # fmt: skip
        check_binding(host, token)  # before the store is touched
        self.location = str(store_location)
        self.token = token or None
        self._lock = threading.Lock()
        self._store: MonitorStore | None = open_read_only(self.location)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.cookie_name = "cofe_dashboard"
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def version_string(self) -> str:
                return "cofe-dashboard"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # a request line may hold the token (?token=...): nothing is logged

            def do_GET(self) -> None:
                dashboard._handle(self, head=False)

            def do_HEAD(self) -> None:
                dashboard._handle(self, head=True)

            def send_error(self, code: int, message: str | None = None,
                           explain: str | None = None) -> None:  # fmt: skip
                # http.server's own errors (a malformed request line, headers too long)
                # would repeat the request line -- and a token in it: only the status here
                self.close_connection = True
                try:
                    phrase = HTTPStatus(code).phrase
                except ValueError:
                    phrase = "error"
                dashboard._text(self, code, f"{code} {phrase}", head=self.command == "HEAD")

            def __getattr__(self, name: str) -> Any:
                if name.startswith("do_"):  # any other method: 405, not http.server's 501
                    return lambda: dashboard._not_allowed(self)
                raise AttributeError(name)

        family = socket.AF_INET6 if ":" in host else socket.AF_INET

        class Server(ThreadingHTTPServer):
            address_family = family
            daemon_threads = True

        try:
            self.server = Server((host, port), Handler)
        except BaseException:
            self._store.close()
            raise
        self.host = host
        self.port = self.server.server_address[1]
        self.cookie_name = f"cofe_dashboard_{self.port}"  # one per port: cookies ignore ports

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    # --- running ------------------------------------------------------------------------------

    def serve_forever(self) -> None:
        """Serve until ``shutdown`` (or an exception such as KeyboardInterrupt)."""
        # one request at a time is accepted here and handled in its own thread; a loop of
        # our own (not socketserver's serve_forever) so that a shutdown asked for before
        # the loop started is not lost
        self.server.timeout = 0.2
        try:
            while not self._stop.is_set():
                self.server.handle_request()
        finally:
            self.server.server_close()
            with self._lock:
                if self._store is not None:
                    self._store.close()
                    self._store = None

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(target=self.serve_forever, name="cofe-dashboard",
                                        daemon=True)  # fmt: skip
        self._thread.start()
        return self._thread

    def shutdown(self) -> None:
        """Stop serving and close the store."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)
        self.server.server_close()
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    @contextmanager
    def _open_store(self) -> Iterator[MonitorStore]:
        with self._lock:
            if self._store is None:
                self._store = open_read_only(self.location)
            try:
                yield self._store
            except (BadRequest, NotFound):
                raise
            except Exception:
                try:  # the connection may be broken (a restarted server): reopen next time
                    self._store.close()
                finally:
                    self._store = None
                raise

    # --- requests -------------------------------------------------------------------------

    def _session(self) -> str:
        assert self.token is not None
        return hmac.new(self.token.encode(), COOKIE_CONTEXT, hashlib.sha256).hexdigest()

    def _authorized(self, request: BaseHTTPRequestHandler) -> bool:
        if self.token is None:
            return True
        header = request.headers.get("Authorization")
        if header is not None and header.startswith("Bearer "):
            return token_ok(header, self.token)
        try:
            cookies = SimpleCookie(request.headers.get("Cookie") or "")
        except CookieError:
            return False
        morsel = cookies.get(self.cookie_name)
        return morsel is not None and hmac.compare_digest(morsel.value.encode(),
                                                          self._session().encode())  # fmt: skip

    def _host_ok(self, request: BaseHTTPRequestHandler) -> bool:
        """Without a token, only requests naming this machine (no DNS rebinding)."""
        if self.token is not None:
            return True
        host = request.headers.get("Host")
        if host is None:
            return True
        name = host.strip().lower()
        name = (
            name[1 : name.index("]")]
            if name.startswith("[") and "]" in name
            else name.rsplit(":", 1)[0]
        )
        return is_loopback(name) or name == self.host.lower()

    def _not_allowed(self, request: BaseHTTPRequestHandler) -> None:
        request.close_connection = True  # its body, if any, is not read
        self._send(request, 405, "text/plain; charset=utf-8",
                   b"the dashboard is read-only: GET or HEAD\n", head=False,
                   extra={"Allow": "GET, HEAD"})  # fmt: skip

    def _send(self, request: BaseHTTPRequestHandler, status: int, content_type: str, body: bytes,
              *, head: bool, extra: dict[str, str] | None = None) -> None:  # fmt: skip
        request.send_response(status)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        for key, value in {**_SECURITY_HEADERS, **(extra or {})}.items():
            request.send_header(key, value)
        request.end_headers()
        if not head:
            request.wfile.write(body)

    def _text(self, request: BaseHTTPRequestHandler, status: int, message: str, head: bool,
              extra: dict[str, str] | None = None) -> None:  # fmt: skip
        self._send(request, status, "text/plain; charset=utf-8", (message + "\n").encode(),
                   head=head, extra=extra)  # fmt: skip

    def _handle(self, request: BaseHTTPRequestHandler, *, head: bool) -> None:
        parts = urlsplit(request.path)
        path = parts.path
        if not self._host_ok(request):
            return self._text(request, 403, "this dashboard answers only requests for this "
                              f"machine: open {self.url}", head)  # fmt: skip
        params = _Params(parts.query)
        if "token" in params.values and self.token is not None:
            given = params.values["token"]
            if not token_ok(f"Bearer {given}", self.token):
                return self._unauthorized(request, head)
            kept = [(k, v) for k, v in parse_qs(parts.query, keep_blank_values=True).items()
                    if k != "token"]  # fmt: skip
            query = urlencode([(k, x) for k, vs in kept for x in vs])
            location = (path or "/") + (f"?{query}" if query else "")
            cookie = (f"{self.cookie_name}={self._session()}; Path=/; HttpOnly; "
                      "SameSite=Strict")  # fmt: skip
            return self._send(request, 303, "text/plain; charset=utf-8", b"signed in\n",
                              head=head, extra={"Location": location, "Set-Cookie": cookie})  # fmt: skip
        if not self._authorized(request):
            return self._unauthorized(request, head)
        if path == "/static/dashboard.css":
            return self._send(request, 200, "text/css; charset=utf-8", STYLE.encode(), head=head)
        if path in ("/favicon.svg", "/favicon.ico"):
            return self._send(request, 200, "image/svg+xml", ICON.encode(), head=head)
        routes: dict[str, Callable[[Pages, _Params], str]] = {
            "/": Pages.overview, "/window": Pages.window, "/round": Pages.round,
            "/trace": Pages.trace,
        }  # fmt: skip
        render = routes.get(path)
        if render is None:
            return self._text(request, 404, "not found: the pages are /, /window, /round and "
                              "/trace", head)  # fmt: skip
        try:
            with self._open_store() as store:
                html = render(Pages(store), params)
        except BadRequest as error:
            return self._text(request, 400, str(error), head)
        except NotFound as error:
            return self._text(request, 404, str(error), head)
        except StoreError as error:
            print(f"cofe monitor serve: {error}", file=sys.stderr, flush=True)
            return self._text(request, 503, "the store cannot be read now; see the "
                              "dashboard's output", head)  # fmt: skip
        except Exception:
            print("cofe monitor serve: a page failed:\n" + traceback.format_exc(), file=sys.stderr,
                  flush=True)  # fmt: skip
            return self._text(request, 500, "the page failed; see the dashboard's output", head)
        self._send(request, 200, "text/html; charset=utf-8", html.encode(), head=head)

    def _unauthorized(self, request: BaseHTTPRequestHandler, head: bool) -> None:
        self._text(request, 401, "this dashboard needs its token: open /?token=<the token> "
                   "once in the browser (a cookie keeps you signed in), or send "
                   "Authorization: Bearer <the token>", head,
                   extra={"WWW-Authenticate": 'Bearer realm="cofe monitor"'})  # fmt: skip
