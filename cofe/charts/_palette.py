"""The charts' colours: one palette for series, and one colour per verdict."""

from __future__ import annotations

# a series' colour by its position (a run's bars, a line); the first is also the colour of
# a histogram's bars and an interval's whisker, the second an interval's estimate
PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#9b2c2c", "#6b46c1", "#b7791f", "#2c7a7b")
# a line chart may hold more series than a bar chart's groups have room for
LINE_PALETTE = (*PALETTE, "#d53f8c", "#4a5568", "#38a169", "#e53e3e", "#805ad5", "#3182ce")

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
    """The colour a verdict is drawn in (an unknown one: pale green if a pass, else warm)."""
    if verdict in VERDICT_COLOURS:
        return VERDICT_COLOURS[verdict]
    return VERDICT_COLOURS["pass_to_context"] if verdict.startswith("pass") else WARM
