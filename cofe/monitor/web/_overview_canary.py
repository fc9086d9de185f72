"""The overview's canary sections (``/``): KeywordRecall through the pipeline and the
verdicts per round, the latest rounds, and each stage's canary charts. A mixin of
:class:`~cofe.monitor.web._overview.OverviewPages`."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from cofe.chain import PASSES
from cofe.charts import Line, Marker, Point, line_chart
from cofe.monitor.store import CANARY, MonitorStore
from cofe.monitor.web._dashboard_kit import (
    MAX_ROUNDS,
    STEP_ORDER,
    VERDICTS,
    _href,
    _rounds,
    _slug,
    fmt_value,
    utc,
    with_zero_shares,
)
from cofe.monitor.web._templates import Link


class CanarySections:
    """The canary parts of the overview page (see the module)."""

    store: MonitorStore  # OverviewPages'

    if TYPE_CHECKING:  # OverviewPages'

        def _figure(
            self, chart_id: str, svg: Markup, caption: str = "", wide: bool = False
        ) -> dict[str, Any]: ...

    def _canary_lines(
        self,
        rows: list[dict[str, Any]],
        label: Callable[[dict[str, Any]], str],
        href: Callable[[dict[str, Any]], str],
        kind: str,
    ) -> list[Line]:
        lines: dict[str, Line] = {}
        for r in rows:
            name = label(r)
            if r["value"] is not None:
                tip = (
                    f"{r['measure']} at {r['step']} · round {r['round_id']} "
                    f"({utc(r['start_ns'])}): {fmt_value(kind, r['value'])} (n={r['n']})"
                )
            else:
                tip = (
                    f"{r['measure']} at {r['step']} · round {r['round_id']}: not scored "
                    f"({r['unscored']} sample(s) unscored)"
                )
            lines.setdefault(name, Line(name)).points.append(
                Point(r["start_ns"], r["value"], href(r), tip)
            )
        return list(lines.values())

    def _round_href(self, r: dict[str, Any]) -> str:
        if r["step"] == VERDICTS:
            verdict, _, stage = r["measure"].rpartition("@")
            return _href("round", id=r["round_id"], verdict=verdict, stage=stage)
        return _href("round", id=r["round_id"])

    def _canary_charts(
        self,
        stage: str,
        rows: list[dict[str, Any]],
        alerts: list[dict[str, Any]],
        x_range: tuple[int, int],
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """A chart per step and measure family of the stage, and its verdict shares; the
        names of measures with no value in any round."""
        charts: list[dict[str, Any]] = []
        unscored: list[str] = []
        steps: dict[str, dict[str, list[dict[str, Any]]]] = {}
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
                    lines = self._canary_lines(
                        family_rows,
                        lambda r: r["measure"].rpartition("@")[0],
                        self._round_href,
                        "share",
                    )
                    title = f"verdicts blamed on {stage}, share of samples"
                    kind, chart_id = "share", f"chart-canary-verdicts-{_slug(stage)}"
                    measures = {r["measure"] for r in family_rows}
                    wanted = [a for a in stage_alerts if "@" in a["measure"]]
                else:  # a line per series: a new cutoff continues its line (on the point)
                    kind = "unit"
                    lines = self._canary_lines(
                        family_rows, lambda r: r["series"], self._round_href, kind
                    )
                    title = f"{family} at {step}"
                    chart_id = f"chart-canary-{_slug(stage)}-{_slug(step)}-{_slug(family)}"
                    measures = {r["measure"] for r in family_rows}
                    wanted = [a for a in stage_alerts if a["measure"] in measures]
                markers = [
                    Marker(
                        a["window_start_ns"],
                        f"#alert-{_slug(str(a['alert_id']))}",
                        f"{a['severity']}: {a['message']}",
                    )
                    for a in wanted
                ]
                svg = line_chart(
                    lines,
                    title=title,
                    x_range=x_range,
                    share=kind == "share",
                    unit_range=kind == "unit",
                    fmt=partial(fmt_value, kind),
                    markers=markers,
                    legend=True,
                )
                caption = (
                    "click a point: the round's cases with that verdict"
                    if step == VERDICTS
                    else "per canary round; click a point: its cases"
                )
                charts.append(self._figure(chart_id, svg, caption))
        return charts, unscored

    def _canary_overview(
        self, canary: list[dict[str, Any]], alerts: list[dict[str, Any]], x_range: tuple[int, int]
    ) -> dict[str, Any] | None:
        if not canary:
            return None
        # KeywordRecall through the pipeline: one line per step, each round's widest cutoff
        # of the step (a new top-k continues the line; each point names its cutoff)
        rank = {s: i for i, s in enumerate(STEP_ORDER)}
        recall_rows = sorted(
            (r for r in canary if r["series"] == "KeywordRecall" and r["step"] != VERDICTS),
            key=lambda r: rank.get(r["step"], 99),
        )
        charts = []
        if recall_rows:
            lines = self._canary_lines(recall_rows, lambda r: r["step"], self._round_href, "unit")
            svg = line_chart(
                lines,
                title="KeywordRecall at each step",
                x_range=x_range,
                unit_range=True,
                fmt=lambda v: fmt_value("unit", v),
                width=540,
            )
            charts.append(
                self._figure(
                    "chart-canary-recall",
                    svg,
                    "share of information points still present after each step, per round",
                    wide=True,
                )
            )
        verdict_rows = with_zero_shares([r for r in canary if r["step"] == VERDICTS], canary)
        if verdict_rows:
            lines = self._canary_lines(
                verdict_rows, lambda r: r["measure"], self._round_href, "share"
            )
            markers = [
                Marker(
                    a["window_start_ns"],
                    f"#alert-{_slug(str(a['alert_id']))}",
                    f"{a['severity']}: {a['message']}",
                )
                for a in alerts
                if a["origin"] == CANARY and "@" in a["measure"]
            ]
            svg = line_chart(
                lines,
                title="Verdicts per round (verdict@stage), share of samples",
                x_range=x_range,
                share=True,
                fmt=lambda v: fmt_value("share", v),
                markers=markers,
                width=540,
            )
            charts.append(
                self._figure(
                    "chart-canary-verdicts",
                    svg,
                    "click a point: that round's cases with that verdict",
                    wide=True,
                )
            )
        rounds = _rounds(self.store, *x_range)
        counts = self.store.canaries.verdict_counts([r.round_id for r in rounds[:MAX_ROUNDS]])
        rows = []
        for r in rounds[:MAX_ROUNDS]:
            verdicts = counts.get(r.round_id, {})
            total = sum(verdicts.values())
            good = sum(n for v, n in verdicts.items() if v in PASSES)
            lost = ", ".join(
                f"{v} {n}"
                for v, n in sorted(verdicts.items(), key=lambda kv: -kv[1])
                if v not in PASSES
            )
            rows.append(
                {
                    "link": Link(_href("round", id=r.round_id), r.round_id),
                    "started": utc(r.started_ns, True),
                    "took": f"{(r.finished_ns - r.started_ns) / 1e9:.1f} s",
                    "answered": f"{r.answered}/{r.samples}",
                    "passed": fmt_value("share", good / total if total else None),
                    "lost": lost,
                }
            )
        more = (
            f"the latest {MAX_ROUNDS} of {len(rounds)} rounds" if len(rounds) > MAX_ROUNDS else None
        )
        return {"charts": charts, "rounds": rows, "more": more}
