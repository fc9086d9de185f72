"""Grouped bars, histograms and confidence intervals (the report's charts).

Python computes where each mark goes; ``templates/bars.svg``, ``histogram.svg`` and
``intervals.svg`` write the markup, every label and tooltip escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from cofe.charts._palette import PALETTE
from cofe.charts._render import render


def grouped_bars(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    top: float = 1.0,
    value_format: str = "{:.2f}",
    width: int = 640,
    height: int = 240,
    colours: dict[str, str] | None = None,
    value_labels: bool = False,
) -> Markup:
    """One group of bars per category, one bar per series (run); values in [0, top].
    ``colours``: a series' colour by name (default: the palette in order); ``value_labels``:
    each bar's value written above it (a reader compares figures, not bar heights)."""
    left, bottom, head = 40, 40, 38 if value_labels else 28  # room for a full bar's label
    plot_w, plot_h = width - left - 10, height - bottom - head
    names = list(series)
    group_w = plot_w / max(len(categories), 1)
    bar_w = max(2.0, (group_w - 8) / max(len(names), 1))
    ticks = [
        {"y": head + plot_h * (1 - tick), "label": value_format.format(tick * top)}
        for tick in (0, 0.25, 0.5, 0.75, 1.0)
    ]
    groups = []
    for i, category in enumerate(categories):
        x0 = left + i * group_w + 4
        bars = []
        for j, name in enumerate(names):
            value = series[name][i]
            if value is None:
                continue
            h = plot_h * max(0.0, min(value / top if top else 0.0, 1.0))
            bars.append(
                {
                    "x": x0 + j * bar_w,
                    "y": head + plot_h - h,
                    "w": bar_w - 1,
                    "h": h,
                    "colour": _colour(name, j, colours),
                    "name": name,
                    "value": value_format.format(value),
                }
            )
        groups.append({"label": category, "x": x0 + group_w / 2 - 4, "bars": bars})
    legend = []
    x, y = float(left), height - 12
    for j, name in enumerate(names):
        legend.append({"x": x, "y": y, "colour": _colour(name, j, colours), "name": name})
        x += 24 + 7 * len(name)
    return render(
        "bars.svg",
        width=width,
        height=height,
        title=title,
        value_labels=value_labels,
        label_size=9 if bar_w >= 22 else 7,
        left=left,
        right_x=width - 10,
        ticks=ticks,
        groups=groups,
        label_y=height - bottom + 14,
        legend=legend,
    )


def histogram(
    values: Sequence[float], *, title: str, bins: int = 10, width: int = 220, height: int = 120
) -> Markup:
    """Counts of values in equal bins over [min, max], on a y-axis of counts; values all
    equal are said in words ("all 1.00"), not drawn as one bar on an axis "1.00 ... 1.00"."""
    left, right, bottom, head = 30, 6, 18, 18
    plot_w, plot_h = width - left - right, height - bottom - head
    frame: dict[str, Any] = {"width": width, "height": height, "title": title}
    if not values:
        return render("histogram.svg", **frame, bars=[])
    low, high = min(values), max(values)
    if low == high:
        return render("histogram.svg", **frame, bars=[], constant=f"all {low:.2f}", n=len(values))
    span = high - low
    counts = [0] * bins
    for value in values:
        counts[min(int((value - low) / span * bins), bins - 1)] += 1
    most = max(counts)
    bar_w = plot_w / bins
    ticks = [
        {"y": head + plot_h * (1 - tick / most), "count": tick}
        for tick in sorted({0, most // 2, most})
    ]
    bars = []
    for i, count in enumerate(counts):
        h = plot_h * count / most
        bars.append(
            {"x": left + i * bar_w, "y": head + plot_h - h, "w": bar_w - 1, "h": h, "count": count}
        )
    return render(
        "histogram.svg",
        **frame,
        left=left,
        right_x=width - right,
        head=head,
        base=head + plot_h,
        ticks=ticks,
        bars=bars,
        colour=PALETTE[0],
        low=f"{low:.2f}",
        high=f"{high:.2f}",
        n=len(values),
    )


def intervals(
    rows: Sequence[tuple[str, float, float, float]],
    *,
    title: str,
    zero: bool = True,
    width: int = 520,
) -> Markup:
    """One row per (label, estimate, low, high): a dot with its confidence whiskers."""
    row_h, left, head = 22, 230, 26
    height = head + row_h * len(rows) + 24
    lows = [r[2] for r in rows] + ([0.0] if zero else [])
    highs = [r[3] for r in rows] + ([0.0] if zero else [])
    low, high = min(lows), max(highs)
    span = (high - low) or 1.0
    low, high = low - 0.05 * span, high + 0.05 * span
    plot_w = width - left - 16

    def x(value: float) -> float:
        return left + (value - low) / (high - low) * plot_w

    drawn = [
        {
            "y": head + i * row_h + row_h / 2,
            "label": label,
            "low": x(lo),
            "high": x(hi),
            "estimate": x(estimate),
            "tip": f"{estimate:+.3f} [{lo:+.3f}, {hi:+.3f}]",
        }
        for i, (label, estimate, lo, hi) in enumerate(rows)
    ]
    return render(
        "intervals.svg",
        width=width,
        height=height,
        title=title,
        left=left,
        head=head,
        zero_x=x(0) if zero and low < 0 < high else None,
        rows=drawn,
        whisker=PALETTE[0],
        dot=PALETTE[1],
        low=f"{low:+.2f}",
        high=f"{high:+.2f}",
    )


def _colour(name: str, j: int, colours: dict[str, str] | None) -> str:
    return (colours or {}).get(name) or PALETTE[j % len(PALETTE)]
