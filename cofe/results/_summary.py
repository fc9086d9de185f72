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

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cofe._errors import InputProblem
from cofe._version import __version__
from cofe.chain import STAGE_SPECS
from cofe.diagnose import WATERFALL_STEPS, Verdict
from cofe.results._rows import Coded, Rows, ScoredRows, is_missing

if TYPE_CHECKING:
    import pandas as pd

_STEP_ORDER = {step.value: i for i, step in enumerate(WATERFALL_STEPS)}
_VERDICT_ORDER = [v.value for v in Verdict]
_VERDICT_PLACE = {verdict: i for i, verdict in enumerate(_VERDICT_ORDER)}
_PASSES = frozenset(v.value for v in Verdict if v.is_pass)
ANSWER_STEP = "answer"
FIRST_PROBLEMS = 50


_LATENCY_COLUMNS = ["stage", "mean", "p50", "p95", "n"]
LatencyRow = tuple[str, float, float, float, int]


def latency_rows(seconds: Mapping[str, Sequence[float]]) -> list[LatencyRow]:
    """Per stage (sorted): mean, p50, p95 and count of the recorded latencies, computed as
    pandas' ``groupby`` does (the figures and their files predate this code)."""
    rows = []
    for stage in sorted(stage for stage in seconds if len(seconds[stage])):
        values = np.asarray(seconds[stage], dtype=np.float64)
        values = values[~np.isnan(values)]
        if not len(values):  # nothing but NaN recorded: no figure, as pandas gives none
            rows.append((stage, float("nan"), float("nan"), float("nan"), 0))
            continue
        mean = _compensated_sum(values) / len(values)  # summed in the order recorded
        ordered = np.sort(values)
        n, middle = len(ordered), len(ordered) // 2
        median = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2
        rows.append((stage, mean, float(median), _quantile(ordered, 0.95), n))
    return rows


def _quantile(ordered: np.ndarray, q: float) -> float:
    """pandas' linear interpolation between the two nearest ranks (numpy's differs in the
    last bit above the midpoint)."""
    position = q * (len(ordered) - 1)
    low = int(position)
    fraction = position % 1
    value = float(ordered[low])
    return value if fraction == 0.0 else value + (float(ordered[low + 1]) - value) * fraction


def latency_table(seconds: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """``latency_rows`` as a table."""
    import pandas as pd

    rows = latency_rows(seconds)
    return (
        pd.DataFrame(rows, columns=_LATENCY_COLUMNS)
        if rows
        else pd.DataFrame(columns=_LATENCY_COLUMNS)
    )


def _compensated_sum(values: np.ndarray) -> float:
    """The sum pandas' ``groupby(...).sum()`` gives (Kahan's compensated summation, in row
    order): the summary's means must not change in the last digit with the code that adds
    them up."""
    if not len(values):
        return 0.0
    scaled = values * 1024.0
    if (
        np.isfinite(scaled).all()
        and (scaled == np.round(scaled)).all()
        and float(np.abs(values).sum()) < 2.0**40
    ):
        # multiples of 1/1024 (0, 1, halves, quarters): every partial sum is exact, so any
        # order of adding, numpy's included, gives the same total (+ 0.0: never -0.0)
        return float(values.sum()) + 0.0
    total = compensation = 0.0
    for value in values.tolist():
        y = value - compensation
        t = total + y
        compensation = t - total - y
        if compensation != compensation:  # an infinity: pandas drops the compensation
            compensation = 0.0
        total = t
    return total


@dataclass
class _Groups:
    """Rows grouped by the values of some key columns, as ``groupby(keys, sort=False)``:
    groups in the order of their first row, rows with a missing key left out."""

    keys: list[tuple[Any, ...]]  # per group: its key values
    rows: np.ndarray  # the grouped rows, by group then in row order
    bounds: np.ndarray  # group i's rows are rows[bounds[i]:bounds[i + 1]]

    @classmethod
    def of(cls, table: Rows, names: Sequence[str], where: np.ndarray | None = None) -> _Groups:
        columns = [table.text(name).distinct() for name in names]
        keep = np.ones(len(table), dtype=bool) if where is None else where.copy()
        for column in columns:
            keep &= column.rows_where([not is_missing(label) for label in column.labels])
        picked = np.flatnonzero(keep)
        combined = np.zeros(len(picked), dtype=np.int64)
        for column in columns:
            combined = combined * len(column.labels) + column.codes[picked]
        _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
        by_first_row = np.argsort(first, kind="stable")
        group = np.empty(len(first), dtype=np.int64)
        group[by_first_row] = np.arange(len(first))
        group_of_row = group[inverse.reshape(-1)]
        order = np.argsort(group_of_row, kind="stable")
        bounds = np.zeros(len(first) + 1, dtype=np.int64)
        np.cumsum(np.bincount(group_of_row, minlength=len(first)), out=bounds[1:])
        keys = [
            tuple(column.labels[column.codes[picked[at]]] for column in columns)
            for at in first[by_first_row]
        ]
        return cls(keys, picked[order], bounds)

    def counts(self) -> dict[tuple[Any, ...], int]:
        sizes = np.diff(self.bounds).tolist()
        return dict(zip(self.keys, sizes, strict=True))

    def add_sums(self, into: dict[tuple[str, ...], list[float]], values: np.ndarray) -> None:
        """``[total, count]`` of each group's values (NaN left out) added to ``into``."""
        grouped = values[self.rows]
        for index, key in enumerate(self.keys):
            part = grouped[self.bounds[index] : self.bounds[index + 1]]
            part = part[~np.isnan(part)]
            row = into.setdefault(key, [0.0, 0])
            row[0] += _compensated_sum(part)
            row[1] += len(part)


@dataclass
class SummaryAccumulator:
    """Sums and counts over the rows of a scoring, added a table part at a time."""

    # (query type, step, measure): [total, count]
    measures: dict[tuple[str, ...], list[float]] = field(default_factory=dict)
    # (query type, step, measure)
    unscored: Counter[tuple[str, ...]] = field(default_factory=Counter)
    # (step, measure, reason)
    reasons: Counter[tuple[str, ...]] = field(default_factory=Counter)
    recalls: dict[tuple[str, ...], list[float]] = field(default_factory=dict)  # (query type, step)
    verdicts: Counter[tuple[str, ...]] = field(default_factory=Counter)  # (query type, verdict)
    examples: dict[str, tuple[str, str]] = field(default_factory=dict)  # first bad case each
    findings: Counter[str] = field(default_factory=Counter)
    judged: Counter[str] = field(default_factory=Counter)  # keyword vs judge agreement counts
    latency: dict[str, array[float]] = field(default_factory=dict)
    # the answer's measures over answered samples only (an answer that is not a refusal)
    answered_measures: dict[tuple[str, ...], list[float]] = field(default_factory=dict)
    # (query type, "answered" | "refused")
    refusals: Counter[tuple[str, str]] = field(default_factory=Counter)
    answer_points: Counter[tuple[str, ...]] = field(default_factory=Counter)  # (decision, rule)
    # (document type, verdict, stage): where samples of each kind of source were lost
    doc_types: Counter[tuple[str, ...]] = field(default_factory=Counter)

    def add_rows(self, rows: ScoredRows) -> None:
        """Add one part's rows (``latency`` is added from raw seconds, see ``add_latency``)."""
        scores, verdicts, skipped = rows.scores, rows.verdicts, rows.skipped
        values = scores.numbers("value")
        _Groups.of(scores, ["query_type", "step", "measure"]).add_sums(self.measures, values)
        self._add_refusals(verdicts, scores)
        _Groups.of(rows.recalls, ["query_type", "step"]).add_sums(
            self.recalls, rows.recalls.numbers("value")
        )
        if len(skipped):
            self.unscored.update(_Groups.of(skipped, ["query_type", "step", "measure"]).counts())
            self.reasons.update(_Groups.of(skipped, ["step", "measure", "reason"]).counts())
        if len(verdicts):
            self.verdicts.update(_Groups.of(verdicts, ["query_type", "verdict"]).counts())
            self._add_doc_types(verdicts)
            self._add_examples(verdicts)
        self._add_findings(rows.points)
        self._add_judge_agreement(scores)

    def _add_refusals(self, verdicts: Rows, scores: Rows) -> None:
        """Refusals per query type, and the answer's measures without them: a pipeline that
        declines more must not look better (or worse) by the samples it declined."""
        if not len(verdicts) or "refusal" not in verdicts.columns:
            return
        flags = verdicts.text("answered")
        answered = flags.rows_where([bool(label) for label in flags.labels])
        refused = verdicts.present("refusal") & answered
        codes = verdicts.text("verdict")
        # refused though the context held the points (the verdict ``refused``): the generator
        # was over-cautious; the rest declined what never reached it (the earlier stage's loss)
        held = refused & codes.rows_where([label == "refused" for label in codes.labels])
        kinds = (("answered", answered), ("refused", refused), ("refused_held", held))
        for kind, rows in kinds:
            for (qtype,), n in _Groups.of(verdicts, ["query_type"], rows).counts().items():
                self.refusals[(str(qtype), kind)] += n
        _Groups.of(
            scores, ["query_type", "step", "measure"], answered_rows(scores, verdicts)
        ).add_sums(self.answered_measures, scores.numbers("value"))

    def _add_doc_types(self, verdicts: Rows) -> None:
        if "source" not in verdicts.columns:
            return
        source, stage = verdicts.text("source"), verdicts.text("stage")
        kinds = Coded(source.codes, [doc_type(label) for label in source.labels])
        stages = Coded(stage.codes, ["" if is_missing(label) else label for label in stage.labels])
        keyed = Rows(
            "verdicts",
            len(verdicts),
            {"source": kinds, "verdict": verdicts.text("verdict"), "stage": stages},
        )
        self.doc_types.update(_Groups.of(keyed, ["source", "verdict", "stage"]).counts())

    def _add_examples(self, verdicts: Rows) -> None:
        verdict = verdicts.text("verdict").distinct()
        bad = verdict.rows_where([label not in _PASSES for label in verdict.labels])
        groups = _Groups.of(verdicts, ["verdict"], bad)
        ids, explanations = verdicts.text("sample_id"), verdicts.text("explanation")
        for (name,), first in zip(groups.keys, groups.rows[groups.bounds[:-1]], strict=True):
            self.examples.setdefault(
                str(name),
                (
                    str(ids.labels[ids.codes[first]]),
                    str(explanations.labels[explanations.codes[first]]),
                ),
            )

    def add_latency(self, seconds: Mapping[str, Iterable[float]]) -> None:
        for stage, values in seconds.items():
            self.latency.setdefault(stage, array("d")).extend(values)

    def _add_findings(self, points: Rows) -> None:
        if not len(points):
            return
        if "answer_decision" in points.columns:
            decided = points.present("answer_decision")
            self.answer_points.update(
                _Groups.of(points, ["answer_decision", "answer_rule"], decided).counts()
            )
        anchored = points.text("anchored")
        judged = points.present("anchored")
        lone = anchored.rows_where([label is False for label in anchored.labels])
        self.findings["points_held_whole"] += int(judged.sum())
        self.findings["held_only_by_chunks_not_naming_the_entity"] += int(lone.sum())
        self.findings["of_those_in_the_pool"] += int((lone & points.present("pool_rank")).sum())
        self.findings["of_those_in_the_context"] += int(
            (lone & points.present("context_rank")).sum()
        )

    def _add_judge_agreement(self, scores: Rows) -> None:
        # the keyword verdict at the context (every point found: KeywordAccuracy@K) against the
        # LLM judge's (every reference claim supported: ContextRecall = 1), sample by sample
        step, measure = scores.text("step"), scores.text("measure")
        at_context = step.rows_where([label == "context" for label in step.labels])
        is_llm = measure.rows_where([label == "ContextRecall" for label in measure.labels])
        is_keyword = measure.rows_where(
            [
                isinstance(label, str) and label.startswith("KeywordAccuracy@")
                for label in measure.labels
            ]
        )
        ids, values = scores.text("sample_id"), scores.numbers("value")

        def by_sample(rows: np.ndarray) -> dict[Any, float]:
            picked = np.flatnonzero(rows)
            id_of = ids.label_array()
            return dict(
                zip(id_of[ids.codes[picked]].tolist(), values[picked].tolist(), strict=True)
            )

        llm, keyword = by_sample(at_context & is_llm), by_sample(at_context & is_keyword)
        self.judged["llm_rows"] += int((at_context & is_llm).sum())
        self.judged["keyword_rows"] += int((at_context & is_keyword).sum())
        if not llm or not keyword:
            return
        both = [(keyword[sample] == 1.0, llm[sample] == 1.0) for sample in keyword if sample in llm]
        self.judged["samples"] += len(both)
        self.judged["agree"] += sum(kw_all == llm_all for kw_all, llm_all in both)
        self.judged["keyword_found_judge_not"] += sum(kw and not lm for kw, lm in both)
        self.judged["judge_found_keyword_not"] += sum(lm and not kw for kw, lm in both)


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
    """The figures of one scoring: what ``summary.json`` holds and the terminal shows.

    Each table is made once as plain rows (``*_rows``: what ``summary.json`` and the terminal
    read, no pandas); the DataFrame methods are those rows as tables, for library users."""

    config: Any
    run: str
    run_id: str
    shape: dict[str, Any]
    evalset_sha256: str | None
    accumulated: SummaryAccumulator
    problems: ProblemTally
    latency_given: list[LatencyRow] | None = None  # when the raw seconds are not at hand

    def summary_rows(self, by_query_type: bool = False) -> list[dict[str, Any]]:
        """Per (step, measure): the mean over scored samples (None: none scored), and how many
        were scored/unscored; for the answer's measures also the mean over answered samples
        (refusals left out). Ordered by step along the chain, then measure."""
        keys = ["query_type", "step", "measure"] if by_query_type else ["step", "measure"]
        acc = self.accumulated
        table = _merged(acc.measures, by_query_type)
        unscored: Counter[tuple[str, ...]] = Counter()
        for cell, n in acc.unscored.items():
            unscored[cell if by_query_type else cell[1:]] += n
        answered = _merged(acc.answered_measures, by_query_type)
        rows: list[dict[str, Any]] = []
        for key in dict.fromkeys([*table, *unscored]):
            total, count = table.get(key, [0.0, 0])
            a_total, a_count = answered.get(key, [0.0, 0])
            rows.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "mean": (total / count) if count else None,
                    "scored": int(count),
                    "unscored": int(unscored[key]),
                    "answered_mean": (a_total / a_count) if a_count else None,
                    "answered_scored": int(a_count),
                }
            )

        def place(row: dict[str, Any]) -> tuple[Any, ...]:
            step = _STEP_ORDER.get(row["step"])  # an unknown step last, as pandas puts NaN
            return (step is None, step or 0, row["measure"])

        rows.sort(key=place)
        if by_query_type:
            rows.sort(key=lambda row: row["query_type"])  # stable: steps stay in order
        return rows

    def summary(self, by_query_type: bool = False) -> pd.DataFrame:
        """``summary_rows`` as a table (a mean never computed: NaN)."""
        import pandas as pd

        keys = ["query_type", "step", "measure"] if by_query_type else ["step", "measure"]
        columns = [*keys, "mean", "scored", "unscored", "answered_mean", "answered_scored"]
        rows = self.summary_rows(by_query_type)
        frame = pd.DataFrame([[row[c] for c in columns] for row in rows], columns=columns)
        frame["mean"] = frame["mean"].astype("float64")
        frame["answered_mean"] = frame["answered_mean"].astype("float64")
        return frame

    def waterfall_rows(self, by_query_type: bool = False) -> list[dict[str, Any]]:
        """Mean point recall per waterfall step over the samples where it was judged, in
        chain order (per query type, sorted, when asked)."""
        keys = ["query_type", "step"] if by_query_type else ["step"]
        table = _merged(self.accumulated.recalls, by_query_type)
        rows = [
            {**dict(zip(keys, key, strict=True)), "recall": total / count, "n": int(count)}
            for key, (total, count) in table.items()
            if count
        ]
        return sorted(rows, key=lambda row: (row.get("query_type", ""), _step_place(row["step"])))

    def waterfall(self, by_query_type: bool = False) -> pd.DataFrame:
        import pandas as pd

        keys = ["query_type", "step"] if by_query_type else ["step"]
        columns = [*keys, "recall", "n"]
        rows = self.waterfall_rows(by_query_type)
        frame = pd.DataFrame([[row[c] for c in columns] for row in rows], columns=columns)
        frame["step"] = pd.Categorical(
            frame["step"], categories=[s.value for s in WATERFALL_STEPS], ordered=True
        )
        return frame

    def verdict_count_rows(self, by_query_type: bool = False) -> list[dict[str, Any]]:
        """Samples per verdict (per query type, sorted, when asked), in the verdicts' order."""
        keys = ["query_type", "verdict"] if by_query_type else ["verdict"]
        counts: Counter[tuple[str, ...]] = Counter()
        for (query_type, verdict), n in self.accumulated.verdicts.items():
            counts[(query_type, verdict) if by_query_type else (verdict,)] += n
        rows = [{**dict(zip(keys, k, strict=True)), "count": int(n)} for k, n in counts.items()]
        return sorted(
            rows, key=lambda row: (row.get("query_type", ""), _verdict_place(row["verdict"]))
        )

    def verdict_counts(self, by_query_type: bool = False) -> pd.DataFrame:
        import pandas as pd

        keys = ["query_type", "verdict"] if by_query_type else ["verdict"]
        rows = self.verdict_count_rows(by_query_type)
        frame = pd.DataFrame(
            [[row[c] for c in [*keys, "count"]] for row in rows], columns=[*keys, "count"]
        )
        frame["count"] = frame["count"].astype("int64")
        frame["verdict"] = pd.Categorical(frame["verdict"], categories=_VERDICT_ORDER, ordered=True)
        return frame

    def losses_by_doc_type_rows(self) -> list[dict[str, Any]]:
        """Per document type (the source file's extension, sorted): samples, passes and where
        the rest were lost (by stage; split points apart, the chunker's boundaries)."""
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
        return [
            {"doc_type": kind, **{c: row[c] for c in _DOC_TYPE_COLUMNS[1:]}}
            for kind, row in sorted(rows.items())
        ]

    def losses_by_doc_type(self) -> pd.DataFrame:
        import pandas as pd

        rows = self.losses_by_doc_type_rows()
        return pd.DataFrame(
            [[row[c] for c in _DOC_TYPE_COLUMNS] for row in rows], columns=_DOC_TYPE_COLUMNS
        )

    def refusal_rates(self, by_query_type: bool = False) -> dict[str, Any]:
        """Answers that decline, among the samples with an answer: counts and the rate (None:
        no answer at all). ``by_query_type``: one such entry per query type."""

        def entry(answered: int, refused: int, held: int) -> dict[str, Any]:
            return {
                "answered": answered,
                "refused": refused,
                "rate": refused / answered if answered else None,
                # of the refusals: the context held every point (over-cautious) / it did not
                # (declined rightly: the earlier stage lost it)
                "context_held": held,
                "context_lacked": refused - held,
            }

        counts = self.accumulated.refusals
        kinds = ("answered", "refused", "refused_held")
        if by_query_type:
            types = sorted({qtype for qtype, _ in counts})
            return {t: entry(*(counts[(t, k)] for k in kinds)) for t in types}
        return entry(*(sum(n for (_, k), n in counts.items() if k == kind) for kind in kinds))

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

    def latency_rows(self) -> list[LatencyRow]:
        if self.latency_given is not None:
            return self.latency_given
        return latency_rows(self.accumulated.latency)

    def latency(self) -> pd.DataFrame:
        import pandas as pd

        rows = self.latency_rows()
        if not rows:
            return pd.DataFrame(columns=_LATENCY_COLUMNS)
        return pd.DataFrame(rows, columns=_LATENCY_COLUMNS)

    def bad_examples(self, limit: int) -> list[tuple[str, str, str]]:
        """(verdict, sample id, explanation): the first bad case of each verdict."""
        return [(v, sid, why) for v, (sid, why) in self.accumulated.examples.items()][:limit]

    def skipped_reasons(self, limit: int) -> list[tuple[str, str, str, int]]:
        """(step, measure, reason, samples), most frequent first."""
        ordered = sorted(sorted(self.accumulated.reasons.items()), key=lambda kv: -kv[1])
        return [(key[0], key[1], key[2], int(n)) for key, n in ordered[:limit]]

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
            "measures": [_json_row(row) for row in self.summary_rows()],
            "waterfall": {
                "overall": _by(self.waterfall_rows(), "step", "recall"),
                "by_query_type": _by_query_type(self.waterfall_rows(True), "step", "recall"),
            },
            "verdicts": {
                "overall": _by(self.verdict_count_rows(), "verdict", "count"),
                "by_query_type": _by_query_type(self.verdict_count_rows(True), "verdict", "count"),
            },
            "losses_by_document_type": {
                str(row["doc_type"]): {k: v for k, v in row.items() if k != "doc_type"}
                for row in self.losses_by_doc_type_rows()
            },
            "refusals": {
                "overall": self.refusal_rates(),
                "by_query_type": self.refusal_rates(by_query_type=True),
            },
            "findings": self.findings(),
            "answer_points": self.answer_points(),
            "keyword_vs_judge": self.keyword_vs_judge(),
            "latency_seconds": [
                _json_row(dict(zip(_LATENCY_COLUMNS, row, strict=True)))
                for row in self.latency_rows()
            ],
            "skipped": {key: int(skipped[key]) for key in sorted(skipped)},
            "problems": {
                "count": self.problems.count,
                "first": [str(p) for p in self.problems.first],
            },
        }


def _step_place(step: str) -> int:
    """A step's place along the chain (an unknown one last, as pandas sorts a NaN category)."""
    return _STEP_ORDER.get(step, len(_STEP_ORDER))


def _verdict_place(verdict: str) -> int:
    return _VERDICT_PLACE.get(verdict, len(_VERDICT_PLACE))


def _by(rows: list[dict[str, Any]], key: str, value: str) -> dict[str, Any]:
    return {str(row[key]): _json_value(row[value]) for row in rows}


def _by_query_type(rows: list[dict[str, Any]], key: str, value: str) -> dict[str, Any]:
    types: dict[str, list[dict[str, Any]]] = {}
    for row in rows:  # sorted by query type already
        types.setdefault(row["query_type"], []).append(row)
    return {qtype: _by(group, key, value) for qtype, group in types.items()}


def _json_row(row: dict[str, Any]) -> dict[str, Any]:
    return {key: _json_value(value) for key, value in row.items()}


def _json_value(value: Any) -> Any:
    """A figure as ``summary.json`` has always written it: floats as pandas' ``to_json``
    writes them, at most 10 decimals (the file's figures must not change with the code that
    writes them), a missing one null."""
    if not isinstance(value, float):
        return value
    if value != value or value in (float("inf"), float("-inf")):
        return None
    magnitude = abs(value)
    if magnitude > 1e16 - 1 or (magnitude != 0.0 and magnitude < 1e-15):
        return float(f"{value:.10g}")  # pandas switches to C's %g there
    whole = int(magnitude)
    scaled = (magnitude - whole) * 1e10
    fraction = int(scaled)
    rest = scaled - fraction
    if rest > 0.5 or (rest == 0.5 and (fraction == 0 or fraction & 1)):  # pandas' rounding
        fraction += 1
    if fraction >= 10**10:
        fraction, whole = 0, whole + 1
    digits = f"{fraction:010d}".rstrip("0") or "0"
    rounded = float(f"{whole}.{digits}")
    return -rounded if value < 0 else rounded


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


def answered_rows(scores: Rows, verdicts: Rows) -> np.ndarray:
    """Per score row: the answer's, of a sample whose answer does not decline (the refusal
    rule's or the judge's) -- what a refusal must not lower or raise."""
    step = scores.text("step")
    answer = step.rows_where([label == ANSWER_STEP for label in step.labels])
    if "refusal" not in verdicts.columns or not answer.any():
        return answer
    ids = verdicts.text("sample_id")
    declined_rows = np.flatnonzero(verdicts.present("refusal"))
    declined = set(ids.label_array()[ids.codes[declined_rows]].tolist())
    if not declined:
        return answer
    scored = scores.text("sample_id")
    kept: np.ndarray = answer & scored.rows_where(
        [label not in declined for label in scored.labels]
    )
    return kept


def answered_only(scores: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """The answer's score rows of the samples whose answer does not decline (``answered_rows``)."""
    mask = answered_rows(Rows.of_frame(scores, "scores"), Rows.of_frame(verdicts, "verdicts"))
    return scores[mask]


_LOSS_STAGES = tuple(spec.stage.value for spec in STAGE_SPECS)
_DOC_TYPE_COLUMNS = ["doc_type", "samples", "pass", *_LOSS_STAGES, "split", "other"]
_NO_TYPE = "(no type)"


def doc_type(source: object) -> str:
    """The kind of a sample's source document: its file extension ("pdf", "docx"), or
    "(no type)" for a source named without one (or no source at all)."""
    if not isinstance(source, str) or not source:
        return _NO_TYPE
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    return ext.lower() if dot and stem and 1 <= len(ext) <= 5 and ext.isalnum() else _NO_TYPE
