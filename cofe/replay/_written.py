"""Each oracle's answers as a scored run beside the run: ``RUN/replay/<oracle>/``.

A replay folder holds the run's scoring with the replayed samples' rows replaced by their
scoring under one oracle (same sample ids, same scorer and settings); samples the pass did not
replay, could not find an oracle for, or whose replay failed keep the run's own rows. It is an
ordinary results folder, so ``cofe compare RUN RUN/replay/context`` pairs the samples and gives
the gain with compare's own statistics, and ``rank_cells`` (sweep) ranks it like any cell:
the replay adds no statistics of its own and no second reader of results.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cofe.results import ScoreResult

if TYPE_CHECKING:
    import pandas as pd

    from cofe.replay._replay import Oracle

_TABLES = ("scores", "points", "verdicts", "skipped", "recalls")


def split_by_oracle(scored: ScoreResult, oracles: list[Oracle]) -> dict[Oracle, ScoreResult]:
    """A scoring of replays named ``id@oracle`` cut into one scoring per oracle, under the
    samples' own ids."""
    out = {}
    for oracle in oracles:
        suffix = f"@{oracle.value}"
        tables = {}
        for name in _TABLES:
            frame = getattr(scored, name)
            ids = frame["sample_id"].astype(str)
            mine = frame[ids.str.endswith(suffix)].copy()
            mine["sample_id"] = mine["sample_id"].astype(str).str.slice(0, -len(suffix))
            tables[name] = mine
        out[oracle] = ScoreResult(
            config=scored.config,
            run=scored.run,
            run_id=scored.run_id,
            shape=scored.shape,
            latency=scored.latency,
            **tables,
        )
    return out


def replayed_result(
    run: ScoreResult, replayed: ScoreResult, oracle: Oracle, scores: str
) -> ScoreResult:
    """The run's scoring with the replayed samples' rows taken from ``replayed``."""
    import pandas as pd

    ids = set(replayed.verdicts["sample_id"].astype(str))
    order = {sid: k for k, sid in enumerate(run.verdicts["sample_id"].astype(str))}

    def merged(name: str) -> pd.DataFrame:
        own = getattr(run, name)
        kept = own[~own["sample_id"].astype(str).isin(ids)]
        frame = pd.concat([kept, getattr(replayed, name)], ignore_index=True)
        # the run's sample order, stable within a sample (a reader sees the same layout)
        rank = frame["sample_id"].astype(str).map(order).fillna(len(order))
        ordered: pd.DataFrame = frame.iloc[rank.argsort(kind="stable")].reset_index(drop=True)
        return ordered

    shape = dict(run.shape)
    shape["replay"] = {
        "oracle": oracle.value,
        "scores": scores,
        "replayed": sorted(ids),
        # what a reader of the folder must know: the rest is the run's own scoring
        "note": "replayed samples scored from the oracle's answers; the others are the run's "
        "own rows; latency is the run's",
    }
    return ScoreResult(
        config=run.config,
        run=run.run,
        run_id=f"{run.run_id}@{oracle.value}",
        shape=shape,
        latency=run.latency,
        problems=list(run.problems),
        evalset_sha256=run.evalset_sha256,  # the same eval set: compare pairs without a flag
        **{name: merged(name) for name in _TABLES},
    ).normalized()


def write_replayed_runs(
    run: ScoreResult, scored: dict[Oracle, ScoreResult], folder: Path, *, scores_dir: str
) -> dict[Oracle, Path]:
    """Write ``folder/<oracle>/`` for each oracle that replayed at least one sample."""
    written = {}
    for oracle, replayed in scored.items():
        if replayed.verdicts.empty:
            continue
        result = replayed_result(run, replayed, oracle, scores_dir)
        # replaced whole: the folder is the replay's own, rewritten by each pass
        written[oracle] = result.write(folder / oracle.value, replace=True)
    return written
