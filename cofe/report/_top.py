"""The top of the HTML report: what a reader should take away before any chart.

- the headline: per run, the stage that loses the most samples (the verdicts' blamed
  stages) and the waterfall step where the share of information points present falls
  most; for several runs, what changed between each pair (``cofe compare``'s one-line
  answer, ``answer_line``) and how their pipelines differ; links to the bad cases;
- each run's pipeline as its manifest recorded it (``Pipeline.describe()``: splitter,
  chunk size, retriever, reranker, model ...), a setting that differs between runs
  highlighted -- apart from the scoring settings, which are cofe's, not the pipeline's.

Every value is escaped: a manifest is the pipeline's own words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from cofe.chain import STAGE_ORDER
from cofe.compare import ALL, Comparison, answer_line
from cofe.runlog import Stage

if TYPE_CHECKING:
    from cofe.report._html import RunForReport

VALUE_CHARS = 120  # characters of a pipeline setting shown (a prompt can be long)
NOT_SET = "(not set)"


def headline(runs: Sequence[RunForReport], comparison: Comparison | None, bad_cases: int) -> str:
    """The report's first section: one sentence per run (where it loses most), one per pair
    of runs (what changed), and links down the page."""
    sentences = [_losses(run) for run in runs]
    if comparison is not None:
        sentences += _changes(runs, comparison)
    items = "".join(f"<li>{escape(s)}</li>" for s in sentences)
    links = [f"<a href='#cases'>the bad cases ({bad_cases} shown)</a>"]
    links.append("<a href='#pipelines'>each run's pipeline</a>")
    links.append("<a href='#waterfall'>the loss waterfall</a>")
    if comparison is not None:
        links.append("<a href='#comparison'>the comparison</a>")
    return (
        "<section id='headline'><h2>In short</h2>"
        f"<ul class='headline'>{items}</ul>"
        f"<nav>Jump to: {' · '.join(links)}</nav></section>"
    )


def _losses(run: RunForReport) -> str:
    """Which stage loses most, by the samples whose verdict blames it, and where the loss
    waterfall falls most."""
    verdicts = run.result.verdicts
    scored = verdicts[verdicts["verdict"] != "unscorable"]
    if scored.empty:
        return f"{run.name}: no sample could be scored."
    blamed = scored["stage"].dropna().astype(str)
    if blamed.empty:
        said = f"{run.name}: no stage lost a sample ({len(scored)} scored)"
    else:
        counts = blamed.value_counts()
        top = int(counts.max())
        worst = sorted((str(s) for s, n in counts.items() if n == top), key=_stage_place)
        kinds = scored.loc[scored["stage"].astype(str).isin(worst), "verdict"].value_counts()
        how = ", ".join(f"{v} {n}" for v, n in kinds.items())
        said = (
            f"{run.name}: {' and '.join(worst)} {'lose' if len(worst) > 1 else 'loses'} most "
            f"— {top} of {len(scored)} scored samples{' each' if len(worst) > 1 else ''} "
            f"({how})"
        )
    fall = _largest_fall(run)
    return said + (f"; {fall}." if fall else ".")


def _stage_place(value: str) -> int:
    """A stage's place in the pipeline (one cofe does not know: last)."""
    try:
        return STAGE_ORDER[Stage(value)]
    except ValueError:
        return len(STAGE_ORDER)


def _largest_fall(run: RunForReport) -> str:
    """Where the share of information points still present falls most between two
    consecutive waterfall steps ("" when it never falls)."""
    fall = run.result.waterfall()
    steps, recalls = [str(s) for s in fall["step"]], [float(r) for r in fall["recall"]]
    best, at = 0.0, -1
    for i in range(1, len(steps)):
        drop = recalls[i - 1] - recalls[i]
        if drop > best + 1e-12:
            best, at = drop, i
    if at < 0:
        return ""
    return (
        f"the share of information points present falls most from {steps[at - 1]} to "
        f"{steps[at]} ({recalls[at - 1]:.2f} → {recalls[at]:.2f})"
    )


def _changes(runs: Sequence[RunForReport], comparison: Comparison) -> list[str]:
    """Per pair of runs: the better run per stage with its measure and interval, or that
    nothing differs significantly -- and what their pipelines' settings change."""
    d = comparison.differences
    if d.empty:
        return ["The runs share no measure: nothing was compared."]
    by_name = {run.name: run for run in runs}
    lines = []
    for (a, b), pair in d[d.query_type == ALL].groupby(["a", "b"], sort=False):
        line = answer_line(pair, str(a), str(b))
        if comparison.small_sample and not pair["significant"].astype(bool).any():
            line += " (too few source documents for any test to reach significance)"
        changed = _setting_changes(by_name.get(str(a)), by_name.get(str(b)))
        if changed:
            line += f"; pipeline {a} → {b}: {changed}"
        lines.append(line + ".")
    return lines


def _setting_changes(a: RunForReport | None, b: RunForReport | None) -> str:
    """The pipeline settings that differ between two runs, "key: old → new"."""
    if a is None or b is None:
        return ""
    left, right = pipeline_settings(a), pipeline_settings(b)
    if left is None or right is None:
        return ""
    keys = list(dict.fromkeys([*left, *right]))
    said = [
        f"{k} {_cut(left.get(k, NOT_SET), 40)} → {_cut(right.get(k, NOT_SET), 40)}"
        for k in keys
        if left.get(k) != right.get(k)
    ]
    return ", ".join(said)


def pipeline_settings(run: RunForReport) -> dict[str, str] | None:
    """The run's pipeline configuration from its manifest, nested keys joined by dots
    (None: no run log to read it from)."""
    if run.log is None:
        return None
    flat: dict[str, str] = {}
    _flatten(run.log.manifest.pipeline, "", flat)
    return flat


def _flatten(value: Mapping[str, Any], prefix: str, into: dict[str, str]) -> None:
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping) and item:
            _flatten(item, f"{name}.", into)
        else:
            into[name] = _text(item)


def _text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value) or "(empty)"
    return str(value)


def _cut(text: str, limit: int = VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pipelines(runs: Sequence[RunForReport]) -> str:
    """Each run's pipeline configuration, one row per setting, one column per run; with
    several runs a setting that differs is highlighted."""
    settings = {run.name: pipeline_settings(run) for run in runs}
    keys = list(dict.fromkeys(k for s in settings.values() if s for k in s))
    intro = (
        "<p class='muted'>As each run's manifest recorded it (the pipeline's "
        "<code>describe()</code>); the scoring settings are cofe's, in the table above."
        + (" Highlighted: a setting that differs between the runs." if len(runs) > 1 else "")
        + "</p>"
    )
    if not keys:
        return (
            "<section id='pipelines'><h2>Pipeline configuration</h2>"
            "<p>No run recorded its pipeline's configuration (an empty "
            "<code>describe()</code>, or no run log).</p></section>"
        )
    head = "<th>setting</th>" + "".join(f"<th>{escape(name)}</th>" for name in settings)
    rows = []
    for key in keys:
        values = [
            (s.get(key, NOT_SET) if s is not None else "(no run log)") for s in settings.values()
        ]
        changed = len(runs) > 1 and len(set(values)) > 1
        cells = "".join(f"<td>{escape(_cut(v))}</td>" for v in values)
        mark = " class='hl'" if changed else ""
        rows.append(f"<tr{mark}><td>{escape(key)}</td>{cells}</tr>")
    return (
        "<section id='pipelines'><h2>Pipeline configuration</h2>"
        f"{intro}<table class='rows'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def scoring_label(run: RunForReport) -> str:
    """The scoring settings in a few words ("cofe's defaults" when none was changed)."""
    label = str(run.result.config.label() or "")
    return label or "cofe's defaults"
