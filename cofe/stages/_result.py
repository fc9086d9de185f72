"""The outcome of scoring a run: long-form tables a person and a program can read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cofe._errors import InputProblem
from cofe._version import __version__
from cofe.diagnose import Verdict, waterfall
from cofe.stages._config import ScoreConfig

SCORE_FILES = ("scores.csv", "points.csv", "verdicts.jsonl", "skipped.csv", "summary.json")


@dataclass
class ScoreResult:
    """Tables of one scoring.

    - ``scores``: one row per (sample, stage, measure) -- the long form.
    - ``points``: one row per information point: where it was found, where lost.
    - ``verdicts``: one row per eval sample: verdict, stage and evidence.
    - ``skipped``: measures that could not be computed for a sample, and why.
    - ``recalls``: per sample, point recall at each waterfall step.
    """

    config: ScoreConfig
    run: str
    run_id: str
    scores: pd.DataFrame
    points: pd.DataFrame
    verdicts: pd.DataFrame
    skipped: pd.DataFrame
    recalls: pd.DataFrame
    latency: pd.DataFrame
    problems: list[InputProblem] = field(default_factory=list)

    def summary(self, by_query_type: bool = False) -> pd.DataFrame:
        keys = ["query_type", "stage", "measure"] if by_query_type else ["stage", "measure"]
        if self.scores.empty:
            return pd.DataFrame(columns=[*keys, "mean", "n"])
        return (
            self.scores.groupby(keys, sort=False)["value"].agg(mean="mean", n="count").reset_index()
        )

    def mean(self, stage: str, measure: str) -> float | None:
        """The mean of one measure over the samples it was computed for (None: never computed)."""
        s = self.scores
        values = s.loc[(s["stage"] == stage) & (s["measure"] == measure), "value"]
        return float(values.mean()) if len(values) else None

    def waterfall(self, by_query_type: bool = False) -> pd.DataFrame:
        return waterfall(self.recalls, by_query_type)

    def verdict_counts(self, by_query_type: bool = False) -> pd.DataFrame:
        order = [v.value for v in Verdict]
        keys = ["query_type", "verdict"] if by_query_type else ["verdict"]
        counts = self.verdicts.groupby(keys).size().rename("count").reset_index()
        counts["verdict"] = pd.Categorical(counts["verdict"], categories=order, ordered=True)
        return counts.sort_values(keys).reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """The summary file: everything a monitor or a comparison needs, as plain JSON."""
        verdicts = self.verdicts["verdict"]
        by_type = self.verdict_counts(by_query_type=True)
        falls = self.waterfall(by_query_type=True)
        return {
            "cofe_version": __version__,
            "run": self.run,
            "run_id": self.run_id,
            "config": self.config.model_dump(mode="json"),
            "samples": {
                "in_evalset": len(self.verdicts),
                "scored": int((~verdicts.isin([Verdict.UNSCORABLE.value])).sum()),
                "unscorable": int((verdicts == Verdict.UNSCORABLE.value).sum()),
            },
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
            "latency_seconds": _records(self.latency),
            "skipped": {
                f"{stage}/{measure}": int(count)
                for (stage, measure), count in self.skipped.groupby(["stage", "measure"])
                .size()
                .items()
            },
            "problems": {
                "count": len(self.problems),
                "first": [str(p) for p in self.problems[:50]],
            },
        }

    def write(self, directory: str | Path) -> Path:
        """Write the tables and the summary; returns the directory."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        self.scores.to_csv(out / "scores.csv", index=False)
        self.points.to_csv(out / "points.csv", index=False)
        self.skipped.to_csv(out / "skipped.csv", index=False)
        self.verdicts.to_json(
            out / "verdicts.jsonl", orient="records", lines=True, force_ascii=False
        )
        (out / "problems.txt").write_text(
            "".join(f"{p}\n" for p in self.problems), encoding="utf-8"
        )
        # the summary goes last: its presence says the other files are complete
        tmp = out / "summary.json.tmp"
        tmp.write_text(
            json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        tmp.replace(out / "summary.json")
        return out


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(frame.to_json(orient="records", force_ascii=False))
