"""Human-readable renderings of score results."""

from cofe.report._compare_text import render_comparison
from cofe.report._html import MAX_CASES, RunForReport, render_report
from cofe.report._text import format_table, render_result

__all__ = [
    "MAX_CASES",
    "RunForReport",
    "format_table",
    "render_comparison",
    "render_report",
    "render_result",
]
