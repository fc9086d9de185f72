"""The dashboard's overview: per-stage series, alert history and canary rounds over a
time range (``/``); the base of :class:`~cofe.monitor.web._drilldown.Pages`. Its canary
sections are :class:`~cofe.monitor.web._overview_canary.CanarySections`."""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any

from markupsafe import Markup

from cofe.charts import Line, Marker, Point, line_chart
from cofe.monitor.analysis._canary import series_of
from cofe.monitor.store import (
    CANARY,
    TRAFFIC,
    MonitorStore,
    shown_location,
)
from cofe.monitor.web._dashboard_kit import (
    RANGES,
    STAGE_TITLES,
    VERDICTS,
    BadRequest,
    _alerts,
    _description,
    _extent,
    _fitting_range,
    _hm,
    _href,
    _kind,
    _page,
    _Params,
    _signal_group,
    _signals,
    _slug,
    fmt_value,
    left_out_line,
    utc,
    with_zero_shares,
)
from cofe.monitor.web._overview_canary import CanarySections
from cofe.monitor.web._templates import Link


class OverviewPages(CanarySections):
    """The overview page (``templates/overview.html``), from one open store."""

    def __init__(self, store: MonitorStore) -> None:
        self.store = store

    @property
    def window_ns(self) -> int:
        return self.store.window_ns

    def _subtitle(self) -> str:
        minutes = self.store.window_seconds / 60
        window = f"{minutes:g} min" if minutes >= 1 else f"{self.store.window_seconds} s"
        return (
            f"store {shown_location(self.store.location)} · {window} windows · "
            f"read-only · times in UTC · rendered {utc(time.time_ns())}"
        )

    # --- overview ---------------------------------------------------------------------------

    def overview(self, params: _Params) -> str:
        store = self.store
        extent = _extent(store)
        first, last = extent.first, extent.last
        name = params.text("range") or _fitting_range(first, last)
        if name not in RANGES:
            raise BadRequest(f"range must be one of {', '.join(RANGES)}")
        latest = last if last is not None else store.window_of(time.time_ns())
        until = params.time("until") or (store.window_of(latest) + self.window_ns)
        span = RANGES[name]
        if span is None:
            start = store.window_of(
                min(first if first is not None else until, until - self.window_ns)
            )
        else:
            start = until - span * 1_000_000_000
        traffic = store.windows.series(origin=TRAFFIC, since_ns=start, until_ns=until)
        # one series per stage, step and measure, whatever its cutoff in each round
        canary = series_of(
            [r for r in store.canaries.series(since_ns=start) if r["start_ns"] < until]
        )
        alerts = _alerts(store, start, until)
        alert_count = store.alerts.count(start, until)
        minutes = self.store.window_seconds / 60
        return _page(
            "overview.html",
            f"cofe monitor · {utc(start)} – {utc(until)} UTC",
            self._subtitle(),
            nav=self._range_nav(name, start, until, params.time("until") is not None),
            summary=self._summary(
                start,
                until,
                traffic,
                canary,
                alert_count,
                left_out_line(extent) if span is None else None,
            ),
            empty=not traffic and not canary,
            alerts=self._alerts_section(alerts, alert_count),
            canary=self._canary_overview(canary, alerts, (start, until)),
            stages=self._stage_sections(traffic, canary, alerts, (start, until)),
            window=f"{minutes:g}-min" if minutes >= 1 else f"{self.store.window_seconds}-s",
        )

    def _range_nav(self, name: str, start: int, until: int, pinned: bool) -> dict[str, Any]:
        ranges = [
            Link(
                _href("", range=key, until=until if pinned else None),
                key,
                "on" if key == name else "",
            )  # (the fitted default is marked too)
            for key in RANGES
        ]
        span = until - start
        moves = [
            Link(_href("", range=name, until=until - span), "← earlier"),
            Link(_href("", range=name, until=until + span), "later →"),
            Link(_href("", range=name), "latest"),
        ]
        sections = [
            Link(f"#{anchor}", text)
            for anchor, text in (
                ("alerts", "alerts"),
                ("canary", "canaries"),
                *((f"stage-{s}", t.lower()) for s, t in STAGE_TITLES.items()),
            )
        ]
        return {"ranges": ranges, "moves": moves, "sections": sections}

    def _summary(
        self,
        start: int,
        until: int,
        traffic: list[dict[str, Any]],
        canary: list[dict[str, Any]],
        alert_count: int,
        left_out: str | None = None,
    ) -> dict[str, Any]:
        store = self.store
        counts = store.counts()
        pending = store.windows.pending()
        windows = len({r["start_ns"] for r in traffic})
        in_range = sum(
            int(r["value"] or 0) for r in traffic if r["stage"] == "all" and r["signal"] == "Traces"
        )
        rounds = len({r["round_id"] for r in canary})
        rows = [
            ("query traces in range", f"{in_range:,} in {windows:,} windows"),
            ("canary rounds in range", f"{rounds:,}"),
            ("alerts in range", f"{alert_count:,}"),
            (
                "store",
                f"{counts['traces']:,} traces ({counts['traces_with_problems']:,} with "
                f"problems), {counts['spans']:,} spans, {counts['chunks']:,} chunks, "
                f"{counts['canary_rounds']:,} canary rounds",
            ),
        ]
        if left_out:  # range=all: stamps of a wrong clock, not stretched over
            rows.append(("left out of this range", left_out))
        if pending:
            rows.append(
                (
                    "windows awaiting computation",
                    f"{pending:,} (the collector computes them every few seconds; "
                    "this page shows them once it has)",
                )
            )
        problems = sorted(
            store.traces.problem_counts(origin=TRAFFIC, since_ns=start, until_ns=until).items(),
            key=lambda kv: -kv[1],
        )
        return {"rows": rows, "problems": problems[:8]}

    # --- alerts -----------------------------------------------------------------------------

    def _alerts_section(self, alerts: list[dict[str, Any]], count: int) -> dict[str, Any]:
        rows = []
        for a in alerts:
            kind = _kind(a["stage"], a["measure"])
            change = f"{fmt_value(kind, a['baseline'])} → {fmt_value(kind, a['current'])}"
            if a["baseline"] is None:
                change = fmt_value(kind, a["current"])
            ci = (
                f"95 % CI [{a['ci_low']:+.3g}, {a['ci_high']:+.3g}]"
                if a["ci_low"] is not None and a["ci_high"] is not None
                else None
            )
            severity = str(a["severity"])
            rows.append(
                {
                    "slug": _slug(str(a["alert_id"])),
                    "fired": utc(a["fired_ns"]),
                    "severity": severity,
                    "severity_slug": _slug(severity),
                    "rule": str(a["rule"]),
                    "origin": str(a["origin"]),
                    "stage": str(a["stage"]),
                    "measure": str(a["measure"]),
                    "change": change,
                    "ci": ci,
                    "p": f"p = {a['p_value']:.2g}" if a["p_value"] is not None else None,
                    "window": self._alert_window(a),
                    "message": str(a["message"]),
                    "examples": self._examples(a["examples"]),
                }
            )
        more = (
            f"the latest {len(alerts)} of {count:,} alerts in this range"
            if count > len(alerts)
            else None
        )
        return {"rows": rows, "more": more}

    def _alert_window(self, a: dict[str, Any]) -> dict[str, Any]:
        """Where an alert's window links: its canary rounds, or its traffic window."""
        start, end = int(a["window_start_ns"]), int(a["window_end_ns"])
        label = f"{utc(start)}–{_hm(end)}"
        if a["origin"] == CANARY:
            rounds = self.store.canaries.rounds(since_ns=start, until_ns=end, until_inclusive=True)
            links = [Link(_href("round", id=r.round_id), f"round {r.round_id}") for r in rounds[:3]]
            return {"links": links, "label": label}
        signal = f"{a['stage']}/{a['measure']}"
        href = _href(
            "window",
            origin=a["origin"],
            start=start,
            end=end if end != start + self.window_ns else None,
            signal=signal,
        )
        return {"links": [Link(href, label)], "label": label}

    def _examples(self, raw: Any) -> dict[str, Any]:
        try:
            examples = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            return {"raw": str(raw)[:300], "entries": []}
        if not isinstance(examples, list) or not examples:
            return {"raw": None, "entries": []}
        items: list[dict[str, Any]] = []
        for ex in examples[:10]:
            if not isinstance(ex, dict):
                items.append({"plain": str(ex)[:300]})
                continue
            if ex.get("round_id") and ex.get("sample_id"):
                link = Link(
                    _href("round", id=ex["round_id"]) + f"#case-{_slug(str(ex['sample_id']))}",
                    f"case {ex['sample_id']}",
                )
            elif ex.get("trace_id"):
                link = Link(_href("trace", id=ex["trace_id"]), f"trace {str(ex['trace_id'])[:12]}")
            else:
                link = None
            shown = {
                k: v
                for k, v in ex.items()
                if k not in ("round_id", "sample_id", "trace_id") and v not in (None, "", [], {})
            }
            query = shown.pop("query", None)
            rest = "; ".join(
                f"{k}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in shown.items()
            )
            items.append(
                {
                    "plain": None,
                    "link": link,
                    "query": str(query)[:200] if query else None,
                    "rest": rest[:400] if rest else None,
                }
            )
        return {
            "raw": None,
            "entries": items,
            "count": len(examples),
            "more": len(examples) - 10 if len(examples) > 10 else 0,
        }

    # --- charts -----------------------------------------------------------------------------

    def _figure(
        self, chart_id: str, svg: Markup, caption: str = "", wide: bool = False
    ) -> dict[str, Any]:
        """A chart with its caption (``macros.html``'s ``figure`` writes it)."""
        return {"id": chart_id, "svg": svg, "caption": caption, "wide": wide}

    def _traffic_charts(
        self,
        stage: str,
        rows: list[dict[str, Any]],
        alerts: list[dict[str, Any]],
        x_range: tuple[int, int],
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """A chart per signal (percentiles of one value together) of the stage; and the
        signals with no value in any window of the range, with why."""
        groups: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for r in rows:
            groups.setdefault(_signal_group(r["signal"]), {}).setdefault(r["signal"], []).append(r)
        order = {name: i for i, (s, name) in enumerate(_signals()) if s == stage}
        charts: list[dict[str, Any]] = []
        empty: list[str] = []
        for group, by_signal in sorted(
            groups.items(), key=lambda kv: min(order.get(s, 999) for s in kv[1])
        ):
            names = sorted(by_signal, key=lambda s: (order.get(s, 999), s))
            if all(r["value"] is None for rows_ in by_signal.values() for r in rows_):
                notes = sorted(
                    {r["note"] for rows_ in by_signal.values() for r in rows_ if r["note"]}
                )
                empty.append(f"{', '.join(names)} ({'; '.join(notes) or 'no value'})")
                continue
            kind = _kind(stage, names[0])
            lines = []
            for signal in names:
                points = []
                for r in by_signal[signal]:
                    when = f"{utc(r['start_ns'])}–{_hm(r['start_ns'] + self.window_ns)}"
                    tip = (
                        f"{signal} · {when}: {fmt_value(kind, r['value'])} (n={r['n']})"
                        if r["value"] is not None
                        else f"{signal} · {when}: {r['note'] or 'no value'}"
                    )
                    href = _href(
                        "window", origin=TRAFFIC, start=r["start_ns"], signal=f"{stage}/{signal}"
                    )
                    points.append(Point(r["start_ns"], r["value"], href, tip))
                lines.append(Line(signal, points))
            markers = [
                Marker(
                    a["window_start_ns"],
                    f"#alert-{_slug(str(a['alert_id']))}",
                    f"{a['severity']}: {a['message']}",
                )
                for a in alerts
                if a["origin"] == TRAFFIC and a["stage"] == stage and a["measure"] in by_signal
            ]
            title = (
                group
                if len(names) == 1
                else f"{group} ({', '.join(n[len(group) :] or 'mean' for n in names)})"
            )
            title += {"seconds": ", s", "share": ", %"}.get(kind, "")
            svg = line_chart(
                lines,
                title=title,
                x_range=x_range,
                gap_ns=self.window_ns,
                share=kind == "share",
                unit_range=kind == "unit",
                fmt=partial(fmt_value, kind),
                markers=markers,
            )
            caption = "; ".join(
                dict.fromkeys(_description(stage, n) for n in names if _description(stage, n))
            )
            charts.append(
                self._figure(f"chart-traffic-{_slug(stage)}-{_slug(group)}", svg, caption)
            )
        return charts, empty

    def _stage_sections(
        self,
        traffic: list[dict[str, Any]],
        canary: list[dict[str, Any]],
        alerts: list[dict[str, Any]],
        x_range: tuple[int, int],
    ) -> list[dict[str, Any]]:
        stages = list(STAGE_TITLES)
        for r in traffic + canary:
            if r["stage"] not in stages and r["stage"] != "none":
                stages.append(r["stage"])
        out = []
        for stage in stages:
            rows_t = [r for r in traffic if r["stage"] == stage]
            rows_c = [r for r in canary if r["stage"] == stage]
            if any(r["step"] == VERDICTS for r in rows_c):
                rows_c = [r for r in rows_c if r["step"] != VERDICTS] + with_zero_shares(
                    [r for r in rows_c if r["step"] == VERDICTS], canary
                )
            if not rows_t and not rows_c:
                continue
            section: dict[str, Any] = {
                "slug": _slug(stage),
                "title": STAGE_TITLES.get(stage, stage),
                "traffic": None,
                "canary": None,
            }
            if rows_t:
                charts, empty = self._traffic_charts(stage, rows_t, alerts, x_range)
                section["traffic"] = {"charts": charts, "empty": "; ".join(empty)}
            if rows_c:
                charts, unscored = self._canary_charts(stage, rows_c, alerts, x_range)
                section["canary"] = {"charts": charts, "unscored": ", ".join(unscored)}
            out.append(section)
        return out
