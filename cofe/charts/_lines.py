"""Time-series line charts (the dashboard's), as inline SVG (``templates/line_chart.svg``).

Bars, bins and whiskers (``_bars``) show one scoring; a monitor needs values over time,
so this chart kind draws, in the same style (palette, text and frame), lines over a
fixed time range (a missing window breaks the line, it is never bridged), one marker per
value, each marker a link (``<a href>``) to the cases behind it, so a click drills down
without any script. Windows that have a row but no value (the signal says why) get a
grey tick on the axis, also a link. Alerts are red triangles above the plot at the time
they watch. Every label and tooltip is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup

from cofe.charts._palette import LINE_PALETTE
from cofe.charts._render import render


@dataclass(frozen=True)
class Point:
    x: int  # nanoseconds since the epoch
    y: float | None  # None: a row with no value (``tip`` says why)
    href: str | None = None  # where a click on the marker goes
    tip: str = ""  # the marker's tooltip (plain text; escaped when drawn)


@dataclass
class Line:
    name: str
    points: list[Point] = field(default_factory=list)


@dataclass(frozen=True)
class Marker:
    x: int
    href: str | None
    tip: str


def nice_step(span: float, ticks: int = 4) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` intervals."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / ticks
    power: float = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


_TIME_STEPS = [s * 60 for s in (1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720)] + [
    d * 86400 for d in (1, 2, 7, 14, 30, 91, 182, 365)
]


def time_ticks(start_ns: int, end_ns: int, most: int = 4) -> list[tuple[int, str]]:
    """Round instants (UTC) in ``[start, end]``, at most ``most`` of them, with labels."""
    span = max(end_ns - start_ns, 1) / 1e9
    step = next((s for s in _TIME_STEPS if span / s <= most), _TIME_STEPS[-1])
    first = math.ceil(start_ns / 1e9 / step) * step
    out: list[tuple[int, str]] = []
    at = first
    while at * 1e9 <= end_ns and len(out) < most + 1:
        moment = datetime.fromtimestamp(at, UTC)
        if step >= 86400:
            label = moment.strftime("%m-%d")
        elif span > 86400:
            label = moment.strftime("%m-%d %H:%M")
        else:
            label = moment.strftime("%H:%M")
        out.append((int(at * 1e9), label))
        at += step
    return out


def _legend(
    names: Sequence[str], left: float, right: float, top: float
) -> tuple[list[dict[str, Any]], int]:
    """Legend entries wrapped to the chart's width (where each goes), and the rows used."""
    entries: list[dict[str, Any]] = []
    x, y, rows = left, top, 1 if names else 0
    for j, name in enumerate(names):
        w = 18 + 6.2 * len(name)
        if x + w > right and x > left:
            x, y, rows = left, y + 14, rows + 1
        entries.append(
            {"x": x, "y": y, "colour": LINE_PALETTE[j % len(LINE_PALETTE)], "name": name}
        )
        x += w + 8
    return entries, rows


def _axis(values: list[float], share: bool, unit_range: bool) -> tuple[float, float, float]:
    """The value axis: its low and high ends and the step between its grid lines."""
    if share or unit_range:
        lo, hi = 0.0, 1.0
        if values and (min(values) < 0 or max(values) > 1):  # not a share after all
            lo, hi = min(0.0, min(values)), max(1.0, max(values))
    elif values:
        lo, hi = min(values), max(values)
        if lo >= 0:
            lo = 0.0
        if hi == lo:
            hi = lo + (abs(lo) or 1.0)
    else:
        lo, hi = 0.0, 1.0
    step = nice_step(hi - lo)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    if hi == lo:
        hi = lo + step
    return lo, hi, step


def _runs(points: list[Point], gap_ns: int | None) -> list[list[Point]]:
    """Consecutive points with values, a run broken by a point with none or by a gap."""
    runs: list[list[Point]] = []
    previous: Point | None = None
    for p in points:
        if p.y is None:
            previous = None
            continue
        joined = previous is not None and (gap_ns is None or p.x - previous.x <= gap_ns)
        if joined:
            runs[-1].append(p)
        else:
            runs.append([p])
        previous = p
    return runs


def line_chart(
    lines: Sequence[Line],
    *,
    title: str,
    x_range: tuple[int, int],
    gap_ns: int | None = None,
    share: bool = False,
    unit_range: bool = False,
    fmt: Callable[[float], str] = lambda v: f"{v:.3g}",
    markers: Sequence[Marker] = (),
    legend: bool | None = None,
    width: int = 360,
    height: int = 170,
) -> Markup:
    """Values over time, one line per series (see the module's docstring).

    ``share``: the values are shares, drawn on 0-100 %; ``unit_range``: on 0-1; otherwise
    the axis spans the values (and zero, when none is negative). ``gap_ns``: consecutive
    points further apart than this are not joined (a window with no row). ``legend``: name
    the lines under the chart (default: when there are several). The geometry is computed
    here; ``templates/line_chart.svg`` writes it."""
    left, right, head = 46, 10, 30
    x0, x1 = x_range
    if x1 <= x0:
        x0, x1 = x0 - 1, x0 + 1
    pad = (x1 - x0) // 40  # markers at either end stay clear of the axis labels
    x0, x1 = x0 - pad, x1 + pad
    shown = len(lines) > 1 if legend is None else legend
    legend_entries, legend_rows = _legend(
        [ln.name for ln in lines] if shown else [], left, width - right, height + 10
    )
    total_h = height + 14 * legend_rows + (6 if legend_rows else 0)
    plot_w, plot_h = width - left - right, height - 22 - head
    values = [p.y for ln in lines for p in ln.points if p.y is not None]
    lo, hi, step = _axis(values, share, unit_range)

    def px(x: int) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return head + plot_h * (1 - (y - lo) / (hi - lo))

    tick_label: Callable[[float], str] = (
        (lambda v: f"{v:.0%}") if share and hi <= 1 else (lambda v: f"{v:.4g}")
    )
    grid = []
    tick = lo
    while tick <= hi + step / 1e6:
        grid.append({"y": py(tick), "label": tick_label(tick)})
        tick += step
    x_ticks = []
    for at, label in time_ticks(x0, x1):
        x = px(at)
        anchor = "start" if x - left < 30 else "end" if width - right - x < 30 else "middle"
        x_ticks.append({"x": x, "label": label, "anchor": anchor})
    base = head + plot_h
    crowded = max((len(ln.points) for ln in lines), default=0) > 60
    radius, ring = (2.2, 0.7) if crowded else (3.2, 1.0)
    drawn = []  # each line's polylines, then its markers (drawn in this order)
    for j, line in enumerate(lines):
        # the first lines' markers are larger: equal values show as rings, none is hidden
        r = radius + ring * (len(lines) - 1 - j) if len(lines) <= 4 else radius
        colour = LINE_PALETTE[j % len(LINE_PALETTE)]
        points = sorted(line.points, key=lambda p: p.x)
        paths = [
            " ".join(f"{px(p.x):.1f},{py(p.y):.1f}" for p in run if p.y is not None)
            for run in _runs(points, gap_ns)
            if len(run) > 1
        ]
        marks = [
            {"x": px(p.x), "y": None if p.y is None else py(p.y), "tip": p.tip, "href": p.href}
            for p in points
        ]
        drawn.append({"paths": paths, "marks": marks, "r": r, "colour": colour})
    alerts = []
    for m in markers:
        x = px(m.x)
        if left - 1 <= x <= width - right + 1:
            alerts.append({"x": x, "tip": m.tip, "href": m.href})
    return render(
        "line_chart.svg",
        width=width,
        height=total_h,
        title=title,
        left=left,
        right_x=width - right,
        head=head,
        base=base,
        grid=grid,
        x_ticks=x_ticks,
        lines=drawn,
        alerts=alerts,
        empty=not values,
        middle=(left + plot_w / 2, head + plot_h / 2),
        legend=legend_entries,
    )
