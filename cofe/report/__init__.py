"""Human-readable renderings of score results.

Names load on first use: ``cofe score`` prints its table without loading the HTML report
(and the judges, comparisons and LLM client it reads). Its charts and stylesheet are
``cofe.charts``' (its stylesheet, ``cofe.charts.STYLESHEET``, inlined in the report).
"""

from typing import TYPE_CHECKING

from cofe._lazy import lazy_names

if TYPE_CHECKING:
    from cofe.report._compare_text import plan_rows, render_comparison, render_plan
    from cofe.report._html import (
        CHUNK_CHARS,
        MAX_CASES,
        RunForReport,
        render_report,
        strict_marks,
    )
    from cofe.report._text import format_table, render_result

_HOMES = {
    **dict.fromkeys(("plan_rows", "render_comparison", "render_plan"), "cofe.report._compare_text"),
    **dict.fromkeys(
        ("CHUNK_CHARS", "MAX_CASES", "RunForReport", "render_report", "strict_marks"),
        "cofe.report._html",
    ),
    **dict.fromkeys(("format_table", "render_result"), "cofe.report._text"),
}


__all__ = [
    "CHUNK_CHARS",
    "MAX_CASES",
    "RunForReport",
    "format_table",
    "plan_rows",
    "render_comparison",
    "render_plan",
    "render_report",
    "render_result",
    "strict_marks",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
