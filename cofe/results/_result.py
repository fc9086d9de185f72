"""The outcome of scoring a run: long-form tables a person and a program can read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cofe._errors import InputProblem
from cofe._version import __version__
from cofe.diagnose import STEPS, Verdict, waterfall
from cofe.results._columns import typed


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

    def summary(self, by_query_type: bool = False) -> pd.DataFrame:
        """Per (step, measure): the mean over scored samples, and how many were scored/unscored."""
        keys = ["query_type", "step", "measure"] if by_query_type else ["step", "measure"]
        scored = self.scores.groupby(keys, sort=False)["value"].agg(mean="mean", scored="count")
        unscored = self.skipped.groupby(keys, sort=False).size().rename("unscored")
        table = scored.join(unscored, how="outer", sort=False).reset_index()
        if table.empty:
            return pd.DataFrame(columns=[*keys, "mean", "scored", "unscored"])
        table["scored"] = table["scored"].fillna(0).astype(int)
        table["unscored"] = table["unscored"].fillna(0).astype(int)
        order = {step.value: i for i, step in enumerate(STEPS)}
        table["_order"] = table["step"].map(order)
        sort = ["query_type", "_order"] if by_query_type else ["_order"]
        table = table.sort_values(sort, kind="stable").drop(columns="_order")
        return table[[*keys, "mean", "scored", "unscored"]].reset_index(drop=True)

    def mean(self, step: str, measure: str) -> float | None:
        """The mean of one measure over the samples it was computed for (None: never computed)."""
        s = self.scores
        values = s.loc[(s["step"] == step) & (s["measure"] == measure), "value"]
        return float(values.mean()) if len(values) else None

    def waterfall(self, by_query_type: bool = False) -> pd.DataFrame:
        return waterfall(self.recalls, by_query_type)

    def verdict_counts(self, by_query_type: bool = False) -> pd.DataFrame:
        order = [v.value for v in Verdict]
        keys = ["query_type", "verdict"] if by_query_type else ["verdict"]
        counts = self.verdicts.groupby(keys).size().rename("count").reset_index()
        counts["verdict"] = pd.Categorical(counts["verdict"], categories=order, ordered=True)
        return counts.sort_values(keys).reset_index(drop=True)

    def error_rates(self) -> dict[str, float]:
        """Per stage: the share of answered samples whose pipeline raised at that stage."""
        records = self.shape.get("records") or 0
        errors = self.shape.get("errors_by_stage", {})
        return {stage: (count / records if records else 0.0) for stage, count in errors.items()}

    def findings(self) -> dict[str, int]:
        """Chunking risks that are not losses: facts held only by chunks not naming the entity."""
        p = self.points
        judged = p["anchored"].notna()
        lone = p[judged & (p["anchored"] == False)]  # noqa: E712 (nullable boolean)
        return {
            "points_held_whole": int(judged.sum()),
            "held_only_by_chunks_not_naming_the_entity": len(lone),
            "of_those_in_the_pool": int(lone["pool_rank"].notna().sum()),
            "of_those_in_the_context": int(lone["context_rank"].notna().sum()),
        }

    def keyword_vs_judge(self) -> dict[str, Any] | None:
        """How often the keyword verdict at the context (every point found: KeywordAccuracy@K)
        and the LLM judge's (every reference claim supported: ContextRecall = 1) agree."""
        s = self.scores[self.scores["step"] == "context"]
        llm = s[s["measure"] == "ContextRecall"].set_index("sample_id")["value"]
        keyword = s[s["measure"].str.startswith("KeywordAccuracy@")]
        if llm.empty or keyword.empty:
            return None
        keyword = keyword.set_index("sample_id")["value"]
        both = pd.concat([keyword, llm], axis=1, keys=["keyword", "llm"], join="inner")
        kw_all, llm_all = both["keyword"] == 1.0, both["llm"] == 1.0
        return {
            "samples": len(both),
            "agree": float((kw_all == llm_all).mean()) if len(both) else None,
            "keyword_found_judge_not": int((kw_all & ~llm_all).sum()),
            "judge_found_keyword_not": int((~kw_all & llm_all).sum()),
        }

    def to_dict(self) -> dict[str, Any]:
        """The summary file: everything a monitor or a comparison needs, as plain JSON."""
        from cofe.results._files import RESULTS_SCHEMA_VERSION

        verdicts = self.verdicts["verdict"]
        by_type = self.verdict_counts(by_query_type=True)
        falls = self.waterfall(by_query_type=True)
        return {
            "results_schema_version": RESULTS_SCHEMA_VERSION,
            "cofe_version": __version__,
            "run": self.run,
            "run_id": self.run_id,
            "evalset_sha256": self.evalset_sha256,
            "config": self.config.model_dump(mode="json"),
            "shape": self.shape,
            "samples": {
                "in_evalset": len(self.verdicts),
                "scored": int((verdicts != Verdict.UNSCORABLE.value).sum()),
                "unscorable": int((verdicts == Verdict.UNSCORABLE.value).sum()),
                "pipeline_error": int((verdicts == Verdict.PIPELINE_ERROR.value).sum()),
            },
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
            "findings": self.findings(),
            "keyword_vs_judge": self.keyword_vs_judge(),
            "latency_seconds": _records(self.latency),
            "skipped": {
                f"{step}/{measure}": int(count)
                for (step, measure), count in self.skipped.groupby(["step", "measure"])
                .size()
                .items()
            },
            "problems": {
                "count": len(self.problems),
                "first": [str(p) for p in self.problems[:50]],
            },
        }

    def write(self, directory: str | Path, *, replace: bool = False) -> Path:
        """Write the tables and the summary; returns the directory (see ``read_scores``).
        A folder holding a scoring with other settings is refused unless ``replace``."""
        from cofe.results._files import write_scores

        return write_scores(self, directory, replace=replace)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(frame.to_json(orient="records", force_ascii=False))
