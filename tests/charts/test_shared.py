"""The report and the dashboard share one chart module and one stylesheet (cofe.charts):
the report inlines the stylesheet, the dashboard serves it, both draw with one palette, so
the two cannot drift apart. Every chart escapes what it writes."""

from __future__ import annotations

import re
import shutil
import urllib.request
from pathlib import Path

import pytest

from cofe import charts
from cofe.charts import (
    LINE_PALETTE,
    PALETTE,
    STYLESHEET,
    VERDICT_COLOURS,
    Line,
    Point,
    grouped_bars,
    histogram,
    intervals,
    line_chart,
)
from cofe.cli import main
from cofe.monitor import Dashboard, MonitorStore

REPO = Path(__file__).resolve().parents[2]
HOSTILE = '<script>alert(1)</script>"'


def test_the_report_inlines_the_shared_stylesheet(tmp_path: Path) -> None:
    run = tmp_path / "run"  # a copy: reporting an unscored run scores it into its folder
    shutil.copytree(REPO / "examples" / "squad-bm25", run, ignore=shutil.ignore_patterns("scores"))
    out = tmp_path / "report.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count("<style>") == 1
    assert page.split("<style>", 1)[1].split("</style>", 1)[0] == STYLESHEET
    fills = set(re.findall(r'<rect class="bar"[^>]* fill="(#[0-9a-f]{6})"', page))
    # the waterfall's run, the histograms' bars, the verdicts
    assert fills and fills <= {*PALETTE, *VERDICT_COLOURS.values()}


def test_the_dashboard_serves_the_shared_stylesheet(tmp_path: Path) -> None:
    location = tmp_path / "monitor.db"
    MonitorStore(location).close()
    dashboard = Dashboard(str(location), port=0)
    dashboard.start()
    try:
        with urllib.request.urlopen(dashboard.url, timeout=30) as answer:
            page = answer.read().decode()
        css_href = re.search(r"<link rel='stylesheet' href='\./([^']+)'>", page)
        assert css_href, page[:500]
        with urllib.request.urlopen(dashboard.url + css_href.group(1), timeout=30) as answer:
            css = answer.read().decode()
    finally:
        dashboard.shutdown()
    # the dashboard's stylesheet is cofe.charts' (it still appends its own copy of the
    # dashboard rules, which the shared sheet holds too, until _dashboard_kit drops them)
    assert css == STYLESHEET


def test_lines_bars_and_verdicts_draw_from_one_palette() -> None:
    assert LINE_PALETTE[: len(PALETTE)] == PALETTE
    svg = line_chart(
        [Line("a", [Point(0, 0.1), Point(10**9, 0.2)]), Line("b", [Point(0, 0.3)])],
        title="t",
        x_range=(0, 10**9),
    )
    assert re.findall(r'class="series"[^>]* stroke="(#[0-9a-f]{6})"', svg) == [PALETTE[0]]
    assert set(re.findall(r'class="pt"[^>]* fill="(#[0-9a-f]{6})"', svg)) == set(PALETTE[:2])
    bars = grouped_bars(["x"], {"a": [0.5], "b": [0.7]}, title="t")
    assert re.findall(r'class="bar"[^>]* fill="(#[0-9a-f]{6})"', bars) == list(PALETTE[:2])
    assert charts.verdict_colour("pass") == charts.VERDICT_COLOURS["pass"]


@pytest.mark.parametrize(
    "draw",
    [
        lambda: grouped_bars([HOSTILE], {HOSTILE: [0.5]}, title=HOSTILE),
        lambda: histogram([0.1, 0.2], title=HOSTILE),
        lambda: intervals([(HOSTILE, 0.1, -0.1, 0.2)], title=HOSTILE),
        lambda: line_chart(
            [Line(HOSTILE, [Point(0, 1.0, href=HOSTILE, tip=HOSTILE)])],
            title=HOSTILE,
            x_range=(0, 10**9),
            legend=True,
        ),
    ],
    ids=["bars", "histogram", "intervals", "lines"],
)
def test_every_chart_escapes_its_labels(draw) -> None:
    svg = draw()
    assert svg.startswith('<svg class="chart"') and svg.rstrip().endswith("</svg>")
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;&#34;" in svg
