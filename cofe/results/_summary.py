"""What a scoring adds up to, computed from its tables a part at a time.

Every figure of ``summary.json`` and of the terminal report is a sum or a
count over samples (means are sums over counts), so the summary of a whole
scoring is the sum of the summaries of its parts. ``ScoreResult`` (all rows
in memory) and the streaming scorer (rows written a batch at a time, memory
flat in the number of samples) both add their tables here, and both read
their summary from the one :class:`ScoreSummary` this builds: one
implementation of every figure, whichever way the rows were made.
"""

from __future__ import annotations

import json
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from cofe._errors import InputProblem
from cofe._version import __version__
from cofe.chain import STAGES
from cofe.diagnose import STEPS, Verdict

if TYPE_CHECKING:
    from cofe.results._result import ScoreResult

_STEP_ORDER = {step.value: i for i, step in enumerate(STEPS)}
_VERDICT_ORDER = [v.value for v in Verdict]
_PASSES = frozenset(v.value for v in Verdict if v.is_pass)
ANSWER_STEP = "answer"
FIRST_PROBLEMS = 50


def latency_table(seconds: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """Per stage: mean, p50, p95 and count of the recorded latencies."""
    stages = sorted(stage for stage in seconds if len(seconds[stage]))
    values = [np.asarray(seconds[stage], dtype=np.float64) for stage in stages]
    if not stages:
        return pd.DataFrame(columns=["stage", "mean", "p50", "p95", "n"])
    frame = pd.DataFrame(
        {
            "stage": np.repeat(np.arange(len(stages), dtype=np.int8), [len(v) for v in values]),
            "seconds": np.concatenate(values),
        }
    )
    grouped = frame.groupby("stage")["seconds"]  # pandas' own sums: the figures do not depend
    # on whether the rows came in one part or many
    table = pd.DataFrame(
        {
            "mean": grouped.mean(),
            "p50": grouped.median(),
            "p95": grouped.quantile(0.95),
            "n": grouped.count(),
        }
    )
    table.index = [stages[i] for i in table.index]
    return table.rename_axis("stage").reset_index()


@dataclass
class SummaryAccumulator:
    """Sums and counts over the rows of a scoring, added a table part at a time."""

    # (query type, step, measure): [total, count]
    measures: dict[tuple[str, ...], list[float]] = field(default_factory=dict)
    # (query type, step, measure)
    unscored: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    # (step, measure, reason)
    reasons: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    recalls: dict[tuple[str, ...], list[float]] = field(default_factory=dict)  # (query type, step)
    verdicts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (query type, verdict)
    examples: dict[str, tuple[str, str]] = field(default_factory=dict)  # first bad case each
    findings: Counter[str] = field(default_factory=Counter)
    judged: Counter[str] = field(default_factory=Counter)  # keyword vs judge agreement counts
    latency: dict[str, array[float]] = field(default_factory=dict)
    # the answer's measures over answered samples only (an answer that is not a refusal)
    answered_measures: dict[tuple[str, ...], list[float]] = field(default_factory=dict)
    # (query type, "answered" | "refused")
    refusals: Counter[tuple[str, str]] = field(default_factory=Counter)
    answer_points: Counter[tuple[str, str]] = field(default_factory=Counter)  # (decision, rule)
    # (document type, verdict, stage): where samples of each kind of source were lost
    doc_types: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    def add_tables(self, result: ScoreResult) -> None:
        """Add one part's rows (``latency`` is added from raw seconds, see ``add_latency``)."""
        _add_sums(self.measures, result.scores, ["query_type", "step", "measure"])
        self._add_refusals(result.verdicts, result.scores)
        _add_sums(self.recalls, result.recalls, ["query_type", "step"])
        skipped = result.skipped
        if len(skipped):
            self.unscored.update(_counts(skipped, ["query_type", "step", "measure"]))
            self.reasons.update(_counts(skipped, ["step", "measure", "reason"]))
        verdicts = result.verdicts
        if len(verdicts):
            self.verdicts.update(_counts(verdicts, ["query_type", "verdict"]))
            if "source" in verdicts:
                kinds = verdicts["source"].map(doc_type)
                stages = verdicts["stage"].fillna("")
                self.doc_types.update(zip(kinds, verdicts["verdict"], stages, strict=True))
            bad = verdicts[~verdicts["verdict"].isin(_PASSES)]
            for verdict, sample_id, explanation in zip(
                bad["verdict"], bad["sample_id"], bad["explanation"], strict=True
            ):
                self.examples.setdefault(str(verdict), (str(sample_id), str(explanation)))
        self._add_findings(result.points)
        self._add_judge_agreement(result.scores)

    def _add_refusals(self, verdicts: pd.DataFrame, scores: pd.DataFrame) -> None:
        """Refusals per query type, and the answer's measures without them: a pipeline that
        declines more must not look better (or worse) by the samples it declined."""
        if not len(verdicts) or "refusal" not in verdicts:
            return
        answered = verdicts["answered"].fillna(False).astype(bool)
        refused = verdicts["refusal"].notna() & answered
        for qtype, n in verdicts.loc[answered, "query_type"].value_counts(sort=False).items():
            self.refusals[(str(qtype), "answered")] += int(n)
        for qtype, n in verdicts.loc[refused, "query_type"].value_counts(sort=False).items():
            self.refusals[(str(qtype), "refused")] += int(n)
        _add_sums(
            self.answered_measures,
            answered_only(scores, verdicts),
            ["query_type", "step", "measure"],
        )

    def add_latency(self, seconds: Mapping[str, Iterable[float]]) -> None:
        for stage, values in seconds.items():
            self.latency.setdefault(stage, array("d")).extend(values)

    def _add_findings(self, points: pd.DataFrame) -> None:
        if not len(points):
            return
        if "answer_decision" in points:
            decided = points[points["answer_decision"].notna()]
            self.answer_points.update(_counts(decided, ["answer_decision", "answer_rule"]))
        judged = points["anchored"].notna()
        lone = judged & (points["anchored"] == False)  # noqa: E712 (nullable boolean)
        self.findings["points_held_whole"] += int(judged.sum())
        self.findings["held_only_by_chunks_not_naming_the_entity"] += int(lone.sum())
        self.findings["of_those_in_the_pool"] += int((lone & points["pool_rank"].notna()).sum())
        self.findings["of_those_in_the_context"] += int(
            (lone & points["context_rank"].notna()).sum()
        )

    def _add_judge_agreement(self, scores: pd.DataFrame) -> None:
        # the keyword verdict at the context (every point found: KeywordAccuracy@K) against the
        # LLM judge's (every reference claim supported: ContextRecall = 1), sample by sample
        s = scores[scores["step"] == "context"]
        llm = s[s["measure"] == "ContextRecall"].set_index("sample_id")["value"]
        keyword = s[s["measure"].str.startswith("KeywordAccuracy@")]
        self.judged["llm_rows"] += len(llm)
        self.judged["keyword_rows"] += len(keyword)
        if llm.empty or keyword.empty:
            return
        by_keyword = keyword.set_index("sample_id")["value"]
        both = pd.concat([by_keyword, llm], axis=1, keys=["keyword", "llm"], join="inner")
        kw_all, llm_all = both["keyword"] == 1.0, both["llm"] == 1.0
        self.judged["samples"] += len(both)
        self.judged["agree"] += int((kw_all == llm_all).sum())
        self.judged["keyword_found_judge_not"] += int((kw_all & ~llm_all).sum())
        self.judged["judge_found_keyword_not"] += int((~kw_all & llm_all).sum())


@dataclass
class ProblemTally:
    """How many input problems a scoring met, and the first ones (all are in problems.jsonl)."""

    count: int = 0
    first: list[InputProblem] = field(default_factory=list)

    def add(self, problems: Iterable[InputProblem]) -> None:
        for problem in problems:
            self.count += 1
            if len(self.first) < FIRST_PROBLEMS:
                self.first.append(problem)


@dataclass
class ScoreSummary:
    """The figures of one scoring: what ``summary.json`` holds and the terminal shows."""

    config: Any
    run: str
    run_id: str
    shape: dict[str, Any]
    evalset_sha256: str | None
    accumulated: SummaryAccumulator
    problems: ProblemTally
    latency_frame: pd.DataFrame | None = None  # given when the raw seconds are not at hand

    def summary(self, by_query_type: bool = False) -> pd.DataFrame:
        """Per (step, measure): the mean over scored samples, and how many were scored/unscored;
        for the answer's measures also the mean over answered samples (refusals left out)."""
        keys = ["query_type", "step", "measure"] if by_query_type else ["step", "measure"]
        acc = self.accumulated
        table = _merged(acc.measures, by_query_type)
        unscored: Counter[tuple[str, ...]] = Counter()
        for cell, n in acc.unscored.items():
            unscored[cell if by_query_type else cell[1:]] += n
        answered = _merged(acc.answered_measures, by_query_type)
        rows = []
        for key in dict.fromkeys([*table, *unscored]):
            total, count = table.get(key, [0.0, 0])
            a_total, a_count = answered.get(key, [0.0, 0])
            rows.append(
                (
                    *key,
                    (total / count) if count else None,
                    int(count),
                    int(unscored[key]),
                    (a_total / a_count) if a_count else None,
                    int(a_count),
                )
            )
        frame = pd.DataFrame(
            rows, columns=[*keys, "mean", "scored", "unscored", "answered_mean", "answered_scored"]
        )
        frame["mean"] = frame["mean"].astype("float64")
        frame["answered_mean"] = frame["answered_mean"].astype("float64")
        frame["_order"] = frame["step"].map(_STEP_ORDER)
        sort = ["query_type", "_order", "measure"] if by_query_type else ["_order", "measure"]
        return frame.sort_values(sort, kind="stable").drop(columns="_order").reset_index(drop=True)

    def waterfall(self, by_query_type: bool = False) -> pd.DataFrame:
        """Mean point recall per waterfall step over the samples where it was judged."""
        keys = ["query_type", "step"] if by_query_type else ["step"]
        table = _merged(self.accumulated.recalls, by_query_type)
        frame = pd.DataFrame(
            [(*key, total / count, int(count)) for key, (total, count) in table.items() if count],
            columns=[*keys, "recall", "n"],
        )
        frame["step"] = pd.Categorical(
            frame["step"], categories=[s.value for s in STEPS], ordered=True
        )
        return frame.sort_values(keys).reset_index(drop=True)

    def verdict_counts(self, by_query_type: bool = False) -> pd.DataFrame:
        keys = ["query_type", "verdict"] if by_query_type else ["verdict"]
        counts: Counter[tuple[str, ...]] = Counter()
        for (query_type, verdict), n in self.accumulated.verdicts.items():
            counts[(query_type, verdict) if by_query_type else (verdict,)] += n
        frame = pd.DataFrame([(*k, n) for k, n in counts.items()], columns=[*keys, "count"])
        frame["count"] = frame["count"].astype("int64")
        frame["verdict"] = pd.Categorical(frame["verdict"], categories=_VERDICT_ORDER, ordered=True)
        return frame.sort_values(keys).reset_index(drop=True)

    def losses_by_doc_type(self) -> pd.DataFrame:
        """Per document type (the source file's extension): samples, passes and where the
        rest were lost (by stage; split points apart, the chunker's boundaries)."""
        columns = ["doc_type", "samples", "pass", *_LOSS_STAGES, "split", "other"]
        rows: dict[str, Counter[str]] = {}
        for (kind, verdict, stage), n in self.accumulated.doc_types.items():
            row = rows.setdefault(kind, Counter())
            row["samples"] += n
            if str(verdict) in _PASSES:
                row["pass"] += n
            elif stage in _LOSS_STAGES:
                row[stage] += n
                row["split"] += n if verdict == "chunk_split" else 0
            else:  # unscorable, a pipeline error: no stage to blame
                row["other"] += n
        frame = pd.DataFrame(
            [[kind, *(row[c] for c in columns[1:])] for kind, row in sorted(rows.items())],
            columns=columns,
        )
        return frame

    def refusal_rates(self, by_query_type: bool = False) -> dict[str, Any]:
        """Answers that decline, among the samples with an answer: counts and the rate (None:
        no answer at all). ``by_query_type``: one such entry per query type."""

        def entry(answered: int, refused: int) -> dict[str, Any]:
            return {
                "answered": answered,
                "refused": refused,
                "rate": refused / answered if answered else None,
            }

        counts = self.accumulated.refusals
        if by_query_type:
            types = sorted({qtype for qtype, _ in counts})
            return {t: entry(counts[(t, "answered")], counts[(t, "refused")]) for t in types}
        answered = sum(n for (_, kind), n in counts.items() if kind == "answered")
        refused = sum(n for (_, kind), n in counts.items() if kind == "refused")
        return entry(answered, refused)

    def error_rates(self) -> dict[str, float]:
        """Per stage: the share of answered samples whose pipeline raised at that stage."""
        records = self.shape.get("records") or 0
        errors = self.shape.get("errors_by_stage", {})
        return {stage: (count / records if records else 0.0) for stage, count in errors.items()}

    def findings(self) -> dict[str, int]:
        """Chunking risks that are not losses: facts held only by chunks not naming the entity."""
        found = self.accumulated.findings
        return {
            name: int(found[name])
            for name in (
                "points_held_whole",
                "held_only_by_chunks_not_naming_the_entity",
                "of_those_in_the_pool",
                "of_those_in_the_context",
            )
        }

    def answer_points(self) -> dict[str, dict[str, int]]:
        """Information points at the answer step by decision (present, partial, absent,
        undecided) and by the rule that decided (verbatim, judge, paraphrase)."""
        counts: dict[str, dict[str, int]] = {}
        for (decision, rule), n in sorted(self.accumulated.answer_points.items()):
            counts.setdefault(str(decision), {})[str(rule)] = int(n)
        return counts

    def keyword_vs_judge(self) -> dict[str, Any] | None:
        judged = self.accumulated.judged
        if not judged["llm_rows"] or not judged["keyword_rows"]:
            return None
        samples = judged["samples"]
        return {
            "samples": samples,
            "agree": judged["agree"] / samples if samples else None,
            "keyword_found_judge_not": judged["keyword_found_judge_not"],
            "judge_found_keyword_not": judged["judge_found_keyword_not"],
        }

    def latency(self) -> pd.DataFrame:
        if self.latency_frame is not None:
            return self.latency_frame
        return latency_table(self.accumulated.latency)

    def bad_examples(self, limit: int) -> list[tuple[str, str, str]]:
        """(verdict, sample id, explanation): the first bad case of each verdict."""
        return [(v, sid, why) for v, (sid, why) in self.accumulated.examples.items()][:limit]

    def skipped_reasons(self, limit: int) -> list[tuple[str, str, str, int]]:
        """(step, measure, reason, samples), most frequent first."""
        ordered = sorted(sorted(self.accumulated.reasons.items()), key=lambda kv: -kv[1])
        return [(*key, int(n)) for key, n in ordered[:limit]]

    def samples(self) -> dict[str, int]:
        verdicts: Counter[str] = Counter()
        for (_, verdict), n in self.accumulated.verdicts.items():
            verdicts[verdict] += n
        return {
            "in_evalset": sum(verdicts.values()),
            "scored": sum(verdicts.values()) - verdicts[Verdict.UNSCORABLE.value],
            "unscorable": verdicts[Verdict.UNSCORABLE.value],
            "pipeline_error": verdicts[Verdict.PIPELINE_ERROR.value],
        }

    def to_dict(self) -> dict[str, Any]:
        """The summary file: everything a monitor or a comparison needs, as plain JSON."""
        from cofe.results._files import RESULTS_SCHEMA_VERSION

        falls = self.waterfall(by_query_type=True)
        by_type = self.verdict_counts(by_query_type=True)
        skipped: Counter[str] = Counter()
        for (_, step, measure), n in self.accumulated.unscored.items():
            skipped[f"{step}/{measure}"] += n
        return {
            "results_schema_version": RESULTS_SCHEMA_VERSION,
            "cofe_version": __version__,
            "run": self.run,
            "run_id": self.run_id,
            "evalset_sha256": self.evalset_sha256,
            "config": self.config.model_dump(mode="json"),
            "shape": self.shape,
            "samples": self.samples(),
            "error_rate_by_stage": self.error_rates(),
            "measures": _records(self.summary()),
            "waterfall": {
                "overall": {str(r["step"]): r["recall"] for r in _records(self.waterfall())},
                "by_query_type": {
                    qtype: {str(r["step"]): r["recall"] for r in _records(group)}
                    for qtype, group in falls.groupby("query_type")
                },
            },
            "verdicts": {
                "overall": {str(r["verdict"]): r["count"] for r in _records(self.verdict_counts())},
                "by_query_type": {
                    qtype: {str(r["verdict"]): r["count"] for r in _records(group)}
                    for qtype, group in by_type.groupby("query_type")
                },
            },
            "losses_by_document_type": {
                str(r["doc_type"]): {k: v for k, v in r.items() if k != "doc_type"}
                for r in _records(self.losses_by_doc_type())
            },
            "refusals": {
                "overall": self.refusal_rates(),
                "by_query_type": self.refusal_rates(by_query_type=True),
            },
            "findings": self.findings(),
            "answer_points": self.answer_points(),
            "keyword_vs_judge": self.keyword_vs_judge(),
            "latency_seconds": _records(self.latency()),
            "skipped": {key: int(skipped[key]) for key in sorted(skipped)},
            "problems": {
                "count": self.problems.count,
                "first": [str(p) for p in self.problems.first],
            },
        }


def _merged(
    sums: dict[tuple[str, ...], list[float]], by_query_type: bool
) -> dict[tuple[str, ...], list[float]]:
    """``[total, count]`` per key, or per key without its query type (the first element)."""
    if by_query_type:
        return sums
    out: dict[tuple[str, ...], list[float]] = {}
    for key, (total, count) in sums.items():
        row = out.setdefault(key[1:], [0.0, 0])
        row[0] += total
        row[1] += count
    return out


def answered_only(scores: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """The answer's score rows of the samples whose answer does not decline (the refusal
    rule's or the judge's): what a refusal must not lower or raise."""
    answer = scores[scores["step"] == ANSWER_STEP]
    if "refusal" not in verdicts or not len(answer):
        return answer
    declined = set(verdicts.loc[verdicts["refusal"].notna(), "sample_id"])
    return answer[~answer["sample_id"].isin(declined)] if declined else answer


def _add_sums(
    into: dict[tuple[str, ...], list[float]], frame: pd.DataFrame, keys: list[str]
) -> None:
    if not len(frame):
        return
    grouped = frame.groupby(keys, sort=False)["value"].agg(["sum", "count"])
    for key, total, count in zip(grouped.index, grouped["sum"], grouped["count"], strict=True):
        row = into.setdefault(key if isinstance(key, tuple) else (key,), [0.0, 0])
        row[0] += float(total)
        row[1] += int(count)


_LOSS_STAGES = tuple(spec.stage.value for spec in STAGES)
_NO_TYPE = "(no type)"


def doc_type(source: object) -> str:
    """The kind of a sample's source document: its file extension ("pdf", "docx"), or
    "(no type)" for a source named without one (or no source at all)."""
    if not isinstance(source, str) or not source:
        return _NO_TYPE
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    return ext.lower() if dot and stem and 1 <= len(ext) <= 5 and ext.isalnum() else _NO_TYPE


def _counts(frame: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], int]:
    sizes = frame.groupby(keys, sort=False).size()
    return {k if isinstance(k, tuple) else (k,): int(n) for k, n in sizes.items()}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(frame.to_json(orient="records", force_ascii=False))
    return records
