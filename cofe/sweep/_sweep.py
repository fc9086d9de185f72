"""Run a grid of pipeline configurations on one eval set and name the best per measure.

Each cell of the grid is a run directory under the sweep's folder, named by
its parameters (``chunk_size=256,retriever=bm25``). Documents are parsed
once; the cache shares chunking, indexes and embeddings across cells; a cell
already answered is resumed (``run_pipeline`` answers only missing samples),
so a sweep killed half-way continues where it stopped. Every cell is scored
with the default settings; then, per measure, the best cell (by mean) is
tested against the runner-up on the same samples. A cell may be any pipeline
a factory builds (``--pipeline mod:factory --param kind=naive,raptor,graph``:
RAPTOR trees and property graphs through ``LlamaIndexPipeline``); the answer's
measures are also ranked over answered samples (``answered/...``), and each
cell's refusal rate is in ``sweep.json``.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cofe._atomic import write_text_atomically
from cofe._cache import Cache
from cofe._errors import InputError
from cofe.compare import (
    STEP_WORDS,
    align_cutoffs,
    holm,
    inference_for,
    measure_columns,
    measure_rank,
    refusal_table,
    small_sample_note,
    value_tables,
)
from cofe.measures import parse_measure
from cofe.results import ScoreResult, scores_folder, spreadsheet_safe
from cofe.stages import ScoreConfig, score_run


@dataclass(frozen=True)
class Cell:
    name: str
    params: dict[str, Any]


def grid_cells(grid: dict[str, list[Any]]) -> list[Cell]:
    """Every combination of the grid's values, in the order given."""
    if not grid:
        raise InputError("an empty grid: give at least one parameter with values")
    for key, values in grid.items():
        if not values:
            raise InputError(f"grid parameter {key!r} has no value")
    keys = list(grid)
    cells = []
    for combo in itertools.product(*(grid[k] for k in keys)):
        params = dict(zip(keys, combo, strict=True))
        cells.append(Cell(",".join(f"{k}={v}" for k, v in params.items()), params))
    return cells


@dataclass
class SweepResult:
    cells: list[Cell]
    results: dict[str, ScoreResult]
    best: pd.DataFrame  # per measure: best cell, runner-up, difference, p, significance
    means: pd.DataFrame  # per cell and measure: mean with CI
    alpha: float = 0.05
    out: Path | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    # why no cell can be significantly best when the eval set is too small ("": it can be)
    small_sample: str = ""
    # the tests ran over questions (too few documents): the result holds for these only
    caveat: str = ""

    @property
    def headline(self) -> str:
        """The one-line answer: which cell is best at which stage, or that none is."""
        return sweep_headline(self.best)

    def write(self, directory: str | os.PathLike[str]) -> Path:
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        spreadsheet_safe(self.best).to_csv(out / "best.csv", index=False)  # no formula cells
        spreadsheet_safe(self.means).to_csv(out / "means.csv", index=False)
        summary = {
            "cells": [{"name": c.name, "params": c.params} for c in self.cells],
            "alpha": self.alpha,
            "headline": self.headline,
            "small_sample": self.small_sample,
            "caveat": self.caveat,
            "best": json.loads(self.best.to_json(orient="records", force_ascii=False)),
            # answers that decline, per cell and query type ("answered/..." rows leave them out)
            "refusals": json.loads(
                refusal_table(self.results).to_json(orient="records", force_ascii=False)
            ),
            "seconds": self.seconds,
        }
        write_text_atomically(
            out / "sweep.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
        )
        return out


def run_sweep(
    grid: dict[str, list[Any]],
    evalset: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    docs: str | os.PathLike[str] | None = None,
    factory: Callable[..., Any] | None = None,
    cache: Cache | None = None,
    concurrency: int = 2,
    progress: bool = False,
    alpha: float = 0.05,
    resamples: int = 2000,
    log: Callable[[str], None] = print,
) -> SweepResult:
    """Run, score and compare every cell. ``factory(**params)`` builds a custom pipeline;
    by default the built-in pipeline takes the grid's parameters as ``PipelineConfig``."""
    import time

    from cofe.runner import as_pipeline, load_pipeline, run_pipeline

    cells = grid_cells(grid)
    out = Path(out)
    documents = None
    seconds: dict[str, float] = {}
    if docs is not None:
        from cofe.pipeline import parse_documents

        started = time.perf_counter()
        log(f"parsing the documents of {docs} once for {len(cells)} cells")
        parsed = parse_documents(docs, cache=cache, progress=progress)
        documents = parsed.documents
        seconds["parse"] = round(time.perf_counter() - started, 2)
        log(f"parsed {len(documents)} documents in {_duration(seconds['parse'])}")
    results: dict[str, ScoreResult] = {}
    sweep_started = time.perf_counter()
    for position, cell in enumerate(cells, start=1):
        started = time.perf_counter()
        log(
            f"[{position}/{len(cells)}] {cell.name}: building the pipeline{_eta(seconds, cells, position)}"
        )
        if factory is None:
            pipeline = load_pipeline("default", **cell.params)
        else:  # what cofe run --pipeline accepts: a cofe pipeline or a callable query -> answer
            spec = f"{getattr(factory, '__module__', '')}:{getattr(factory, '__name__', 'factory')}"
            pipeline = as_pipeline(factory(**cell.params), spec)
        log(f"[{position}/{len(cells)}] {cell.name}: answering the eval set")
        run_pipeline(
            pipeline,
            evalset,
            out / cell.name,
            documents=documents,
            cache=cache,
            concurrency=concurrency,
            progress=progress,
        )
        log(f"[{position}/{len(cells)}] {cell.name}: scoring")
        result = score_run(out / cell.name, progress=progress)
        result.write(scores_folder(out / cell.name, ScoreConfig()), replace=True)
        results[cell.name] = result
        seconds[cell.name] = round(time.perf_counter() - started, 2)
        log(
            f"[{position}/{len(cells)}] {cell.name}: done in {_duration(seconds[cell.name])} "
            f"({_duration(time.perf_counter() - sweep_started)} since the first cell)"
        )
    ranked = rank_results(results, alpha=alpha, resamples=resamples, cells=cells)
    ranked.out, ranked.seconds = out, seconds
    return ranked


def rank_results(
    results: dict[str, ScoreResult],
    *,
    alpha: float = 0.05,
    resamples: int = 2000,
    cells: list[Cell] | None = None,
) -> SweepResult:
    """Cells already scored, ranked as a sweep ranks its own (``cofe sweep --cells``: runs, or
    a replay's scored runs beside them). ``cells``: their parameters, when a grid made them."""
    means, best = rank_cells(results, alpha=alpha, resamples=resamples)
    inference = inference_for(results)
    small = sweep_small_sample(best, alpha, clustered=inference.clustered)
    if cells is None:
        cells = [Cell(name, {}) for name in results]
    return SweepResult(cells, results, best, means, alpha, None, {}, small, inference.caveat)


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _eta(seconds: dict[str, float], cells: list[Cell], position: int) -> str:
    """How long the cells left should take, from the mean of those done ("" before any)."""
    done = [seconds[c.name] for c in cells[: position - 1] if c.name in seconds]
    if not done:
        return ""
    left = (len(cells) - position + 1) * sum(done) / len(done)
    return f" (about {_duration(left)} left for {len(cells) - position + 1} cell(s))"


def rank_cells(
    results: dict[str, ScoreResult], *, alpha: float = 0.05, resamples: int = 2000, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per measure that every cell has: each cell's mean with CI; the best cell against the
    runner-up (paired; by document or over questions as ``choose_inference`` rules),
    Holm-corrected over the measures."""
    wide = value_tables(results)
    align_cutoffs(results, wide)  # cells of different top-K: ranked where all can be
    shared = set.intersection(*(set(measure_columns(w)) for w in wide.values()))
    order = sorted(
        (c for c in measure_columns(next(iter(wide.values()))) if c in shared),
        key=lambda c: measure_rank(*c),
    )  # pipeline order, the chain's
    inference = inference_for(results)

    mean_rows, best_rows = [], []
    for step, measure in order:
        higher = parse_measure(measure).HIGHER_IS_BETTER
        cis = {}
        for name, w in wide.items():
            column = w[(step, measure)].dropna()
            ci = inference.mean(
                column.to_numpy(),
                column.index,
                resamples=resamples,
                seed=seed,
            )
            cis[name] = ci
            mean_rows.append(
                {
                    "cell": name,
                    "step": step,
                    "measure": measure,
                    "mean": ci.estimate,
                    "low": ci.low,
                    "high": ci.high,
                    "n": ci.n,
                }
            )
        ranked = sorted(cis, key=lambda n: cis[n].estimate, reverse=higher)
        if len(ranked) < 2:
            continue
        best, runner = ranked[0], ranked[1]
        top = [n for n in ranked if cis[n].estimate == cis[best].estimate]  # a tie: no best
        pair = pd.concat(
            [wide[best][(step, measure)], wide[runner][(step, measure)]], axis=1, keys=["a", "b"]
        ).dropna()
        test = inference.paired(
            pair["a"].to_numpy(),
            pair["b"].to_numpy(),
            pair.index,
            resamples=resamples,
            seed=seed,
        )
        d = test.difference
        best_rows.append(
            {
                "step": step,
                "measure": measure,
                "higher_is_better": higher,
                "best": "" if len(top) > 1 else best,
                "tied": ", ".join(top) if len(top) > 1 else "",
                "best_mean": cis[best].estimate,
                "best_low": cis[best].low,
                "best_high": cis[best].high,
                "runner_up": runner,
                "runner_up_mean": cis[runner].estimate,
                "difference": d.estimate,
                "diff_low": d.low,
                "diff_high": d.high,
                "n": d.n,
                "clusters": d.clusters,
                "test": test.test,
                "p_value": test.p_value,
            }
        )
    best_table = pd.DataFrame(best_rows)
    if not best_table.empty:
        best_table["p_holm"] = holm(best_table["p_value"].tolist())
        # a tie is no difference whatever its p (the runner-up ties the leader on the mean)
        best_table["significant"] = (best_table["p_holm"] < alpha) & (best_table["tied"] == "")
    return pd.DataFrame(mean_rows), best_table


def sweep_headline(best: pd.DataFrame) -> str:
    """The one-line answer of a sweep: per step, the cell significantly best there (by the
    step's first such measure, pipeline order), or that no cell is."""
    if best.empty:
        return "no measure every cell has: nothing was ranked"
    said = []
    won = best[best["significant"].astype(bool)]
    for step, rows in won.groupby("step", sort=False):
        r = rows.iloc[0]
        said.append(
            f"{r['best']} is best at {STEP_WORDS.get(str(step), str(step))}: "
            f"{r['step']}/{r['measure']} {r['difference']:+.3f} over {r['runner_up']} "
            f"[95 % CI {r['diff_low']:+.3f}, {r['diff_high']:+.3f}]"
        )
    if not said:
        return "no cell is significantly better than the runner-up at any stage"
    if set(best["step"]) - set(won["step"]):
        said.append("no cell stands out anywhere else")
    return "; ".join(said)


def sweep_small_sample(best: pd.DataFrame, alpha: float, *, clustered: bool) -> str:
    """Why no cell can be significantly best, when the eval set is too small ("": it can)."""
    if best.empty:
        return ""
    return small_sample_note(
        int(best["clusters"].max()), int(best["n"].max()), len(best), alpha, clustered=clustered
    )
