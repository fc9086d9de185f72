"""Compare scorings of several runs of one eval set: means with CIs, paired tests, transitions.

Reads ``ScoreResult`` objects only (from ``score_run`` or ``read_scores``),
never the scorer's internals. Samples are paired by id; a measure is compared
on the samples scored in both runs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import combinations
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from cofe._atomic import replace_atomically, write_text_atomically
from cofe._errors import InputError, InputProblem
from cofe.chain import STEP_ORDER, Step, step_spec
from cofe.compare._cutoffs import align_cutoffs
from cofe.compare._inference import Inference, inference_for
from cofe.compare._stats import holm
from cofe.results import ScoreResult, answered_only, spreadsheet_safe

ALL = "all"  # the query-type label of rows over every sample
EXAMPLES = 3  # sample ids shown per transition cell


@dataclass
class Comparison:
    """The tables of a comparison (one row per run/pair x query type x measure)."""

    runs: list[str]
    means: pd.DataFrame
    differences: pd.DataFrame
    transitions: pd.DataFrame
    latency: pd.DataFrame
    clustering: str
    alpha: float
    missing: dict[str, list[str]] = field(default_factory=dict)  # run -> ids others have
    refusals: pd.DataFrame = field(default_factory=pd.DataFrame)  # per run and query type
    # compare_results(shared_samples=True): how many samples all runs share, and per run how
    # many of its own were left out (None: every sample compared)
    shared: int | None = None
    left_out: dict[str, int] = field(default_factory=dict)
    # why no difference can be significant when the eval set is too small ("": it can be)
    small_sample: str = ""
    # how questions were grouped for the tests (cofe.compare._inference: the one rule)
    inference: Inference | None = None
    # per ranked step whose cutoffs differ between runs: where it was compared, in words
    cutoffs: list[str] = field(default_factory=list)
    # per run: its (sample_id x (step, measure)) values as compared, cutoffs aligned
    values: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def caveat(self) -> str:
        """What the tests do not say ("" when nothing needs saying): questions were the
        units, so the result holds for these documents only."""
        return self.inference.caveat if self.inference is not None else ""

    def headline(self, query_type: str = ALL) -> list[str]:
        """One line per pair of runs: which run is better at which stage, or that nothing
        differs significantly (``answer_line``)."""
        d = self.differences
        if d.empty:
            return ["no measure both runs have: nothing was tested"]
        lines = []
        for (a, b), pair in d[d.query_type == query_type].groupby(["a", "b"], sort=False):
            lines.append(answer_line(pair, str(a), str(b)))
        return lines

    def to_dict(self) -> dict[str, Any]:
        def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
            rows: list[dict[str, Any]] = json.loads(
                frame.to_json(orient="records", force_ascii=False)
            )
            return rows

        return {
            "runs": self.runs,
            "alpha": self.alpha,
            "clustering": self.clustering,
            "caveat": self.caveat,
            "cutoffs": self.cutoffs,
            "missing_samples": {run: ids[:50] for run, ids in self.missing.items()},
            "missing_counts": {run: len(ids) for run, ids in self.missing.items()},
            "shared_samples": self.shared,
            "left_out": self.left_out,
            "headline": self.headline(),
            "small_sample": self.small_sample,
            "means": records(self.means),
            "differences": records(self.differences),
            "transitions": records(self.transitions),
            "latency": records(self.latency),
            "refusals": records(self.refusals),
        }

    def write(self, directory: str | os.PathLike[str]) -> Path:
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("means", "differences", "transitions", "latency", "refusals"):
            frame = spreadsheet_safe(getattr(self, name))  # no cell runs as a formula
            replace_atomically(out / f"{name}.csv", partial(_write_csv, frame))
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"
        write_text_atomically(out / "comparison.json", text)  # last: the tables are complete
        return out


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False)


def _check_same_evalset(named: dict[str, ScoreResult]) -> None:
    hashes = {name: r.evalset_sha256 for name, r in named.items() if r.evalset_sha256}
    if len(set(hashes.values())) > 1:
        first, *others = hashes.items()
        ids = {name: set(named[name].verdicts["sample_id"]) for name in hashes}
        detail = "; ".join(
            f"{name}: {sha[:12]}, {len(ids[name] - ids[first[0]])} sample(s) not in {first[0]}, "
            f"{len(ids[first[0]] - ids[name])} missing"
            for name, sha in others
            if sha != first[1]
        )
        raise InputError(
            InputProblem(
                named[first[0]].run,
                None,
                "evalset_sha256",
                f"the runs answered different eval sets ({first[0]}: {first[1][:12]}; {detail}): "
                "scores of different questions cannot be paired; compare only the samples they "
                "share with --shared-samples",
            )
        )


def _only_shared(
    named: dict[str, ScoreResult],
) -> tuple[dict[str, ScoreResult], int, dict[str, int]]:
    """Each scoring cut down to the samples every run has -- the same id, query type and
    source document in all of them (an id naming another question elsewhere is left out) --
    with the number of samples and, per run, how many of its own were left out."""
    keys = {}  # per run: each sample's query type and source, as one string
    for name, result in named.items():
        v = result.verdicts.drop_duplicates("sample_id").set_index("sample_id")
        keys[name] = v["query_type"].astype(str) + "\x1f" + v["source"].astype(str)
    first, *others = keys.values()
    ids = first.index
    for other in others:
        ids = ids.intersection(other.index)
    same = np.ones(len(ids), dtype=bool)
    for other in others:
        same &= first.reindex(ids).to_numpy() == other.reindex(ids).to_numpy()
    shared = set(ids[same])
    if not shared:
        raise InputError(
            InputProblem(
                next(iter(named.values())).run,
                None,
                None,
                "the runs share no sample (the same id, query type and source): nothing to compare",
            )
        )
    cut = {}
    for name, result in named.items():
        tables = {
            t: getattr(result, t) for t in ("scores", "points", "verdicts", "skipped", "recalls")
        }
        cut[name] = replace(
            result,
            **{t: f[f["sample_id"].isin(shared)].reset_index(drop=True) for t, f in tables.items()},
        )
    left_out = {
        name: int((~r.verdicts["sample_id"].isin(shared)).sum()) for name, r in named.items()
    }
    return cut, len(shared), left_out


ANSWERED = "answered"
"""The step label of the answer's measures over answered samples only (refusals left out):
next to ``answer`` (every sample), so a pipeline that declines more cannot look better or
worse by the questions it declined."""


def value_tables(named: dict[str, ScoreResult]) -> dict[str, pd.DataFrame]:
    """Per run: a (sample_id x (step, measure)) table of values; the answer's measures again
    under the step ``answered``, without the samples whose answer declines."""
    return {name: _values(result) for name, result in named.items()}


def _values(result: ScoreResult) -> pd.DataFrame:
    scores = result.scores
    if "refusal" in result.verdicts and len(scores):
        answered = answered_only(scores, result.verdicts)
        scores = pd.concat([scores, answered.assign(step=ANSWERED)], ignore_index=True)
    return scores.pivot_table(
        index="sample_id", columns=["step", "measure"], values="value", aggfunc="first"
    )


def measure_columns(wide: pd.DataFrame) -> list[tuple[str, str]]:
    """A value table's (step, measure) columns. pandas-stubs types every ``columns`` as an
    index of str; a value table's is a two-level index of pairs."""
    return cast("list[tuple[str, str]]", wide.columns.tolist())


def refusal_table(named: dict[str, ScoreResult]) -> pd.DataFrame:
    """Per run and query type (and ``all``): answers, refusals and the refusal rate."""
    rows = []
    for name, result in named.items():
        if "refusal" not in result.verdicts:
            continue
        view = result.view()  # the summary's one implementation of the refusal figures
        for group, entry in [
            (ALL, view.refusal_rates()),
            *view.refusal_rates(by_query_type=True).items(),
        ]:
            rows.append({"run": name, "query_type": group, **entry})
    return pd.DataFrame(rows, columns=["run", "query_type", "answered", "refused", "rate"])


def compare_results(
    results: list[ScoreResult] | dict[str, ScoreResult],
    *,
    alpha: float = 0.05,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    shared_samples: bool = False,
) -> Comparison:
    """Compare scorings of runs of the same eval set (names: ``run_id``s unless given).

    ``shared_samples``: runs of different eval sets are compared on the samples they all
    have (same id, query type and source); the comparison says how many each left out."""
    named = results if isinstance(results, dict) else _names(results)
    if len(named) < 2:
        raise InputError("compare needs at least two runs")
    n_shared: int | None = None
    left_out: dict[str, int] = {}
    if shared_samples:
        named, n_shared, left_out = _only_shared(named)
    else:
        _check_same_evalset(named)
    inference = inference_for(named)  # the one rule: by document, or over questions
    values = value_tables(named)
    cutoffs = align_cutoffs(named, values)  # differing top-K: compared where both can be
    qtypes = pd.concat(
        [r.verdicts.set_index("sample_id")["query_type"] for r in named.values()]
    ).pipe(lambda s: s[~s.index.duplicated()])
    groups = [ALL, *sorted(qtypes.unique())]
    all_ids = set().union(*(set(r.verdicts["sample_id"]) for r in named.values()))
    missing = {name: sorted(all_ids - set(r.verdicts["sample_id"])) for name, r in named.items()}
    missing = {name: ids for name, ids in missing.items() if ids}

    def in_group(frame_ids: pd.Index, group: str) -> pd.Index:
        if group == ALL:
            return frame_ids
        in_it: npt.NDArray[np.bool_] = qtypes.reindex(frame_ids).to_numpy() == group
        return frame_ids[in_it]

    mean_rows = []
    for name, wide in values.items():
        for step, measure in measure_columns(wide):
            column = wide[(step, measure)].dropna()
            for group in groups:
                ids = in_group(column.index, group)
                if len(ids) == 0:
                    continue
                ci = inference.mean(
                    column.loc[ids].to_numpy(),
                    ids,
                    level=level,
                    resamples=resamples,
                    seed=seed,
                )
                mean_rows.append(
                    {
                        "run": name,
                        "query_type": group,
                        "step": step,
                        "measure": measure,
                        "mean": ci.estimate,
                        "low": ci.low,
                        "high": ci.high,
                        "n": ci.n,
                        "clusters": ci.clusters,
                        "method": ci.method,
                    }
                )
    diff_rows = []
    # a row whose per-sample values repeat an earlier row's (answered/* when nothing was
    # refused, pool/X@K and context/X@K without a reranker) is the same test: tested once
    tested: dict[tuple[Any, ...], dict[str, Any]] = {}
    for a, b in combinations(named, 2):
        shared = [c for c in measure_columns(values[a]) if c in values[b].columns]
        for step, measure in shared:
            pair = pd.concat(
                [values[a][(step, measure)], values[b][(step, measure)]], axis=1, keys=["a", "b"]
            ).dropna()
            for group in groups:
                ids = in_group(pair.index, group)
                if len(ids) == 0:
                    continue
                va, vb = pair.loc[ids, "a"].to_numpy(), pair.loc[ids, "b"].to_numpy()
                key = (a, b, group, tuple(ids), va.tobytes(), vb.tobytes())
                if key in tested:
                    first = tested[key]
                    diff_rows.append(
                        {
                            **first,
                            "step": step,
                            "measure": measure,
                            "same_test_as": f"{first['step']}/{first['measure']}",
                        }
                    )
                    continue
                test = inference.paired(
                    va,
                    vb,
                    ids,
                    level=level,
                    resamples=resamples,
                    seed=seed,
                )
                d = test.difference
                diff_rows.append(
                    {
                        "a": a,
                        "b": b,
                        "query_type": group,
                        "step": step,
                        "measure": measure,
                        "difference": d.estimate,
                        "low": d.low,
                        "high": d.high,
                        "n": d.n,
                        "clusters": d.clusters,
                        "a_better": test.a_better,
                        "b_better": test.b_better,
                        "test": test.test,
                        "p_value": test.p_value,
                        "same_test_as": "",
                    }
                )
                tested[key] = diff_rows[-1]
    differences = pd.DataFrame(diff_rows)
    small = ""
    if not differences.empty:
        differences["p_holm"] = _holm_distinct(differences)
        differences["significant"] = differences["p_holm"] < alpha
        distinct = differences[differences.same_test_as == ""]
        small = small_sample_note(
            int(distinct["clusters"].max()),
            int(distinct["n"].max()),
            len(distinct),
            alpha,
            clustered=inference.clustered,
        )
        differences = in_pipeline_order(differences)
    return Comparison(
        runs=list(named),
        means=in_pipeline_order(pd.DataFrame(mean_rows)),
        differences=differences,
        transitions=_transitions(named),
        latency=_latency(named),
        clustering=inference.description,
        alpha=alpha,
        missing=missing,
        refusals=refusal_table(named),
        shared=n_shared,
        left_out=left_out,
        small_sample=small,
        inference=inference,
        cutoffs=cutoffs,
        values=values,
    )


def step_rank(step: str) -> float:
    """Where a step's rows go: the chain's order (``cofe.chain.STEPS``), ``answered`` right
    after ``answer``, a step the chain does not declare last."""
    if step == ANSWERED:
        return STEP_ORDER[Step.ANSWER] + 0.5
    try:
        return STEP_ORDER[Step(step)]
    except ValueError:
        return len(STEP_ORDER)


def measure_rank(step: str, measure: str) -> tuple[float, int, str, int]:
    """A (step, measure) row's place: pipeline order, then the step's headline measure,
    then by name, a cutoff by its number (@4 before @30)."""
    name, _, cutoff = measure.partition("@")
    try:
        headline = step_spec(ANSWER_STEP if step == ANSWERED else step).headline
    except ValueError:
        headline = None
    return (
        step_rank(step),
        0 if name == headline else 1,
        name,
        int(cutoff) if cutoff.isdigit() else -1,
    )


ANSWER_STEP = Step.ANSWER.value


def in_pipeline_order(frame: pd.DataFrame) -> pd.DataFrame:
    """A table with step and measure columns, its rows in pipeline order (stable otherwise:
    runs and query types keep their order within a measure)."""
    if frame.empty:
        return frame
    keys = [
        measure_rank(str(s), str(m)) for s, m in zip(frame["step"], frame["measure"], strict=True)
    ]
    order = sorted(range(len(frame)), key=lambda i: keys[i])
    return frame.iloc[order].reset_index(drop=True)


STEP_WORDS = {
    "parse": "parsing",
    "corpus": "chunking",
    "chunk-intact": "chunking",
    "pool": "retrieval",
    "context": "the context (retrieval and reranking)",
    "answer": "generation",
    ANSWERED: "generation (answered questions only)",
}


def _better(measure: str) -> bool:
    """Whether a measure's higher values are better (a measure no longer registered: yes)."""
    from cofe.measures import parse_measure

    try:
        return bool(parse_measure(measure).HIGHER_IS_BETTER)
    except (ValueError, KeyError):
        return True


def answer_line(pair: pd.DataFrame, a: str, b: str) -> str:
    """The one-line answer for a pair's difference rows (one query type): per step with a
    significant difference, the better run and by how much in the step's first significant
    measure (pipeline order, the headline first); else that nothing differs significantly."""
    pair = in_pipeline_order(pair[pair.same_test_as == ""])
    said: list[str] = []
    for step, rows in pair[pair.significant.astype(bool)].groupby("step", sort=False):
        records = rows.to_dict("records")
        winners = {
            a if (float(r["difference"]) > 0) == _better(str(r["measure"])) else b for r in records
        }
        where = STEP_WORDS.get(str(step), str(step))
        if len(winners) > 1:
            said.append(f"{a} and {b} each better at {where} by a different measure")
            continue
        winner, first = winners.pop(), records[0]
        sign = 1.0 if winner == a else -1.0
        low, high = sorted((sign * float(first["low"]), sign * float(first["high"])))
        loser = b if winner == a else a
        said.append(
            f"{winner} is better at {where}: {first['step']}/{first['measure']} "
            f"{sign * float(first['difference']):+.3f} over {loser} "
            f"[95 % CI {low:+.3f}, {high:+.3f}]"
        )
    if not said:
        return f"{a} vs {b}: no significant difference at any stage"
    tested = {str(s) for s in pair["step"]}
    if tested - set(pair.loc[pair.significant.astype(bool), "step"].astype(str)):
        said.append("nothing else changed significantly")
    return "; ".join(said)


def small_sample_note(
    units: int, samples: int, tests: int, alpha: float, *, clustered: bool
) -> str:
    """Why no difference can be significant, when the eval set is too small for it ("" when
    one can): a paired test over ``units`` independent units (source documents, or samples)
    can give no p below 2 / 2^units -- all units' differences of one sign --, and Holm
    multiplies the smallest p by the number of tests."""
    if units < 1 or tests < 1:
        return ""
    floor = 2.0 ** (1 - units)
    if floor * tests < alpha:
        return ""
    needed = units
    while 2.0 ** (1 - needed) * tests >= alpha:
        needed += 1
    what = (
        f"{units} source documents for {samples} questions (questions about one document "
        "count as one unit)"
        if clustered
        else f"{samples} questions"
    )
    return (
        f"Too few to tell: the paired tests had {what}. With {units} units the smallest p a "
        f"test can give is {floor:.3g} (every unit changing the same way), and {tests} tests "
        f"corrected together (Holm) make it at least {min(1.0, floor * tests):.3g}, above "
        f"{alpha:g}: no difference can be called significant here, however large. A confidence "
        f"interval over so few units is too narrow to trust, so one that excludes zero is a "
        f"hint, not evidence. About {needed} {'documents' if clustered else 'questions'} "
        "would be needed for the tests to reach significance."
    )


def _holm_distinct(differences: pd.DataFrame) -> list[float]:
    """Holm over the distinct tests (each counted once); a row repeating an earlier test's
    values gets that test's adjusted p-value."""
    distinct = differences["same_test_as"] == ""
    adjusted = dict(
        zip(
            differences.index[distinct],
            holm(differences.loc[distinct, "p_value"].tolist()),
            strict=True,
        )
    )
    first = {
        (r.a, r.b, r.query_type, f"{r.step}/{r.measure}"): i
        for i, r in differences[distinct].iterrows()
    }
    return [
        adjusted[i] if same == "" else adjusted[first[(r.a, r.b, r.query_type, same)]]
        for (i, r), same in zip(differences.iterrows(), differences["same_test_as"], strict=True)
    ]


def _names(results: list[ScoreResult]) -> dict[str, ScoreResult]:
    named: dict[str, ScoreResult] = {}
    for position, result in enumerate(results, start=1):
        name = result.run_id or f"run{position}"
        if name in named:
            name = f"{name}#{position}"
        named[name] = result
    return named


def _transitions(named: dict[str, ScoreResult]) -> pd.DataFrame:
    """For each pair of runs: how many samples went from one verdict to another."""
    rows = []
    for a, b in combinations(named, 2):
        pair = pd.concat(
            [
                named[a].verdicts.set_index("sample_id")["verdict"],
                named[b].verdicts.set_index("sample_id")["verdict"],
            ],
            axis=1,
            keys=["from", "to"],
        ).dropna()
        for (was, now), group in pair.groupby(["from", "to"], sort=True):
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "from": was,
                    "to": now,
                    "count": len(group),
                    "examples": " ".join(group.index[:EXAMPLES]),
                }
            )
    return pd.DataFrame(rows, columns=["a", "b", "from", "to", "count", "examples"])


def _latency(named: dict[str, ScoreResult]) -> pd.DataFrame:
    frames = [r.latency.assign(run=name) for name, r in named.items() if not r.latency.empty]
    if not frames:
        return pd.DataFrame(columns=["run", "stage", "p50", "p95", "n"])
    return pd.concat(frames)[["run", "stage", "p50", "p95", "n"]].reset_index(drop=True)
