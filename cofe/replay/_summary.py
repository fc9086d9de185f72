"""What a replay pass tells a team: what fixing each stage is worth, and which verdicts held.

* **Fix value per stage**: answers recovered (a failed sample that passes under the oracle)
  as a share of *all* scored samples, with a paired bootstrap CI from cofe.compare (the run's
  pass/fail against the same samples with the recovered ones passing; clustered by source
  document when samples share documents) -- ranked: "fix this first".
  - retrieval: the ``pool`` oracle (the run's own reranker and generator after it);
  - reranking (a run with a reranker): the ``context`` oracle on samples whose oracle chunks
    were already in the run's pool -- a perfect reranker could have put them there;
  - chunking: the ``chunking`` oracle (re-chunked, re-indexed, everything after it real);
  - the ``context`` oracle on every sample is the ceiling (everything before the generator
    right); ``no-noise`` says whether distractors are what the generator fails on.
* **Verdict confirmation rate per verdict class**: a loss blamed on a stage is confirmed when
  that stage's oracle recovers the answer (chunking -> chunking, else the context oracle's
  span; retrieval -> pool; reranking -> context); a generation verdict is confirmed when the
  oracle context does *not* recover it (the point was in the context already).
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cofe.compare import Interval, paired_difference
from cofe.replay._replay import PASS, Oracle, ReplayRun
from cofe.report import format_table
from cofe.runlog import Stage

LOSS_ORACLE = {
    "chunking": Oracle.CHUNKING,
    "retrieval": Oracle.POOL,
    "reranking": Oracle.CONTEXT,
    "generation": Oracle.CONTEXT,
}
EXAMPLES = 5


@dataclass(frozen=True)
class StageFix:
    stage: str
    oracle: Oracle
    how: str
    recovered: int
    replayed: int
    interval: Interval  # share of all scored samples
    regressed: int  # passing samples that failed under the oracle (when passing ones replayed)


@dataclass(frozen=True)
class VerdictCheck:
    verdict: str
    stage: str | None
    oracle: Oracle | None
    samples: int
    replayed: int
    confirmed: int
    no_oracle: int
    unrecovered: list[dict[str, Any]]
    # the same, over the samples whose answer the generator gives from the gold context: the
    # context oracle's (the oracle chunks first, the rest of the context as the run assembled
    # it, the run's context size) -- the same generator and the same assembly the loss
    # oracles end in, so a loss verdict is checked only where the generator can answer at all.
    # Not for the verdicts checked by the context oracle itself (generation, reranking): there
    # the control is the check
    answerable: int = 0
    confirmed_answerable: int = 0
    # the same over the samples whose answer the generator gives from the oracle chunks alone
    # (no-noise): distractors taken out too -- a wider control, on another context
    answerable_alone: int = 0
    confirmed_alone: int = 0
    # loss verdicts: replays whose loss moved past the blamed stage (the new verdict names a
    # later stage, or none): the oracle fixed that stage, whatever the generator then did
    moved: int = 0

    @property
    def rate(self) -> float | None:
        return self.confirmed / self.replayed if self.replayed else None

    @property
    def moved_rate(self) -> float | None:
        return self.moved / self.replayed if self.replayed and self.stage != "generation" else None

    @property
    def rate_answerable(self) -> float | None:
        return self.confirmed_answerable / self.answerable if self.answerable else None

    @property
    def rate_alone(self) -> float | None:
        return self.confirmed_alone / self.answerable_alone if self.answerable_alone else None


def _recovered(run: ReplayRun, sid: str, oracle: Oracle) -> bool | None:
    """Whether the replayed answer conveys every point (None: not replayed under this oracle,
    or the replay failed)."""
    return run.answer_ok.get((sid, oracle))


def _clusters(run: ReplayRun, ids: list[str]) -> np.ndarray | None:
    """Source document per sample when samples share documents (as cofe compare clusters)."""
    sources = [run.sources.get(sid) for sid in ids]
    named = [s for s in sources if s]
    if not named or max(named.count(s) for s in set(named)) < 2:
        return None
    return np.array(
        [f"doc:{s}" if s else f"sample:{sid}" for sid, s in zip(ids, sources, strict=True)]
    )


def stage_fixes(run: ReplayRun) -> list[StageFix]:
    """Each stage's fix value, best first."""
    ids = sorted(run.verdicts)
    before = np.array([run.verdicts[sid] == PASS for sid in ids], dtype=float)
    clusters = _clusters(run, ids)
    oracle_of = {t.sample.id: t.oracle for t in run.plan.targets}
    fixes = []
    rows: list[tuple[str, Oracle, str, Any]] = []
    if Oracle.CHUNKING not in run.plan.why_not:
        rows.append(("chunking", Oracle.CHUNKING, "re-chunked so no lost point is cut", None))
    # a sample whose oracle is a source span needs chunking fixed first: not retrieval's
    rows.append(
        (
            "retrieval",
            Oracle.POOL,
            "oracle chunks first in the pool, where no point needs a source span",
            lambda sid: not oracle_of[sid].spans,
        )
    )
    if run.has_reranker:
        rows.append(
            (
                "reranking",
                Oracle.CONTEXT,
                "oracle context, where the pool already held the chunks",
                lambda sid: oracle_of[sid].in_pool,
            )
        )
    rows.append(
        ("(ceiling)", Oracle.CONTEXT, "oracle context: everything before the generator", None)
    )
    rows.append(
        ("(no distractors)", Oracle.NO_NOISE, "the context holds only the oracle chunks", None)
    )
    for stage, oracle, how, only in rows:
        if oracle not in run.plan.oracles or oracle in run.plan.why_not:
            continue
        after = before.copy()
        recovered = replayed = regressed = 0
        for i, sid in enumerate(ids):
            passed = _recovered(run, sid, oracle)
            if passed is None or (only is not None and not only(sid)):
                continue
            replayed += 1
            if passed and not before[i]:
                recovered += 1
            if not passed and before[i]:
                regressed += 1
            after[i] = float(passed)
        test = paired_difference(after, before, clusters)
        fixes.append(StageFix(stage, oracle, how, recovered, replayed, test.difference, regressed))
    real = sorted(
        (f for f in fixes if not f.stage.startswith("(")), key=lambda f: -f.interval.estimate
    )
    return real + [f for f in fixes if f.stage.startswith("(")]


def verdict_checks(run: ReplayRun) -> list[VerdictCheck]:
    """Per verdict class of the replayed samples: how often its matching oracle confirms it."""
    groups: dict[str, list[Any]] = {}
    for target in run.plan.targets:
        groups.setdefault(target.verdict, []).append(target)
    checks = []
    for verdict, targets in groups.items():
        stage = targets[0].stage
        oracle = LOSS_ORACLE.get(stage or "")
        if oracle is Oracle.CHUNKING and (
            Oracle.CHUNKING in run.plan.why_not or Oracle.CHUNKING not in run.plan.oracles
        ):
            oracle = Oracle.CONTEXT  # the span placed whole in the context stands in for it
        replayed = confirmed = no_oracle = answerable = confirmed_answerable = moved = 0
        alone = confirmed_alone = 0
        # the control is another replay than the check (not the context oracle itself)
        controlled = oracle is not None and oracle is not Oracle.CONTEXT
        unrecovered: list[dict[str, Any]] = []
        for target in targets:
            if not target.oracle.usable:
                no_oracle += 1
                continue
            passed = _recovered(run, target.sample.id, oracle) if oracle else None
            if passed is None:
                continue
            replayed += 1
            is_generation = stage == "generation"
            if passed != is_generation:
                confirmed += 1
            if oracle is not None and _moved_past(
                stage, run.new_verdicts.get((target.sample.id, oracle))
            ):
                moved += 1
            if controlled and _recovered(run, target.sample.id, Oracle.CONTEXT):
                answerable += 1
                confirmed_answerable += passed != is_generation
            if _recovered(run, target.sample.id, Oracle.NO_NOISE):
                alone += 1
                confirmed_alone += passed != is_generation
            if not passed and len(unrecovered) < EXAMPLES:
                assert oracle is not None
                record = run.records[(target.sample.id, oracle)]
                unrecovered.append(
                    {
                        "sample_id": target.sample.id,
                        "query": target.sample.query,
                        "reference": target.sample.reference_answer,
                        "answer_before": target.record.answer,
                        "answer_after": record.answer,
                        "verdict_after": run.new_verdicts.get((target.sample.id, oracle)),
                        "oracle_chunks": record.oracle_chunks,
                    }
                )
        checks.append(
            VerdictCheck(
                verdict,
                stage,
                oracle,
                len(targets),
                replayed,
                confirmed,
                no_oracle,
                unrecovered,
                answerable=answerable,
                confirmed_answerable=confirmed_answerable,
                answerable_alone=alone,
                confirmed_alone=confirmed_alone,
                moved=moved,
            )
        )
    return sorted(checks, key=lambda c: -c.samples)


def _moved_past(stage: str | None, verdict: str | None) -> bool:
    """The new verdict blames a stage after ``stage``, or none (the answer passed)."""
    from cofe.chain import STAGE_ORDER
    from cofe.diagnose import Verdict

    if stage is None or verdict is None or verdict not in Verdict._value2member_map_:
        return False
    now = Verdict(verdict).stage
    if now is None:
        return verdict == PASS
    return STAGE_ORDER[now] > STAGE_ORDER[Stage(stage)]


def cost(run: ReplayRun) -> dict[str, Any]:
    """Calls and seconds spent, in all and per replayed sample (cached replays cost nothing)."""
    calls: dict[str, int] = {}
    seconds = 0.0
    made = cached = 0
    for record in run.records.values():
        if record.cached:
            cached += 1
            continue
        made += 1
        seconds += record.seconds
        for stage, n in record.calls.items():
            calls[stage] = calls.get(stage, 0) + n
    samples = len({sid for sid, _ in run.records})
    return {
        "replays": len(run.records),
        "made": made,
        "from_cache": cached,
        "calls": calls,
        "seconds": round(seconds, 3),
        "seconds_per_replay": round(seconds / made, 4) if made else None,
        "calls_per_sample": {k: round(v / samples, 3) for k, v in calls.items()} if samples else {},
        "samples": samples,
    }


def headline(fixes: list[StageFix]) -> str:
    """The one line a team acts on: the stage whose fix recovers most, with its interval."""
    best = next((f for f in fixes if not f.stage.startswith("(")), None)
    ceiling = next((f for f in fixes if f.stage == "(ceiling)"), None)
    if best is None or best.recovered == 0:
        if ceiling is not None and ceiling.recovered:
            return (
                f"no single stage's fix recovered an answer; a perfect context recovers "
                f"+{ceiling.recovered} ({_interval(ceiling.interval)}): the stages must be "
                "fixed together"
            )
        return (
            "no oracle recovered an answer: with the points in its context the generator "
            "still fails -- fix the generator first"
        )
    return (
        f"fix the {best.stage} first: +{best.recovered} answer"
        f"{'' if best.recovered == 1 else 's'} ({_interval(best.interval)})"
    )


def distractor_note(fixes: list[StageFix]) -> str | None:
    """Said under the headline when the oracle chunks alone recover more than any stage's fix:
    the generator loses points it was given among the other chunks (or the context is too big)."""
    alone = next((f for f in fixes if f.oracle is Oracle.NO_NOISE), None)
    best = max((f.recovered for f in fixes if not f.stage.startswith("(")), default=0)
    ceiling = max((f.recovered for f in fixes if f.stage == "(ceiling)"), default=0)
    if alone is None or alone.recovered <= max(best, ceiling):
        return None
    return (
        f"but: given the oracle chunks alone, the generator answers +{alone.recovered} "
        f"({_interval(alone.interval)}): it loses points it was given among the other "
        "chunks -- a better generator, or a smaller context, is worth more than any one stage"
    )


def _interval(iv: Interval) -> str:
    if iv.method == "none":
        return f"{_pct(iv.estimate)} of {iv.n} samples; no interval: one source document"
    return f"{_pct(iv.estimate)} of {iv.n} samples, 95% CI [{_pct(iv.low)}, {_pct(iv.high)}]"


def _pct(value: float) -> str:
    return "n/a" if value != value else f"{value * 100:+.1f}%"


def to_dict(run: ReplayRun) -> dict[str, Any]:
    fixes = stage_fixes(run)
    return {
        "run": run.run,
        "scores": run.scores,
        "samples": run.total_samples,
        "replayed_samples": len(run.plan.targets),
        "selected_verdicts": run.plan.by_verdict,
        "oracles": [o.value for o in run.plan.oracles],
        "cannot_replay": {o.value: why for o, why in run.plan.why_not.items()},
        "no_oracle": [t.sample.id for t in run.plan.no_oracle],
        "headline": headline(fixes),
        "distractor_note": distractor_note(fixes),
        "fix_value": [
            {
                "stage": f.stage,
                "oracle": f.oracle.value,
                "how": f.how,
                "recovered": f.recovered,
                "replayed": f.replayed,
                "regressed": f.regressed,
                "share": f.interval.estimate,
                "ci_low": f.interval.low,
                "ci_high": f.interval.high,
                "n": f.interval.n,
                "clusters": f.interval.clusters,
            }
            for f in fixes
        ],
        "verdicts": [
            {
                "verdict": c.verdict,
                "stage": c.stage,
                "oracle": c.oracle.value if c.oracle else None,
                "samples": c.samples,
                "replayed": c.replayed,
                "confirmed": c.confirmed,
                "confirmation_rate": c.rate,
                "answerable": c.answerable,
                "confirmed_answerable": c.confirmed_answerable,
                "confirmation_rate_answerable": c.rate_answerable,
                "answerable_alone": c.answerable_alone,
                "confirmed_alone": c.confirmed_alone,
                "confirmation_rate_alone": c.rate_alone,
                "moved": c.moved,
                "moved_rate": c.moved_rate,
                "no_oracle": c.no_oracle,
                "unrecovered": c.unrecovered,
            }
            for c in verdict_checks(run)
        ],
        "cost": cost(run),
        "runs": {oracle.value: str(path) for oracle, path in run.runs.items()},
        "replays": [
            {
                **r.model_dump(mode="json", exclude={"key"}),
                "verdict_before": run.verdicts.get(sid),
                "verdict_after": run.new_verdicts.get((sid, oracle)),
                "recovered": run.answer_ok.get((sid, oracle)),
            }
            for (sid, oracle), r in sorted(run.records.items())
        ],
    }


def render(run: ReplayRun) -> str:
    """The text report."""
    fixes = stage_fixes(run)
    out = [
        f"cofe replay: run {run.run} (scoring {run.scores}); {run.total_samples} scored samples, "
        f"{len(run.plan.targets)} replayed"
        + (
            " (" + ", ".join(f"{v} {n}" for v, n in sorted(run.plan.by_verdict.items())) + ")"
            if run.plan.by_verdict
            else ""
        ),
    ]
    for oracle, why in run.plan.why_not.items():
        if oracle in run.plan.oracles:
            out.append(f"oracle {oracle.value}: not replayed: {why}")
    if (Path(run.run) / "judgements.jsonl").exists():
        out.append(
            "note: this run was judged (cofe judge); the judge has not read the replayed "
            "answers, so they are scored by the answer matcher alone"
        )
    if run.plan.no_oracle:
        out.append(
            f"{len(run.plan.no_oracle)} sample(s) have no oracle (a lost point is in no chunk "
            "and no source span: parsing lost it, or the run holds no text with it); counted "
            "as not recovered"
        )
    out += [
        "",
        f"What fixing each stage is worth (answers recovered, as a share of all "
        f"{run.total_samples} samples; 95% CI paired by sample"
        + (
            ", clustered by source document)"
            if _clusters(run, sorted(run.verdicts)) is not None
            else ")"
        ),
        format_table(
            ["fix", "oracle", "recovered", "of replayed", "share", "95% CI"],
            [
                [
                    f.stage,
                    f.oracle.value,
                    str(f.recovered),
                    str(f.replayed),
                    _pct(f.interval.estimate),
                    (
                        "- (one document)"
                        if f.interval.method == "none"
                        else f"[{_pct(f.interval.low)}, {_pct(f.interval.high)}]"
                    ),
                ]
                for f in fixes
            ],
        ),
        "",
        headline(fixes),
    ]
    note = distractor_note(fixes)
    if note:
        out.append(note)
    regressed = [f for f in fixes if f.regressed]
    for f in regressed:
        out.append(
            f"  note: {f.regressed} passing sample(s) failed under the {f.oracle.value} oracle"
        )
    checks = verdict_checks(run)
    out += [
        "",
        "Verdicts checked by intervention (confirmed: a loss verdict's own oracle recovers the "
        "answer; a generation verdict's oracle context does not; where answerable: over the "
        "samples the generator answers from the gold context -- the oracle context, assembled "
        "as the run assembles its context --, or from the oracle chunks alone; loss moved on: "
        "the new verdict blames a later stage, or none)",
        format_table(
            [
                "verdict",
                "stage",
                "oracle",
                "samples",
                "replayed",
                "confirmed",
                "rate",
                "rate where answerable",
                "from the chunks alone",
                "loss moved on",
                "no oracle",
            ],
            [
                [
                    c.verdict,
                    c.stage or "-",
                    c.oracle.value if c.oracle else "-",
                    str(c.samples),
                    str(c.replayed),
                    str(c.confirmed),
                    "-" if c.rate is None else f"{c.rate * 100:.0f}%",
                    "-"
                    if c.rate_answerable is None
                    else f"{c.rate_answerable * 100:.0f}% of {c.answerable}",
                    "-"
                    if c.rate_alone is None
                    else f"{c.rate_alone * 100:.0f}% of {c.answerable_alone}",
                    "-" if c.moved_rate is None else f"{c.moved_rate * 100:.0f}%",
                    str(c.no_oracle),
                ]
                for c in checks
            ],
        ),
    ]
    shown = [c for c in checks if c.unrecovered]
    if shown:
        out += ["", "Not recovered by the matching oracle (both answers side by side)"]
        for c in shown:
            for ex in c.unrecovered:
                out.append(
                    f"  [{c.verdict} -> {ex['verdict_after']}] {ex['sample_id']}: {ex['query']}"
                )
                if ex["reference"]:
                    out.append(f"      reference: {_short(ex['reference'])}")
                out.append(f"      before:    {_short(ex['answer_before'])}")
                out.append(f"      after:     {_short(ex['answer_after'])}")
    spent = cost(run)
    calls = ", ".join(f"{k} {v}" for k, v in sorted(spent["calls"].items())) or "none"
    out += [
        "",
        f"Cost: {spent['replays']} replays ({spent['from_cache']} from the cache or a previous "
        f"pass); calls made: {calls}; {spent['seconds']:.1f} s"
        + (
            f" ({spent['seconds_per_replay']:.3f} s a replay)"
            if spent["seconds_per_replay"] is not None
            else ""
        ),
        f"replays kept in {run.out}",
    ]
    if run.runs:
        # the scored runs beside RUN: compare's own paired statistics on any of them
        first = next(iter(run.runs.values()))
        out.append(
            "each oracle's answers as a scored run: "
            + ", ".join(str(path) for path in run.runs.values())
            + f" (cofe compare {run.scores} {first})"
        )
    return "\n".join(out)


def _short(text: str | None, width: int = 110) -> str:
    if text is None:
        return "(no answer)"
    return textwrap.shorten(" ".join(text.split()), width, placeholder=" ...") or "(empty)"


def _chart(data: dict[str, Any]) -> str:
    from cofe.charts import intervals

    rows = [
        (f["stage"], f["share"], f["ci_low"], f["ci_high"])
        for f in data["fix_value"]
        if f["replayed"] and f["share"] == f["share"] and f["ci_low"] == f["ci_low"]
    ]
    return intervals(rows, title="answers recovered, share of all samples") if rows else ""


def render_html(run: ReplayRun) -> str:
    """The replay as one self-contained HTML page: the fix table with its intervals drawn by
    cofe.charts, the verdict checks and the unrecovered answers side by side (escaped by the
    template: answers are text a generator wrote)."""
    from cofe.charts import STYLESHEET, templates

    data = to_dict(run)
    page = templates("cofe.replay").get_template("replay.html")
    text: str = page.render(data=data, chart=_chart(data), stylesheet=STYLESHEET)
    return text


SUMMARY_FILE = "fix-value.json"  # beside replay.jsonl: what cofe report shows of a replay


def write_summary(run: ReplayRun) -> Path:
    """What the pass found, as ``OUT/fix-value.json`` (``to_dict`` less the per-replay list,
    which replay.jsonl holds): read by ``report_section`` without replaying anything."""
    from datetime import UTC, datetime

    from cofe._atomic import write_text_atomically

    data = {k: v for k, v in to_dict(run).items() if k != "replays"}
    data["written"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    path = run.out / SUMMARY_FILE
    write_text_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


def report_section(run_dir: Path, name: str, anchor: str) -> str | None:
    """The "what a fix is worth" section of ``cofe report``'s page for a run with a replay
    (``RUN/replay/fix-value.json``), None without one. A file that is not the replay's
    summary is one line naming it, not a traceback."""
    from cofe._errors import InputError, InputProblem
    from cofe.charts import templates

    path = run_dir / "replay" / SUMMARY_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        fragment = templates("cofe.replay").get_template("section.html")
        body: str = fragment.render(data=data, chart=_chart(data))
    except (ValueError, KeyError, TypeError) as error:  # jinja's undefined is a KeyError kin
        raise InputError(
            InputProblem(
                str(path),
                None,
                None,
                f"not a replay summary cofe can read ({type(error).__name__}: {error}); "
                "run cofe replay again",
            )
        ) from None
    from html import escape

    return (
        f"<section id='{escape(anchor)}' class='fix-value-section'>"
        f"<h2>What a fix is worth: {escape(name)}</h2>"
        f"<p class='muted'>From <code>cofe replay</code> of {escape(str(data.get('scores')))}, "
        f"{escape(str(data.get('written', '')))}.</p>{body}</section>"
    )
