"""The outcome of scoring a run: long-form tables a person and a program can read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cofe._errors import InputProblem
from cofe.results._columns import typed
from cofe.results._rows import ScoredRows
from cofe.results._summary import ProblemTally, ScoreSummary, SummaryAccumulator

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class ScoreResult:
    """Tables of one scoring.

    - ``scores``: one row per (sample, step, measure) -- the long form.
    - ``skipped``: one row per (sample, step, measure) that could not be computed, and why;
      with ``scores`` every planned measure has the same number of samples.
    - ``points``: one row per information point: where it was found, where lost.
    - ``verdicts``: one row per eval sample: verdict, stage blamed and evidence.
    - ``recalls``: per sample, point recall at each waterfall step.
    - ``shape``: what the run recorded (stages, pool cutoff, top-K and where it came from,
      errors per stage).
    """

    config: Any  # ScoreConfig (typed loosely: results are read without the scorer)
    run: str
    run_id: str
    shape: dict[str, Any]
    scores: pd.DataFrame
    points: pd.DataFrame
    verdicts: pd.DataFrame
    skipped: pd.DataFrame
    recalls: pd.DataFrame
    latency: pd.DataFrame
    problems: list[InputProblem] = field(default_factory=list)
    evalset_sha256: str | None = None  # of the eval-set file scored against (None: in memory)

    def normalized(self) -> ScoreResult:
        """Every table with its declared columns and types (what ``read_scores`` returns)."""
        for name in ("scores", "points", "verdicts", "skipped", "recalls", "latency"):
            setattr(self, name, typed(getattr(self, name), name))
        return self

    def view(self) -> ScoreSummary:
        """The figures of this scoring (the one implementation the streaming scorer shares)."""
        accumulated = SummaryAccumulator()
        accumulated.add_rows(ScoredRows.of_result(self))
        problems = ProblemTally()
        problems.add(self.problems)
        return ScoreSummary(
            config=self.config,
            run=self.run,
            run_id=self.run_id,
            shape=self.shape,
            evalset_sha256=self.evalset_sha256,
            accumulated=accumulated,
            problems=problems,
            latency_given=[
                (str(stage), float(mean), float(p50), float(p95), int(n))
                for stage, mean, p50, p95, n in typed(self.latency, "latency").itertuples(
                    index=False, name=None
                )
            ],
        )

    def summary(self, by_query_type: bool = False) -> pd.DataFrame:
        """Per (step, measure): the mean over scored samples, and how many were scored/unscored."""
        return self.view().summary(by_query_type)

    def mean(self, step: str, measure: str) -> float | None:
        """The mean of one measure over the samples it was computed for (None: never computed)."""
        s = self.scores
        values = s.loc[(s["step"] == step) & (s["measure"] == measure), "value"]
        return float(values.mean()) if len(values) else None

    def waterfall(self, by_query_type: bool = False) -> pd.DataFrame:
        return self.view().waterfall(by_query_type)

    def verdict_counts(self, by_query_type: bool = False) -> pd.DataFrame:
        return self.view().verdict_counts(by_query_type)

    def error_rates(self) -> dict[str, float]:
        """Per stage: the share of answered samples whose pipeline raised at that stage."""
        return self.view().error_rates()

    def findings(self) -> dict[str, int]:
        """Chunking risks that are not losses: facts held only by chunks not naming the entity."""
        return self.view().findings()

    def keyword_vs_judge(self) -> dict[str, Any] | None:
        """How often the keyword verdict at the context (every point found: KeywordAccuracy@K)
        and the LLM judge's (every reference claim supported: ContextRecall = 1) agree."""
        return self.view().keyword_vs_judge()

    def to_dict(self) -> dict[str, Any]:
        """The summary file: everything a monitor or a comparison needs, as plain JSON."""
        return self.view().to_dict()

    def write(self, directory: str | Path, *, replace: bool = False) -> Path:
        """Write the tables and the summary; returns the directory (see ``read_scores``).
        A folder holding a scoring with other settings is refused unless ``replace``."""
        from cofe.results._files import write_scores

        return write_scores(self, directory, replace=replace)
