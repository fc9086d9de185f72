"""Plain-text tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cofe.results import SCORE_FILES, ScoreResult, ScoreSummary


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned first column, right-aligned numbers; floats to 3 decimals."""

    def cell(value: object) -> str:
        if value is None or (isinstance(value, float) and value != value):  # missing, NaN
            return "-"
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value)

    cells = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(header)]

    def line(values: Sequence[str]) -> str:
        parts = [values[0].ljust(widths[0])] + [
            v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(header)), rule, *(line(r) for r in cells)])


def _per_type(
    by_type: list[dict[str, Any]], key: str, value: str, fill: int | None
) -> tuple[list[str], dict[Any, list[Any]]]:
    """``value`` by ``key`` and query type (sorted): the types, and per key its value in each
    (``fill`` where it has none); no types when there is only one."""
    types = sorted({row["query_type"] for row in by_type})
    if len(types) < 2:
        return [], {}
    cells: dict[Any, dict[str, Any]] = {}
    for row in by_type:
        cells.setdefault(row[key], {}).setdefault(row["query_type"], row[value])
    return types, {k: [of_type.get(t, fill) for t in types] for k, of_type in cells.items()}


def _waterfall_table(result: ScoreSummary) -> str:
    overall = result.waterfall_rows()
    if not overall:
        return "(no stage could be judged)"
    types, by_step = _per_type(result.waterfall_rows(by_query_type=True), "step", "recall", None)
    rows = [
        [str(row["step"]), row["recall"], row["n"], *by_step.get(row["step"], [])]
        for row in overall
    ]
    return format_table(["step", "recall", "n", *types], rows)


def _verdict_table(result: ScoreSummary) -> str:
    counts = result.verdict_count_rows()
    total = sum(row["count"] for row in counts) or 1
    types, by_verdict = _per_type(
        result.verdict_count_rows(by_query_type=True), "verdict", "count", 0
    )
    rows = [
        [
            str(row["verdict"]),
            row["count"],
            f"{row['count'] / total:.1%}",
            *by_verdict.get(row["verdict"], []),
        ]
        for row in counts
    ]
    return format_table(["verdict", "count", "share", *types], rows)


def _doc_type_lines(result: ScoreSummary) -> list[str]:
    """Where samples were lost, per kind of source document -- only when the sources are
    files of a kind (a PDF report loses rows where Markdown does not)."""
    losses = result.losses_by_doc_type_rows()
    if not losses or {row["doc_type"] for row in losses} <= {"(no type)"}:
        return []
    headers = [
        "document type",
        "samples",
        "pass",
        "parse",
        "chunking (split)",
        "retrieval",
        "reranking",
        "generation",
        "other",
    ]
    rows = [
        [
            r["doc_type"],
            r["samples"],
            r["pass"],
            r["parse"],
            f"{r['chunking']} ({r['split']})",
            r["retrieval"],
            r["reranking"],
            r["generation"],
            r["other"],
        ]
        for r in losses
    ]
    return [
        "",
        "Where samples were lost, by document type (the stage of each verdict; split: "
        "points a chunk boundary separated)",
        format_table(headers, rows),
    ]


def render_result(
    scoring: ScoreResult | ScoreSummary, *, files_in: str | None = None, examples: int = 3
) -> str:
    """The terminal report of a scoring: from its rows, or from the summary the streaming
    scorer built (the same figures either way)."""
    result = scoring.view() if isinstance(scoring, ScoreResult) else scoring
    cfg = result.config
    summary = result.to_dict()
    n = summary["samples"]
    shape = result.shape
    top_k = shape.get("top_k")
    errors = {s: r for s, r in result.error_rates().items() if r}
    lines = [
        f"cofe score: run {result.run_id!r} ({result.run})",
        f"mode {cfg.mode}, coarse keywords scoped to the {cfg.scope.value}"
        + (", same-source filter on" if cfg.same_source else "")
        + (f", fuzzy error ratio {cfg.fuzzy}" if cfg.fuzzy else ""),
        "stages recorded: "
        + " -> ".join(shape.get("stages", []))
        + f"; pool cutoff {shape.get('pool_cutoff')}; context "
        + (
            f"top-{top_k} (from {shape.get('top_k_from')})"
            if top_k
            else f"not judged: {shape.get('top_k_from')}"
        ),
        f"samples: {n['in_evalset']} in the eval set, {n['scored']} scored, {n['unscorable']} unscorable"
        + (f", {n['pipeline_error']} with a pipeline error" if n["pipeline_error"] else ""),
        *(
            ["pipeline errors by stage: " + ", ".join(f"{s} {r:.1%}" for s, r in errors.items())]
            if errors
            else []
        ),
        "",
        "Loss waterfall (mean share of information points still present)",
        _waterfall_table(result),
        "",
        "Verdicts (first stage that lost an information point)",
        _verdict_table(result),
        "",
        "Measures by step (mean over scored samples; every sample is scored or says why not;",
        " the answer's also over answered samples: refusals left out)",
        _measure_table(result),
        *_refusal_lines(result),
    ]
    findings = result.findings()
    if findings["held_only_by_chunks_not_naming_the_entity"]:
        lone = findings["held_only_by_chunks_not_naming_the_entity"]
        lines += [
            "",
            f"Chunking risk (not a loss): {lone} of {findings['points_held_whole']} points are held "
            "whole only by chunks that never name the entity; the retriever still brought "
            f"{findings['of_those_in_the_pool']} of them into the pool and "
            f"{findings['of_those_in_the_context']} into the context.",
        ]
    lines += _doc_type_lines(result)
    lines += _answer_point_lines(result)
    cross = result.keyword_vs_judge()
    if cross and cross["samples"]:
        lines += [
            "",
            f"Keyword vs LLM judge at the context ({cross['samples']} samples): they agree on "
            f"'every point / reference claim is there' for {cross['agree']:.1%}; keywords found "
            f"all but the judge did not: {cross['keyword_found_judge_not']}; the judge did but "
            f"keywords did not: {cross['judge_found_keyword_not']}.",
        ]
    bad = result.bad_examples(examples * 2)
    if examples and bad:
        lines += ["", "Examples of bad cases"]
        for verdict, sample_id, explanation in bad:
            lines.append(f"  [{verdict}] {sample_id}: {_shorten(explanation, 220)}")
    reasons = result.skipped_reasons(8)
    if reasons:
        lines += ["", "Not measured (sample count and reason)"]
        for stage, measure, reason, count in reasons:
            lines.append(f"  {count:>6}  {stage}/{measure}: {reason}")
    if result.problems.count:
        lines += ["", f"{result.problems.count} input problem(s); first ones:"]
        lines += [f"  {p}" for p in result.problems.first[:5]]
    if files_in:
        lines += [
            "",
            f"Files: {files_in}/ "
            + " ".join(SCORE_FILES)
            + " (read them back with cofe.read_scores)",
        ]
    return "\n".join(lines)


def _answer_point_lines(result: ScoreSummary) -> list[str]:
    """How the answer step decided its points, and what is left open."""
    counts = result.answer_points()
    if not counts:
        return []

    def said(decision: str) -> str:
        rules = counts.get(decision, {})
        by = ", ".join(f"{rule} {n}" for rule, n in rules.items())
        return f"{sum(rules.values())} {decision}" + (f" ({by})" if by else "")

    lines = [
        "",
        "Answer step, information points by decision (and the rule that decided): "
        + "; ".join(said(d) for d in ("present", "partial", "absent", "undecided"))
        + ".",
    ]
    undecided = sum(counts.get("undecided", {}).values())
    if undecided:
        lines.append(
            f"{undecided} point(s) the offline matcher could not settle are never blamed on "
            "the generator (the sample passes to the context and says so); "
            "`cofe judge` settles them."
        )
    return lines


def _measure_table(result: ScoreSummary) -> str:
    rows = []
    for r in result.summary_rows():
        answered = r["step"] == "answer"  # refusals matter to the answer's measures only
        rows.append(
            [
                r["step"],
                r["measure"],
                r["mean"],
                r["scored"],
                r["unscored"],
                r["answered_mean"] if answered else None,
                r["answered_scored"] if answered else None,
            ]
        )
    header = ["step", "measure", "mean", "scored", "unscored", "answered", "n answered"]
    return format_table(header, rows)


def _refusal_lines(result: ScoreSummary) -> list[str]:
    overall = result.refusal_rates()
    if not overall["answered"]:
        return []
    by_type = result.refusal_rates(by_query_type=True)
    types = (
        "; by query type: "
        + ", ".join(f"{t} {e['refused']}/{e['answered']}" for t, e in by_type.items())
        if len(by_type) > 1
        else ""
    )
    split = (
        f" -- {overall['context_held']} although the context held every point (over-cautious), "
        f"{overall['context_lacked']} of what never reached it (declined rightly)"
        if overall["refused"]
        else ""
    )
    return [
        "",
        f"Refusals (answers that decline, cofe.refusal): "
        f"{overall['refused']} of {overall['answered']} answers ({overall['rate']:.1%}){types}"
        f"{split}",
    ]


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
