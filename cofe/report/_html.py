"""The HTML report: one self-contained file a person would rather look at than read as CSV.

No script library, no stylesheet or font from the network: charts are inline
SVG (``cofe.charts``' templates), the stylesheet ``cofe.charts.STYLESHEET`` (the
dashboard's too) is inlined, the bad-case browser is rendered on the server
and a few lines of inline script only show and hide cases by their data
attributes. Every piece of document, query, keyword and answer text goes
through ``html.escape`` before it reaches the page (keywords are highlighted
by escaping the text around each match), so a document holding markup shows
it as text and runs nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from cofe._version import __version__
from cofe.chain import PASSES, STEP_SPECS
from cofe.charts import STYLESHEET, grouped_bars, histogram, intervals, verdict_colour
from cofe.compare import ALL, Comparison, in_pipeline_order
from cofe.diagnose import WATERFALL_STEPS
from cofe.evalset import EvalSample, keyword_alternatives, read_evalset
from cofe.judges import Judgement, read_judgements
from cofe.matching import (
    MatchMode,
    is_cjk,
    label_problem,
    normalize_cofe_rag,
    normalize_strict,
    strict_tokens,
)
from cofe.report._top import headline, pipelines, scoring_label
from cofe.results import ScoreResult
from cofe.runlog import CompactRecord, RunLog, read_compact

if TYPE_CHECKING:
    from pandas.core.groupby import DataFrameGroupBy

MAX_CASES = 300  # bad cases shown per run: the page stays light for 100k-sample runs
CHUNK_CHARS = 900  # characters of each context chunk shown


@dataclass
class RunForReport:
    """What the report shows of one run: its scores, and the texts behind them."""

    name: str
    result: ScoreResult
    log: RunLog | None = None
    records: dict[str, CompactRecord] | None = None
    samples: dict[str, EvalSample] | None = None
    judgements: dict[str, Judgement] | None = None  # `cofe judge`'s labels, when judged

    @classmethod
    def load(cls, name: str, run_dir: Path, result: ScoreResult) -> RunForReport:
        log, records = read_compact(run_dir)
        evalset = run_dir / "evalset.jsonl"
        samples = read_evalset(evalset).by_id() if evalset.exists() else {}
        return cls(name, result, log, records, samples, read_judgements(run_dir))


_SCRIPT = """
(function(){
  var selects=document.querySelectorAll('.filters select');
  var cases=document.querySelectorAll('.case');
  var counter=document.getElementById('shown');
  function apply(){
    var want={};
    selects.forEach(function(s){ if(s.value){ want[s.name]=s.value; } });
    var shown=0;
    cases.forEach(function(c){
      var ok=Object.keys(want).every(function(k){ return c.dataset[k]===want[k]; });
      c.hidden=!ok; if(ok){ shown++; }
    });
    counter.textContent=String(shown);
  }
  selects.forEach(function(s){ s.addEventListener('change', apply); });
  apply();
})();
"""


def render_report(
    runs: Sequence[RunForReport],
    comparison: Comparison | None = None,
    *,
    max_cases: int = MAX_CASES,
    fix_value: Sequence[str] = (),
) -> str:
    """The page. ``fix_value``: a "what a fix is worth" section per run with a replay, made
    by ``cofe.replay.report_section`` (a layer above this one: the caller hands them in,
    autoescaped markup), placed after the verdicts they check."""
    names = [r.name for r in runs]
    shown = sum(
        min(max_cases, int((~r.result.verdicts["verdict"].isin(_GOOD)).sum())) for r in runs
    )
    body = [
        headline(runs, comparison, shown),
        _overview(runs),
        pipelines(runs),
        _waterfall(runs),
        _verdicts(runs),
        *fix_value,
        _refusals(runs),
        _histograms(runs),
        _latency(runs),
    ]
    if comparison is not None:
        body.append(_comparison(comparison))
        body.append(_plan(runs))
    body.append(_cases(runs, max_cases))
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>cofe report: {escape(', '.join(names))}</title>"
        f"<style>{STYLESHEET}</style></head><body>"
        f"<header><h1>cofe report: {escape(', '.join(names))}</h1>"
        f"<div class='muted' style='color:#cbd5e0'>cofe {escape(__version__)} · {made}</div>"
        f"</header><main>{''.join(body)}</main><script>{_SCRIPT}</script></body></html>\n"
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        if value is None or (isinstance(value, float) and pd.isna(value)):
            return "–"
        if isinstance(value, float):
            return f"{value:.3f}"
        return escape(str(value))

    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _overview(runs: Sequence[RunForReport]) -> str:
    rows = []
    for run in runs:
        r = run.result
        verdicts = r.verdicts["verdict"]
        shape = r.shape
        rows.append(
            [
                run.name,
                r.run_id,
                len(verdicts),
                int((verdicts != "unscorable").sum()),
                " → ".join(shape.get("stages", [])),
                shape.get("top_k"),
                scoring_label(run),
                len(r.problems),
            ]
        )
    header = [
        "run",
        "run id",
        "samples",
        "scored",
        "stages",
        "top-K",
        "scoring settings",
        "problems",
    ]
    return f"<section><h2>Runs</h2>{_table(header, rows)}</section>"


def _waterfall(runs: Sequence[RunForReport]) -> str:
    falls = {r.name: r.result.waterfall().set_index("step")["recall"] for r in runs}
    steps = [s.value for s in WATERFALL_STEPS if any(s.value in f.index for f in falls.values())]
    series = {name: [f.get(step) for step in steps] for name, f in falls.items()}
    chart = grouped_bars(
        steps,
        series,
        title="Loss waterfall: share of information points still present after each step",
        value_labels=True,
    )
    return f"<section id='waterfall'><h2>Where information is lost</h2>{chart}</section>"


def _verdicts(runs: Sequence[RunForReport]) -> str:
    parts = []
    for run in runs:
        counts = run.result.verdict_counts(by_query_type=True)
        if counts.empty:
            continue
        table = counts.pivot_table(
            index="verdict",
            columns="query_type",
            values="count",
            aggfunc="sum",
            fill_value=0,
            observed=True,
        )
        table = table[table.sum(axis=1) > 0]
        totals = table.sum(axis=0)
        series = {
            str(v): [
                float(table.loc[v, q]) / totals[q] if totals[q] else 0.0 for q in table.columns
            ]
            for v in table.index
        }
        chart = grouped_bars(
            [str(q) for q in table.columns],
            series,
            title=f"{run.name}: verdicts per query type (share)",
            colours={v: verdict_colour(v) for v in series},
        )
        rows = [[str(v), *(int(x) for x in table.loc[v])] for v in table.index]
        parts.append(str(chart) + _table(["verdict", *map(str, table.columns)], rows))
        parts.append(_by_doc_type(run))
    return f"<section id='verdicts'><h2>Verdicts</h2>{''.join(parts)}</section>"


def _by_doc_type(run: RunForReport) -> str:
    """Where samples were lost per kind of source document, when the sources have kinds."""
    frame = run.result.view().losses_by_doc_type()
    if not len(frame) or set(frame["doc_type"]) <= {"(no type)"}:
        return ""
    header = [
        "document type",
        "samples",
        "pass",
        "parse",
        "chunking",
        "of which split",
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
            r["chunking"],
            r["split"],
            r["retrieval"],
            r["reranking"],
            r["generation"],
            r["other"],
        ]
        for _, r in frame.iterrows()
    ]
    return f"<h3>{escape(run.name)}: where samples were lost, by document type</h3>" + _table(
        header, rows
    )


def _refusals(runs: Sequence[RunForReport]) -> str:
    """Answers that decline, per run and query type, and the answer's measures over all
    samples and over answered ones side by side: refusing more cannot look better unseen."""
    rates, means = [], []
    for run in runs:
        view = run.result.view()
        overall = view.refusal_rates()
        if not overall["answered"]:
            continue
        rates.append([run.name, "all", overall["answered"], overall["refused"], overall["rate"]])
        for qtype, e in view.refusal_rates(by_query_type=True).items():
            rates.append([run.name, qtype, e["answered"], e["refused"], e["rate"]])
        summary = view.summary()
        for r in summary[summary["step"] == "answer"].to_dict("records"):
            means.append(
                [
                    run.name,
                    r["measure"],
                    r["mean"],
                    int(r["scored"]),
                    r["answered_mean"],
                    int(r["answered_scored"]),
                ]
            )
    if not rates:
        return ""
    return (
        "<section id='refusals'><h2>Refusals</h2>"
        + _table(["run", "query type", "answered", "refused", "refusal rate"], rates)
        + "<h3>The answer's measures over all samples and over answered ones</h3>"
        + _table(["run", "measure", "mean (all)", "samples", "mean (answered)", "answered"], means)
        + "</section>"
    )


def _histograms(runs: Sequence[RunForReport]) -> str:
    parts = []
    for run in runs:
        scores = run.result.scores
        charts = []
        for (step, measure), group in scores.groupby(["step", "measure"], sort=False):
            charts.append(histogram(group["value"].tolist(), title=f"{step}/{measure}"))
        parts.append(f"<h3>{escape(run.name)}</h3><div class='charts'>{''.join(charts)}</div>")
    return (
        "<section id='distributions'><h2>Per-sample distribution of every measure</h2>"
        + "".join(parts)
        + "</section>"
    )


def _latency(runs: Sequence[RunForReport]) -> str:
    rows = []
    for run in runs:
        for _, r in run.result.latency.iterrows():
            rows.append([run.name, r["stage"], r["p50"], r["p95"], int(r["n"])])
    if not rows:
        return ""
    header = ["run", "stage", "p50 s", "p95 s", "samples"]
    return f"<section id='latency'><h2>Stage latency</h2>{_table(header, rows)}</section>"


def _plan(runs: Sequence[RunForReport]) -> str:
    """How many questions and documents a drop of 0.02 needs, from the first two runs'
    paired differences (``cofe plan``'s table)."""
    from cofe.compare import plan_sample_size
    from cofe.report._compare_text import plan_rows

    if len(runs) < 2:
        return ""
    plan = plan_sample_size({r.name: r.result for r in runs[:2]}, headline_only=True)
    if plan.table.empty:
        return ""
    header, rows = plan_rows(plan)
    caveat = f" Caveat: {plan.inference.caveat}." if plan.inference.caveat else ""
    return (
        "<section id='plan'><h2>How many questions</h2>"
        f"<p class='muted'>To detect a drop of {plan.drop:g} with {plan.power:.0%} power "
        f"(two-sided, alpha {plan.alpha:g}), from {escape(plan.basis)}. Tests: "
        f"{escape(plan.inference.description)}.{escape(caveat)} "
        "'detectable now': the smallest drop these questions find; `cofe plan` makes the "
        "same table for any measure.</p>"
        f"{_table(header, rows)}</section>"
    )


def _comparison(comparison: Comparison) -> str:
    d = comparison.differences
    if d.empty:
        return ""
    d = in_pipeline_order(d[d.query_type == ALL])  # the chain's order, whoever built it
    parts = [
        f"<p class='muted'>{escape(comparison.clustering)}. Holm-corrected over every "
        "distinct test (measure, query type, pair; a measure whose values repeat an "
        "earlier one's is that test, counted once); bold: p_holm &lt; "
        f"{comparison.alpha:g}.</p>"
    ]
    if comparison.small_sample:
        parts.append(f"<p>{escape(comparison.small_sample)}</p>")
    if comparison.caveat:
        parts.append(f"<p>Caveat: {escape(comparison.caveat)}.</p>")
    parts.extend(f"<p class='muted'>Cutoffs: {escape(note)}.</p>" for note in comparison.cutoffs)
    for (a, b), pair in d.groupby(["a", "b"], sort=False):
        records = pair.to_dict("records")
        labels = [f"{r['step']}/{r['measure']}" for r in records]
        rows = [
            (label, r["difference"], r["low"], r["high"])
            for label, r in zip(labels, records, strict=True)
        ]
        parts.append(intervals(rows, title=f"{a} − {b}: paired difference, 95 % CI"))
        table_rows = []
        for label, r in zip(labels, records, strict=True):
            p_holm = r["p_holm"]
            p = f"<span class='sig'>{p_holm:.3g}</span>" if r["significant"] else f"{p_holm:.3g}"
            same = r.get("same_test_as", "") or ""
            if same:
                p += f" <span class='muted'>(same test as {escape(same)})</span>"
            table_rows.append(
                f"<tr><td>{escape(label)}</td>"
                f"<td>{r['difference']:+.3f}</td><td>[{r['low']:+.3f}, {r['high']:+.3f}]</td>"
                f"<td>{r['n']}</td><td>{escape(r['test'])}</td><td>{p}</td></tr>"
            )
        parts.append(
            "<table><thead><tr><th>measure</th><th>difference</th><th>95 % CI</th>"
            "<th>n</th><th>test</th><th>p (Holm)</th></tr></thead><tbody>"
            + "".join(table_rows)
            + "</tbody></table>"
        )
        moves = comparison.transitions[
            (comparison.transitions.a == a) & (comparison.transitions.b == b)
        ]
        matrix = moves.pivot_table(
            index="from", columns="to", values="count", aggfunc="sum", fill_value=0
        )
        rows2 = [
            [str(i), *(int(v) for v in row)]
            for i, row in zip(matrix.index, matrix.values, strict=True)
        ]
        parts.append(
            f"<h3>Verdict transitions {escape(str(a))} → {escape(str(b))}</h3>"
            + _table([f"{a} \\ {b}", *map(str, matrix.columns)], rows2)
        )
    return f"<section id='comparison'><h2>Comparison</h2>{''.join(parts)}</section>"


# strict mode drops a comma or apostrophe grouping thousands ("8,700" is the token "8700")
_GROUPING = re.compile(r"(?<=\d)[,'](?=\d{3}(?!\d))")
_TOKEN_CHAR = re.compile(r"[^\W_]")
_WORD_CHAR = re.compile(r"\w")


def _folded(text: str, fold: Callable[[str], str]) -> tuple[str, list[int]]:
    """``text`` folded character by character, with each folded character's origin in it."""
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        for c in fold(ch):
            chars.append(c)
            origin.append(i)
    return "".join(chars), origin


def _strict_token_spans(text: str) -> list[tuple[str, int, int]] | None:
    """The strict-mode tokens of ``text`` with where each is in it (None: they could not be
    placed exactly, so nothing is marked rather than something cofe did not match)."""
    folded, origin = _folded(text, lambda ch: unicodedata.normalize("NFKC", ch).casefold())
    grouping = {m.start() for m in _GROUPING.finditer(folded)}
    spans: list[tuple[str, int, int]] = []
    current: list[str] = []
    first = last = 0

    def close() -> None:
        if current:
            spans.append(("".join(current), origin[first], origin[last] + 1))
            current.clear()

    for j, c in enumerate(folded):
        if is_cjk(c):
            close()
            spans.append((c, origin[j], origin[j] + 1))
        elif _TOKEN_CHAR.match(c):
            if not current:
                first = j
            current.append(c)
            last = j
        elif j not in grouping:  # a grouping separator sits inside its number's token
            close()
    close()
    if [token for token, _, _ in spans] != strict_tokens(text):
        return None
    return spans


def strict_marks(text: str, keywords: Sequence[str]) -> list[tuple[int, int]]:
    """Whole-token occurrences of the usable keywords, as strict mode matches them: a bad
    label (one letter, only stopwords) is never marked, and "p" never inside "complexity"."""
    wanted: set[tuple[str, ...]] = set()
    for keyword in keywords:
        phrase = tuple(strict_tokens(keyword))
        if phrase and label_problem(normalize_strict(keyword), MatchMode.STRICT) is None:
            wanted.add(phrase)
    if not wanted:
        return []
    spans = _strict_token_spans(text)
    if spans is None:
        return []
    tokens = [token for token, _, _ in spans]
    marks = []
    for phrase in wanted:
        n = len(phrase)
        for i in range(len(tokens) - n + 1):
            if tokens[i] == phrase[0] and tuple(tokens[i : i + n]) == phrase:
                marks.append((spans[i][1], spans[i + n - 1][2]))
    return marks


def _cofe_rag_marks(text: str, keywords: Sequence[str]) -> list[tuple[int, int]]:
    """Occurrences as the cofe-rag mode matches them: substrings of the text with every
    non-word character removed (bad labels included: that mode matches them, and says so)."""
    wanted = {k for k in map(normalize_cofe_rag, keywords) if k}
    if not wanted:
        return []
    folded, origin = _folded(text, lambda ch: ch.lower() if _WORD_CHAR.match(ch) else "")
    merged: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    j = 0
    while j < len(folded):  # "一一" is folded into one "一", as the reference does
        pair = folded.startswith("一一", j)
        merged.append(folded[j])
        starts.append(origin[j])
        ends.append(origin[j + 1 if pair else j] + 1)
        j += 2 if pair else 1
    normal = "".join(merged)
    if normal != normalize_cofe_rag(text):
        return []
    marks = []
    for keyword in wanted:
        at = normal.find(keyword)
        while at >= 0:
            marks.append((starts[at], ends[at + len(keyword) - 1]))
            at = normal.find(keyword, at + 1)
    return marks


def _highlight(text: str, keywords: Sequence[str], mode: MatchMode = MatchMode.STRICT) -> str:
    """``text`` escaped, with every occurrence cofe matches of a keyword in <mark>: whole
    tokens in strict mode (a rejected bad label never), plain substrings in cofe-rag mode."""
    if mode is MatchMode.COFE_RAG:
        spans = _cofe_rag_marks(text, keywords)
    else:
        spans = strict_marks(text, keywords)
    spans.sort()
    out, at = [], 0
    for start, end in spans:
        if start < at:
            if end > at:
                out.append(f"<mark>{escape(text[at:end])}</mark>")
                at = end
            continue
        out.append(escape(text[at:start]))
        out.append(f"<mark>{escape(text[start:end])}</mark>")
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


def _keywords(sample: EvalSample | None) -> list[str]:
    if sample is None:
        return []
    words = [a for point in sample.fine_keywords for k in point for a in keyword_alternatives(k)]
    return words + list(sample.coarse_keywords)


def _mode(run: RunForReport) -> MatchMode:
    """How the run was scored: keywords are marked as that mode matches them."""
    mode = getattr(run.result.config, "mode", MatchMode.STRICT)
    return MatchMode(mode)


_GOOD = tuple(sorted(PASSES))  # every pass verdict (cofe.chain)


def _pick_cases(verdicts: pd.DataFrame, cap: int) -> pd.DataFrame:
    """Bad cases, every kind of verdict represented: taken round-robin across verdicts."""
    bad = verdicts[~verdicts["verdict"].isin(_GOOD)]
    groups = [g for _, g in bad.groupby("verdict", sort=True)]
    picked: list[pd.Series] = []
    i = 0
    while len(picked) < cap and any(i < len(g) for g in groups):
        for g in groups:
            if i < len(g) and len(picked) < cap:
                picked.append(g.iloc[i])
        i += 1
    return pd.DataFrame(picked)


def _cases(runs: Sequence[RunForReport], cap: int) -> str:
    cards, verdict_names, qtypes, docs, notes = [], set(), set(), set(), []
    for run in runs:
        verdicts = run.result.verdicts
        n_bad = int((~verdicts["verdict"].isin(_GOOD)).sum())
        picked = _pick_cases(verdicts, cap)
        notes.append(f"{run.name}: {len(picked)} of {n_bad} bad cases")
        points = run.result.points.groupby("sample_id")
        for _, v in picked.iterrows():
            cards.append(_card(run, v, points))
            verdict_names.add(v["verdict"])
            qtypes.add(v["query_type"])
            docs.add(v["source"] if isinstance(v["source"], str) else "")

    def select(name: str, label: str, values: set[str]) -> str:
        options = "".join(
            f"<option value='{escape(v, quote=True)}'>{escape(v or '(none)')}</option>"
            for v in sorted(values)
        )
        return (
            f"<label>{escape(label)} <select name='{name}'><option value=''>all</option>"
            f"{options}</select></label>"
        )

    filters = (
        "<div class='filters'>"
        + select("run", "run", {r.name for r in runs})
        + select("verdict", "verdict", verdict_names)
        + select("qtype", "query type", qtypes)
        + select("doc", "document", docs)
        + " <span class='muted'><span id='shown'>0</span> shown</span></div>"
    )
    note = "; ".join(notes) + (
        f" (at most {cap} per run, every verdict represented; the rest are in the results "
        "folder's verdicts.jsonl and points.csv)"
    )
    return (
        "<section id='cases'><h2>Bad cases</h2>"
        f"<p class='muted'>{escape(note)}</p>{filters}{''.join(cards)}</section>"
    )


# The per-point columns of steps the chain declares beyond the built-in record fields (a
# stage a team added, docs/DESIGN.md "The chain"): shown after the context's rank, titled
# by their step, so that a new stage reaches the report without an edit here.
_DECLARED_POINT_COLUMNS: tuple[tuple[str, str, str], ...] = tuple(
    (name, kind, f"{spec.title} ({'rank' if kind == 'rank' else 'found'})")
    for spec in STEP_SPECS
    if spec.field not in (None, "pool", "context", "answer")
    for name, kind in spec.columns[:1]
)


def _card(run: RunForReport, v: pd.Series, points: DataFrameGroupBy[Any, Literal[True]]) -> str:
    sid = str(v["sample_id"])
    sample = (run.samples or {}).get(sid)
    record = (run.records or {}).get(sid)
    keywords = _keywords(sample)
    mode = _mode(run)
    doc = v["source"] if isinstance(v["source"], str) else ""
    data = {"run": run.name, "verdict": v["verdict"], "qtype": v["query_type"], "doc": doc}
    attrs = "".join(f" data-{k}='{escape(str(x), quote=True)}'" for k, x in data.items())
    stage = f" at {v['stage']}" if isinstance(v["stage"], str) else ""
    parts = [
        f"<div class='case'{attrs}><h3>{escape(sid)} <span class='verdict'>"
        f"{escape(str(v['verdict']))}{escape(stage)}</span> <span class='muted'>"
        f"{escape(run.name)} · {escape(str(v['query_type']))}"
        f"{' · ' + escape(doc) if doc else ''}</span></h3>"
    ]
    if sample is not None:
        parts.append(f"<div><b>Query:</b> {escape(sample.query)}</div>")
    parts.append(f"<div class='muted'>{escape(str(v['explanation']))}</div>")
    if sid in points.groups:
        rows = [
            [
                p["keywords"],
                _flag(p["parse"]),
                _flag(p["corpus"]),
                _flag(p["intact"]),
                p["pool_rank"],
                p["context_rank"],
                *(
                    _flag(p.get(name)) if kind == "flag" else p.get(name)
                    for name, kind, _ in _DECLARED_POINT_COLUMNS
                ),
                _flag(p["answer"]),
                _conveyed(p),
                p["lost_at"],
            ]
            for _, p in points.get_group(sid).iterrows()
        ]
        header = [
            "information point",
            "parsed",
            "in corpus",
            "one chunk",
            "pool rank",
            "context rank",
            *(title for _, _, title in _DECLARED_POINT_COLUMNS),
            "in answer as written",
            "conveyed (by)",
            "lost at",
        ]
        parts.append(_table(header, [[None if pd.isna(x) else x for x in r] for r in rows]))
    parts.append(_context(run, record, keywords, mode))
    if record is not None and record.answer is not None:
        parts.append(f"<div><b>Answer:</b> {_highlight(record.answer, keywords, mode)}</div>")
    judgement = (run.judgements or {}).get(sid)
    if judgement is not None and judgement.claims:
        parts.append(_claims(judgement))
    if sample is not None and sample.reference_answer:
        parts.append(
            f"<div class='muted'><b>Reference:</b> {escape(sample.reference_answer)}</div>"
        )
    parts.append("</div>")
    return "".join(parts)


_CLAIM_LABEL = {
    "context": "supported by the context",
    "source_only": "supported by the source only",
    "unsupported": "supported by neither",
    "not_in_context": "not in the context (no source to check)",
}


def _claims(judgement: Judgement) -> str:
    """The judge's claims of the answer, each with where it is supported."""
    items = "".join(
        f"<li class='claim-{escape(c.label)}'>{escape(c.text)} "
        f"<span class='muted'>({escape(_CLAIM_LABEL[c.label])})</span></li>"
        for c in judgement.claims
    )
    return f"<div><b>Claims (judge {escape(judgement.model)}):</b><ul>{items}</ul></div>"


def _conveyed(point: pd.Series) -> str | None:
    """The answer step's decision on a point and the rule that decided: "undecided
    (paraphrase)", "present (judge)"."""
    decision, rule = point.get("answer_decision"), point.get("answer_rule")
    if not isinstance(decision, str):
        return None
    return f"{decision} ({rule})" if isinstance(rule, str) else decision


def _flag(value: object) -> str | None:
    if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
        return None
    return "yes" if bool(value) else "no"


def _context(
    run: RunForReport, record: CompactRecord | None, keywords: list[str], mode: MatchMode
) -> str:
    if record is None or run.log is None:
        return ""
    top_k = run.result.shape.get("top_k") or 4
    given = record.context if record.context is not None else (record.pool or ())[:top_k]
    chunks = []
    for rank, ref in enumerate(given, start=1):
        chunk = run.log.chunks.get(ref.chunk_id)
        text = chunk.text if chunk is not None else "(not in the run's corpus)"
        cut = text[:CHUNK_CHARS] + ("…" if len(text) > CHUNK_CHARS else "")
        chunks.append(
            f"<div class='chunk'><span class='muted'>#{rank} "
            f"{escape(ref.chunk_id)}</span>\n{_highlight(cut, keywords, mode)}</div>"
        )
    if not chunks:
        return ""
    return "<details><summary>What the generator saw</summary>" + "".join(chunks) + "</details>"
