"""Small inline SVG charts: grouped bars, histograms, intervals. Every label is escaped.

Drawn in Python so the report is one file with no script library and no
network: the charts are simple (bars, bins, whiskers), and SVG text is
selectable and scales with the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#9b2c2c", "#6b46c1", "#b7791f", "#2c7a7b")

# verdicts: passes green (paler the earlier the judging stopped), losses warm (darker the
# earlier the stage), neither-nor grey
VERDICT_COLOURS = {
    "pass": "#2f855a",
    "pass_to_context": "#48bb78",
    "pass_to_pool": "#68d391",
    "pass_to_corpus": "#9ae6b4",
    "pass_to_parse": "#c6f6d5",
    "parse_lost": "#63171b",
    "chunk_split": "#9b2c2c",
    "chunk_dropped": "#c53030",
    "not_in_corpus": "#e53e3e",
    "not_retrieved": "#c05621",
    "derivation_lost": "#dd6b20",
    "cut_by_rerank": "#ed8936",
    "refused": "#b7791f",
    "not_in_answer": "#d69e2e",
    "unsupported_claims": "#f6ad55",
    "pipeline_error": "#4a5568",
    "unscorable": "#a0aec0",
}
WARM = "#975a16"  # a verdict this table does not know: a loss until shown otherwise


def verdict_colour(verdict: str) -> str:
    if verdict in VERDICT_COLOURS:
        return VERDICT_COLOURS[verdict]
    return VERDICT_COLOURS["pass_to_context"] if verdict.startswith("pass") else WARM


def _text(
    x: float, y: float, label: str, *, anchor: str = "middle", size: int = 11, extra: str = ""
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
        f"{escape(label)}</text>"
    )


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
) -> str:
    """One group of bars per category, one bar per series (run); values in [0, top].
    ``colours``: a series' colour by name (default: the palette in order)."""
    left, bottom, head = 40, 40, 28
    plot_w, plot_h = width - left - 10, height - bottom - head
    names = list(series)
    group_w = plot_w / max(len(categories), 1)
    bar_w = max(2.0, (group_w - 8) / max(len(names), 1))
    parts = [_text(width / 2, 16, title, size=13, extra=' font-weight="bold"')]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        y = head + plot_h * (1 - tick)
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        parts.append(_text(left - 4, y + 4, value_format.format(tick * top), anchor="end", size=9))
    for i, category in enumerate(categories):
        x0 = left + i * group_w + 4
        for j, name in enumerate(names):
            value = series[name][i]
            if value is None:
                continue
            h = plot_h * max(0.0, min(value / top if top else 0.0, 1.0))
            x, y = x0 + j * bar_w, head + plot_h - h
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar_w - 1:.1f}" '
                f'height="{h:.1f}" fill="{_colour(name, j, colours)}">'
                f"<title>{escape(name)} · {escape(category)}: "
                f"{escape(value_format.format(value))}</title></rect>"
            )
        parts.append(_text(x0 + group_w / 2 - 4, height - bottom + 14, category, size=10))
    parts += _legend(names, left, height - 12, colours)
    return _svg(width, height, parts, title)


def histogram(
    values: Sequence[float], *, title: str, bins: int = 10, width: int = 220, height: int = 120
) -> str:
    """Counts of values in equal bins over [min, max] (a single value: one bar), on a
    y-axis of counts."""
    left, right, bottom, head = 30, 6, 18, 18
    plot_w, plot_h = width - left - right, height - bottom - head
    parts = [_text(width / 2, 12, title, size=10, extra=' font-weight="bold"')]
    if not values:
        parts.append(_text(width / 2, height / 2, "no value", size=10))
        return _svg(width, height, parts, title)
    low, high = min(values), max(values)
    span = high - low or 1.0
    counts = [0] * bins
    for value in values:
        counts[min(int((value - low) / span * bins), bins - 1)] += 1
    most = max(counts)
    bar_w = plot_w / bins
    parts.append(
        f'<line class="axis" x1="{left - 2}" x2="{left - 2}" y1="{head}" '
        f'y2="{head + plot_h}" stroke="#999"/>'
    )
    for tick in sorted({0, most // 2, most}):
        y = head + plot_h * (1 - tick / most)
        parts.append(
            f'<line x1="{left - 5}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{"#999" if tick == 0 else "#eee"}"/>'
        )
        parts.append(
            _text(left - 7, y + 3, str(tick), anchor="end", size=9, extra=' class="count"')
        )
    for i, count in enumerate(counts):
        h = plot_h * count / most
        parts.append(
            f'<rect class="bar" x="{left + i * bar_w:.1f}" y="{head + plot_h - h:.1f}" '
            f'width="{bar_w - 1:.1f}" height="{h:.1f}" fill="{PALETTE[0]}">'
            f"<title>{count} sample(s)</title></rect>"
        )
    parts.append(_text(left, height - 4, f"{low:.2f}", anchor="start", size=9))
    parts.append(_text(width - right, height - 4, f"{high:.2f}", anchor="end", size=9))
    parts.append(_text(width / 2, height - 4, f"n={len(values)}", size=9))
    return _svg(width, height, parts, title)


def intervals(
    rows: Sequence[tuple[str, float, float, float]],
    *,
    title: str,
    zero: bool = True,
    width: int = 520,
) -> str:
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

    parts = [_text(8, 16, title, anchor="start", size=12, extra=' font-weight="bold"')]
    if zero and low < 0 < high:
        parts.append(
            f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{head - 4}" '
            f'y2="{height - 20}" stroke="#999" stroke-dasharray="3 3"/>'
        )
    for i, (label, estimate, lo, hi) in enumerate(rows):
        y = head + i * row_h + row_h / 2
        parts.append(_text(left - 8, y + 4, label, anchor="end", size=10))
        parts.append(
            f'<line class="ci" x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{y:.1f}" '
            f'y2="{y:.1f}" stroke="{PALETTE[0]}" stroke-width="2"/>'
        )
        parts.append(
            f'<circle cx="{x(estimate):.1f}" cy="{y:.1f}" r="4" fill="{PALETTE[1]}">'
            f"<title>{escape(label)}: {estimate:+.3f} [{lo:+.3f}, {hi:+.3f}]</title></circle>"
        )
    parts.append(_text(left, height - 6, f"{low:+.2f}", anchor="start", size=9))
    parts.append(_text(width - 16, height - 6, f"{high:+.2f}", anchor="end", size=9))
    return _svg(width, height, parts, title)


def _colour(name: str, j: int, colours: dict[str, str] | None) -> str:
    return (colours or {}).get(name) or PALETTE[j % len(PALETTE)]


def _legend(
    names: Sequence[str], x: float, y: float, colours: dict[str, str] | None = None
) -> list[str]:
    parts = []
    for j, name in enumerate(names):
        parts.append(
            f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" '
            f'fill="{_colour(name, j, colours)}"/>'
        )
        parts.append(_text(x + 14, y, name, anchor="start", size=10))
        x += 24 + 7 * len(name)
    return parts


def _svg(width: int, height: int, parts: list[str], title: str) -> str:
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}">' + "".join(parts) + "</svg>"
    )
